// Package storetest is test support shared by the engine's, the CLI's and
// the daemon's tests of a whole store on disk: reading every file with its
// zstd frames decompressed, and every sstable's keys and values through
// Pebble's own reader, whatever compression Pebble chose for a block
// (Images, Find: proof that no byte of a forgotten record is left), and
// damaging one data block of the log (DamageLogBlock).
// Library code never imports it.
package storetest
