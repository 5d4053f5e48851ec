// Package porter2 is the English Porter2 stemmer of the BM25 analyzer and
// the hash embedder, computed on bytes.
//
// Stem returns exactly what github.com/kljensen/snowball's english.Stem
// returns, which stays the reference: words of ASCII lower-case letters
// (nearly every English word the analyzer and the embedder stem) are
// stemmed here, in a stack buffer, with each suffix list matched as bytes;
// any other word goes to the library. The library converts the word and
// every suffix it tries to []rune and allocates for each: in a process
// whose memos are empty (a new process's first recall) its stemming was
// half of the hash embedder's time on the Zipf corpus.
//
// Equality with the library is the package's contract, tested on every
// word of up to four letters, on words built from the algorithm's
// suffixes, on the vocabularies of the test corpora, and by fuzzing
// (FuzzStem). A change of the library's version is a change of stems
// (and of the index's terms and the embedder's vectors): the tests then
// say which words differ.
package porter2
