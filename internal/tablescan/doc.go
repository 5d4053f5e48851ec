// Package tablescan reads a Pebble sstable's keys and values as Pebble's
// own reader returns them, for the tests that look for forgotten data in
// every file of a store: a block Pebble compressed with its fastest
// compression holds a repeated string only as a back-reference, so a
// scan of the file's raw bytes can miss it. It imports nothing of
// lazymem's, so any package's tests can use it.
package tablescan
