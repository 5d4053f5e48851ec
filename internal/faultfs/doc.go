// Package faultfs holds the filesystem faults that the tests of
// lazymem's Pebble stores share (segment's log, engine's embedding cache
// and core store, the daemon): FullDisk, a switch that fails every write
// with ENOSPC as a full disk does; ManifestSyncHold, which holds a
// MANIFEST sync and then fails it, so that Pebble's logger parks the flush
// waiting on it; and Child, which runs such a park test in a child
// process, since the parked goroutine outlives it.
//
// It imports no package of this module, so segment's own tests can use it
// (internal/storetest imports segment).
package faultfs
