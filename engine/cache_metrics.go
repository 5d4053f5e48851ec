package engine

// CacheMetrics describes the embedding cache.
type CacheMetrics struct {
	Embedder   string // embedder name (part of every key)
	MemHits    uint64 // lookups answered from memory
	DiskHits   uint64 // lookups answered from the disk tier (Pebble, or a vector on its way there)
	Computed   uint64 // texts embedded (misses of both tiers)
	Shared     uint64 // misses answered by another recall's embedding in flight
	EmbedCalls uint64 // batched calls to the embedder
	MemBytes   int64  // cost of the entries in memory (ristretto)
	MemEvicted uint64 // entries evicted from memory
	MemDropped uint64 // sets ristretto dropped or rejected
	// DiskSkipped counts vectors kept in memory only because the disk tier
	// took no writes: stopped by a full disk, or the disk had less than
	// 64 MiB free.
	DiskSkipped uint64
	// DiskError is the full disk that stopped the disk tier's writes until
	// space returns ("" when it takes writes); DiskReopens counts the
	// times it was opened again after one.
	DiskError   string
	DiskReopens uint64
	// DiskReset is why Open emptied the on-disk tier, which did not open
	// (a crash during Pebble's MANIFEST switch, a damaged file): the
	// cache is derived data. "" when it opened.
	DiskReset string
}

func (c *vecCache) metrics() CacheMetrics {
	m := CacheMetrics{
		Embedder:    c.name,
		MemHits:     c.memHits.Load(),
		DiskHits:    c.diskHits.Load(),
		Computed:    c.computed.Load(),
		Shared:      c.shared.Load(),
		EmbedCalls:  c.calls.Load(),
		DiskReset:   c.diskReset,
		DiskSkipped: c.diskSkipped.Load(),
		DiskReopens: c.diskReopens.Load(),
	}
	if p := c.diskErr.Load(); p != nil {
		m.DiskError = (*p).Error()
	}
	if c.mem != nil && c.mem.Metrics != nil {
		rm := c.mem.Metrics
		m.MemBytes = int64(rm.CostAdded()) - int64(rm.CostEvicted())
		m.MemEvicted = rm.KeysEvicted()
		m.MemDropped = rm.SetsDropped() + rm.SetsRejected()
	}
	return m
}
