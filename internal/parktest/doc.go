// Package parktest holds what the tests of a Pebble store's park handling
// share (segment's log, engine's embedding cache and core store): a
// filesystem hook that holds a MANIFEST sync and then fails it, so that
// Pebble's logger parks the flush waiting on it, and a runner that puts
// such a test in a child process, since the parked goroutine outlives it.
//
// It imports no package of this module, so segment's own tests can use it
// (internal/storetest imports segment).
package parktest
