// Package testembed holds test doubles of embedders shared by the
// packages' tests: Noisy, which makes a perfect test embedder (an oracle
// that gives a question and its evidence the same direction) imperfect by
// a known amount, so that a test can ask how the engine around an
// embedder fares as the embedder's quality falls.
package testembed
