package segment

// tailMirror is an in-memory copy of the newest unsealed tail records, so
// that sealing packs a segment from memory instead of iterating Pebble's
// tail keys. Profile (engine ingest, 1M records): half of sealing was
// Pebble's NewIter re-fragmenting the memtable's range deletions, one more
// per seal, every time; the iteration and the copy out of it were most of
// the rest.
//
// Pebble stays the source of truth: the mirror holds copies of records that
// are already durable there, and a seal writes the same bytes whichever way
// it read them. The mirror covers ids [lo, lo+len(recs)), always ending at
// the last committed id; it starts empty at Open (the recovered tail is
// sealed through the iterator) and restarts empty, at the next id, when it
// would exceed maxBytes (sealing far behind, or turned off): seals read
// Pebble until they reach it again. Guarded by Log.segMu.
type tailMirror struct {
	lo    uint64
	recs  []tailRec
	bytes int
	max   int
}

// tailRec is one mirrored record: its payload (shared, never written after
// it is mirrored) and whether it was deleted since.
type tailRec struct {
	p    []byte
	dead bool
}

// mirrorSegments is how many full segments' worth of bytes the mirror may
// hold before it restarts (2 MiB with the default 32 KiB segments).
const mirrorSegments = 64

// copyGroup copies a committed group's payloads into one buffer and returns
// them as records for add; it runs before segMu is taken.
func copyGroup(group []*appendReq, nbytes int64, scratch []tailRec) []tailRec {
	buf := make([]byte, 0, nbytes)
	recs := scratch[:0]
	for _, r := range group {
		for _, p := range r.payloads {
			start := len(buf)
			buf = append(buf, p...)
			recs = append(recs, tailRec{p: buf[start:len(buf):len(buf)]})
		}
	}
	return recs
}

// add mirrors the records of ids [first, first+len(recs)): the group just
// committed. A gap (the mirror restarted, or this is the first group after
// Open) or an overflow restarts it.
func (m *tailMirror) add(first uint64, recs []tailRec, nbytes int) {
	if m.lo+uint64(len(m.recs)) != first || m.bytes+nbytes > m.max {
		clear(m.recs)
		m.recs, m.bytes = m.recs[:0], 0
		m.lo = first
		if nbytes > m.max {
			m.lo = first + uint64(len(recs))
			return
		}
	}
	m.recs = append(m.recs, recs...)
	m.bytes += nbytes
}

// get returns the mirrored records from id first on, or nil when the
// mirror does not start at or before first.
func (m *tailMirror) get(first uint64) []tailRec {
	if first < m.lo || first >= m.lo+uint64(len(m.recs)) {
		return nil
	}
	return m.recs[first-m.lo:]
}

// markDeleted records that tail record id was deleted.
func (m *tailMirror) markDeleted(id uint64) {
	if id >= m.lo && id < m.lo+uint64(len(m.recs)) {
		m.recs[id-m.lo].dead = true
	}
}

// trim forgets the records below sealed.
func (m *tailMirror) trim(sealed uint64) {
	if sealed <= m.lo {
		return
	}
	k := int(min(sealed-m.lo, uint64(len(m.recs))))
	for _, r := range m.recs[:k] {
		m.bytes -= len(r.p)
	}
	n := copy(m.recs, m.recs[k:])
	clear(m.recs[n:])
	m.recs = m.recs[:n]
	m.lo += uint64(k)
	if n == 0 {
		m.lo = sealed
	}
}
