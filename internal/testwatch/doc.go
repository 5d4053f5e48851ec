// Package testwatch makes a hung test name itself at the end of its
// package's output.
//
// When a test binary reaches its -test.timeout, Go prints the tests still
// running first and then every goroutine's stack; a CI log that keeps only
// the tail of the output then shows Pebble's idle goroutines and not the
// test that hung. Start arms a timer a little before the timeout that
// prints the stacks of the goroutines running this module's code (the
// test functions and what they wait on) and, last, a summary naming each
// test function found on a stack, then exits with status 2. Tests never
// see it unless they hang.
package testwatch
