package segment

import "github.com/cockroachdb/pebble/v2"

// CompactionScheduler returns the compaction scheduler every Pebble store
// of lazymem uses (Options.Experimental.CompactionScheduler): one that
// grants every compaction Pebble picks at once, and starts no goroutine.
//
// Pebble's own schedulers admit a fixed number of compactions at a time
// (one, by default) and keep a compaction they picked but could not start
// in a cache until a slot frees. Pebble v2.1.7 does not drop a manual
// compaction from that cache when DB.Compact gives it up (its context is
// canceled, or an earlier part of the same Compact failed): the cached
// pick runs later and Pebble panics ("did not find manual compaction with
// id N"), ending the process. Compact is canceled on purpose when the
// disk is full (compactAll) and by a caller's context (a request's), so
// the cache must stay empty: with every pick granted, nothing is ever
// cached. The price is that compactions on disjoint files may run
// together; the picker starts one only when there is work for it.
func CompactionScheduler() pebble.CompactionScheduler { return grantAll{} }

// grantAll is CompactionScheduler's scheduler and its grant handle.
type grantAll struct{}

func (grantAll) Register(int, pebble.DBForCompaction) {}
func (grantAll) Unregister()                          {}
func (grantAll) UpdateGetAllowedWithoutPermission()   {}
func (grantAll) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	return true, grantAll{}
}

// The grant handle's methods: nothing to account for.
func (grantAll) Started()                                          {}
func (grantAll) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (grantAll) CumulativeStats(pebble.CompactionGrantHandleStats) {}
func (grantAll) Done()                                             {}
