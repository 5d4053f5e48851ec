package wire

import "github.com/lazymem/lazymem/engine"

// Metrics is the JSON form of engine.Metrics (GET /v1/stats for an admin,
// lazymem stats --json): the engine's fields in snake case, grouped as
// the engine groups them.
type Metrics struct {
	Scope            string        `json:"scope"` // "store"
	Appended         uint64        `json:"appended"`
	Recalls          uint64        `json:"recalls"`
	IndexErrors      uint64        `json:"index_errors"`
	BackgroundErrors uint64        `json:"background_errors"`
	IndexRepaired    string        `json:"index_repaired,omitempty"`
	StoreFormat      uint32        `json:"store_format"`
	Forgotten        uint64        `json:"forgotten"`   // records forgotten since open
	Compactions      uint64        `json:"compactions"` // purges since open
	Retention        Retention     `json:"retention"`
	Log              LogMetrics    `json:"log"`
	Index            IndexMetrics  `json:"index"`
	Cache            CacheMetrics  `json:"cache"`
	WorkingMemory    WorkingMemory `json:"working_memory"`
}

// WorkingMemory is engine.WorkingMemoryMetrics in snake case.
type WorkingMemory struct {
	Queued   uint64 `json:"queued"`
	Dropped  uint64 `json:"dropped"`
	Embedded uint64 `json:"embedded"`
	Cached   uint64 `json:"cached"`
	Skipped  uint64 `json:"skipped"`
	Pending  int    `json:"pending"`
}

// Retention is engine.RetentionMetrics in snake case.
type Retention struct {
	Passes         uint64 `json:"passes"`
	Expired        uint64 `json:"expired"`
	DroppedRecords uint64 `json:"dropped_records"`
	Pinned         uint64 `json:"pinned"`
}

// LogMetrics is segment.Metrics in snake case.
type LogMetrics struct {
	Records        uint64 `json:"records"` // ids assigned: next_id - 1
	NextID         uint64 `json:"next_id"`
	Appended       uint64 `json:"appended"`
	Groups         uint64 `json:"groups"`
	TailRecords    int64  `json:"tail_records"`
	Segments       int    `json:"segments"`
	SealedRecords  uint64 `json:"sealed_records"`
	RawBytes       int64  `json:"raw_bytes"`
	SegmentBytes   int64  `json:"segment_bytes"`
	TailBytes      int64  `json:"tail_bytes"`
	DiskBytes      uint64 `json:"disk_bytes"`
	Tombstones     uint64 `json:"tombstones"`
	Deleted        uint64 `json:"deleted"`
	DroppedRecords uint64 `json:"dropped_records"`
	CacheHits      uint64 `json:"cache_hits"`
	CacheMisses    uint64 `json:"cache_misses"`
	CacheBytes     int64  `json:"cache_bytes"`
	// Corruptions counts reads that found a damaged record since open;
	// PebbleCorruptions Pebble's reports of damaged blocks or files.
	Corruptions       uint64 `json:"corruptions"`
	PebbleCorruptions uint64 `json:"pebble_corruptions"`
	// ReadOnly: writes are refused (a full disk); WriteError says why.
	ReadOnly   bool   `json:"read_only"`
	WriteError string `json:"write_error,omitempty"`
	Reopens    uint64 `json:"reopens"` // reopens of Pebble after a full disk
	// SealAssists counts segments appends sealed because the sealer fell
	// behind; AssistTimeouts appends that stopped waiting for the sealers'
	// lock after the bound (both since open).
	SealAssists    uint64 `json:"seal_assists"`
	AssistTimeouts uint64 `json:"assist_timeouts"`
}

// IndexMetrics is index.Metrics in snake case; repairs are their
// descriptions.
type IndexMetrics struct {
	Docs          uint64   `json:"docs"`
	Deleted       uint64   `json:"deleted"`
	Segments      int      `json:"segments"`
	MemDocs       uint64   `json:"mem_docs"`
	SegmentBytes  int64    `json:"segment_bytes"`
	Flushes       int64    `json:"flushes"`
	Merges        int64    `json:"merges"`
	MergeErrors   int64    `json:"merge_errors"`
	FlushErrors   int64    `json:"flush_errors"`
	Rebuilt       uint64   `json:"rebuilt"`
	Dropped       int      `json:"dropped"`
	LateDocs      int      `json:"late_docs"`
	Amended       uint64   `json:"amended"`
	Terms         int      `json:"terms"`
	Repairs       []string `json:"repairs"`
	ContextErrors int64    `json:"context_errors"`
	// FilterCacheBytes and FilterCacheEntries: what the index keeps of
	// searched filters (index.Options.FilterCacheBytes).
	FilterCacheBytes   int64 `json:"filter_cache_bytes"`
	FilterCacheEntries int   `json:"filter_cache_entries"`
}

// CacheMetrics is engine.CacheMetrics in snake case.
type CacheMetrics struct {
	Embedder   string `json:"embedder"`
	MemHits    uint64 `json:"mem_hits"`
	DiskHits   uint64 `json:"disk_hits"`
	Computed   uint64 `json:"computed"`
	Shared     uint64 `json:"shared"`
	EmbedCalls uint64 `json:"embed_calls"`
	MemBytes   int64  `json:"mem_bytes"`
	MemEvicted uint64 `json:"mem_evicted"`
	MemDropped uint64 `json:"mem_dropped"`
	DiskReset  string `json:"disk_reset,omitempty"` // why the open emptied the disk tier
	// DiskSkipped: vectors kept in memory only (the disk tier took no
	// writes); DiskError: the full disk that stopped its writes ("" when
	// it takes them); DiskReopens: times it opened again after one.
	DiskSkipped uint64 `json:"disk_skipped"`
	DiskError   string `json:"disk_error,omitempty"`
	DiskReopens uint64 `json:"disk_reopens"`
}

// AgentStats is GET /v1/stats for a key limited to some agents: the
// store-wide numbers would tell one tenant about the others' activity, so
// it counts each of the key's agents' records only.
type AgentStats struct {
	Scope  string       `json:"scope"` // "agents"
	Agents []AgentCount `json:"agents"`
	// Quota is the key's quota per agent; left out when it has none.
	Quota *Quota `json:"quota,omitempty"`
}

// Quota is a key's quota per agent (engine.Quota); 0 is unlimited.
type Quota struct {
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
}

// AgentCount is one agent's share of the store.
type AgentCount struct {
	Agent   string `json:"agent"`
	Records int    `json:"records"` // live records
}

// FromMetrics converts m. Repairs is never null in the JSON.
func FromMetrics(m engine.Metrics) Metrics {
	l, x, c := m.Log, m.Index, m.Cache
	out := Metrics{
		Scope: "store", Appended: m.Appended, Recalls: m.Recalls, IndexErrors: m.IndexErrors,
		BackgroundErrors: m.BackgroundErrors, IndexRepaired: m.IndexRepaired, StoreFormat: m.StoreFormat,
		Forgotten: m.Forgotten, Compactions: m.Compactions,
		Retention: Retention{Passes: m.Retention.Passes, Expired: m.Retention.Expired,
			DroppedRecords: m.Retention.DroppedRecords, Pinned: m.Retention.Pinned},
		Log: LogMetrics{
			NextID: l.Next, Appended: l.Appended, Groups: l.Groups, TailRecords: l.TailRecords,
			Segments: l.Segments, SealedRecords: l.SealedRecords, RawBytes: l.RawBytes, SegmentBytes: l.SegmentBytes,
			TailBytes: l.TailBytes, DiskBytes: l.DiskBytes, Tombstones: l.Tombstones, Deleted: l.Deleted,
			DroppedRecords: l.DroppedRecords, CacheHits: l.CacheHits, CacheMisses: l.CacheMisses, CacheBytes: l.CacheBytes,
			Corruptions: l.Corruptions, PebbleCorruptions: l.PebbleCorruptions, ReadOnly: l.ReadOnly,
			WriteError: l.WriteError, Reopens: l.Reopens, SealAssists: l.SealAssists, AssistTimeouts: l.AssistTimeouts,
		},
		Index: IndexMetrics{
			Docs: x.Docs, Deleted: x.Deleted, Segments: x.Segments, MemDocs: x.MemDocs, SegmentBytes: x.SegmentBytes,
			Flushes: x.Flushes, Merges: x.Merges, MergeErrors: x.MergeErrors, FlushErrors: x.FlushErrors,
			Rebuilt: x.Rebuilt, Dropped: x.Dropped, LateDocs: x.LateDocs, Amended: x.Amended, Terms: x.Terms, Repairs: []string{},
			ContextErrors: x.ContextErrors, FilterCacheBytes: x.FilterCacheBytes, FilterCacheEntries: x.FilterCacheEntries,
		},
		Cache: CacheMetrics{
			Embedder: c.Embedder, MemHits: c.MemHits, DiskHits: c.DiskHits, Computed: c.Computed, Shared: c.Shared,
			EmbedCalls: c.EmbedCalls, MemBytes: c.MemBytes, MemEvicted: c.MemEvicted, MemDropped: c.MemDropped,
			DiskReset: c.DiskReset, DiskSkipped: c.DiskSkipped, DiskError: c.DiskError, DiskReopens: c.DiskReopens,
		},
		WorkingMemory: WorkingMemory{Queued: m.WorkingMemory.Queued, Dropped: m.WorkingMemory.Dropped,
			Embedded: m.WorkingMemory.Embedded, Cached: m.WorkingMemory.Cached, Skipped: m.WorkingMemory.Skipped,
			Pending: m.WorkingMemory.Pending},
	}
	if l.Next > 0 {
		out.Log.Records = l.Next - 1
	}
	for _, r := range x.Repairs {
		out.Index.Repairs = append(out.Index.Repairs, r.String())
	}
	return out
}
