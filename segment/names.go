package segment

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
)

// The log's name table (segment version 4). Agent, session, role and
// metadata strings repeat record after record and segment after segment:
// a version-3 head restated every one in each segment it appeared in (on
// the Zipf corpus the agents and sessions columns were a third of the
// heads' stored bytes; on the workload's, metadata strings were its
// largest column). A version-4 head refers to them by id instead: each distinct
// string is stored once in the log, under 'n' id (the string and a
// crc32c), written in the same batch as the first segment that uses it.
// Ids start at 1 and grow while the log is open; an id Compact deleted
// is not handed out again before a restart (a read in flight may hold a
// value from before the compaction), and after one only if it was the
// highest (no stored value refers to it any more).
//
// Forgetting: Compact, once it has rewritten the segments holding deleted
// records, deletes the names no version-4 head refers to (gcNames; the
// segments using each name are counted, usage.go), before Pebble's flush
// and compaction rewrite the files; the bytes of a forgotten agent's or
// session's name then leave the store with its records.

// nameTable is the log's names in memory. ids and next are touched only
// under Log.sealMu (seals and compactions). byID is the names by id, a
// slice read without a lock: a decoder resolves every name its head walk
// meets (on the Zipf corpus at 1M records ~7,000 a cold recall, 0.4 ms of
// its CPU as map lookups under a shared lock: docs/benchmarks/cold.md),
// and a slice indexed by id makes each one load. Writers (add, remove)
// hold mu and publish a new slice header; an entry a reader may see is
// never written in place (add appends past the published length, or
// copies; remove copies), so a reader's snapshot stays as it was. Ids are
// dense (assigned from 1 up); an id far past the table's size (only a
// damaged key at Open) is kept in far instead of growing the slice to
// it. readers is held shared by every read that decodes a segment value
// fetched from Pebble, so that gcNames, which takes it exclusively,
// never removes a name a read in flight may still resolve (the read may
// hold a value from before the compaction rewrote it).
type nameTable struct {
	mu       sync.RWMutex
	byID     atomic.Pointer[[]nameEntry]
	far      map[uint64][]byte // under mu; hasFar says it is not empty
	hasFar   atomic.Bool
	n        int // names held, under mu
	ids      map[string]uint64
	next     uint64 // the next id to assign (above every id the table held since Open)
	bytes    int    // the names' bytes
	maxBytes int    // metadata strings past it stay in the heads (maxNameBytes; tests lower it)
	readers  sync.RWMutex
}

// nameEntry is one slot of nameTable.byID: the name, if ok.
type nameEntry struct {
	s  []byte
	ok bool
}

// nameFarSlack: an id more than twice the table's size plus this past
// its end goes to nameTable.far (a damaged key at Open must not size the
// slice).
const nameFarSlack = 1 << 16

// gcWait bounds how long gcNames waits for the reads in flight.
const gcWait = 10 * time.Second

func newNameTable() *nameTable {
	return &nameTable{ids: map[string]uint64{}, next: 1, maxBytes: maxNameBytes}
}

// get returns the name with id, and false when the table has none.
func (t *nameTable) get(id uint64) ([]byte, bool) {
	if p := t.byID.Load(); p != nil && id < uint64(len(*p)) {
		e := (*p)[id]
		return e.s, e.ok
	}
	if !t.hasFar.Load() {
		return nil, false
	}
	t.mu.RLock()
	s, ok := t.far[id]
	t.mu.RUnlock()
	return s, ok
}

// each calls fn for every name held; under mu (either way).
func (t *nameTable) each(fn func(id uint64, s []byte)) {
	if p := t.byID.Load(); p != nil {
		for id, e := range *p {
			if e.ok {
				fn(uint64(id), e.s)
			}
		}
	}
	for id, s := range t.far {
		fn(id, s)
	}
}

// size returns the number of names held.
func (t *nameTable) size() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.n
}

// remove drops the names ids. Callers hold mu.
func (t *nameTable) remove(ids []uint64) {
	var cur []nameEntry
	if p := t.byID.Load(); p != nil {
		cur = *p
	}
	s := slices.Clone(cur) // readers keep the old slice
	for _, id := range ids {
		if id < uint64(len(s)) {
			if e := s[id]; e.ok {
				t.bytes -= len(e.s)
				delete(t.ids, string(e.s))
				t.n--
				s[id] = nameEntry{}
			}
			continue
		}
		if b, ok := t.far[id]; ok {
			t.bytes -= len(b)
			delete(t.ids, string(b))
			t.n--
			delete(t.far, id)
		}
	}
	t.byID.Store(&s)
	t.hasFar.Store(len(t.far) > 0)
}

// pendingName is a name a segment being sealed uses for the first time:
// stored with the segment, added to the table once its batch commits.
type pendingName struct {
	id uint64
	s  string
}

// add makes the names of a committed seal known. Callers hold sealMu.
func (t *nameTable) add(names []pendingName) {
	if len(names) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var s []nameEntry
	if p := t.byID.Load(); p != nil {
		s = *p
	}
	owned := false // s is a copy no reader has seen
	for _, n := range names {
		b := []byte(n.s)
		switch {
		case n.id < uint64(len(s)):
			// A name the table has, or had (Open reloading it): never
			// written in place.
			if !owned {
				s, owned = slices.Clone(s), true
			}
			if !s[n.id].ok {
				t.n++
			} else {
				t.bytes -= len(s[n.id].s)
			}
			s[n.id] = nameEntry{s: b, ok: true}
		case n.id <= 2*uint64(len(s))+nameFarSlack:
			if n.id >= uint64(cap(s)) {
				grown := make([]nameEntry, len(s), max(2*cap(s), int(n.id)+1, 64))
				copy(grown, s)
				s, owned = grown, true
			}
			// Past the published length: no reader looks there. The slots
			// skipped are zero (never written: the slice only grows).
			s = s[:n.id+1]
			s[n.id] = nameEntry{s: b, ok: true}
			t.n++
		default:
			if t.far == nil {
				t.far = map[uint64][]byte{}
			}
			if old, ok := t.far[n.id]; ok {
				t.bytes -= len(old)
			} else {
				t.n++
			}
			t.far[n.id] = b
			t.hasFar.Store(true)
		}
		t.bytes += len(b)
		t.ids[n.s] = n.id
		t.next = max(t.next, n.id+1)
	}
	t.byID.Store(&s)
}

// loadName appends the stored name under key k (value v) to names, at
// Open.
func loadName(names []pendingName, k, v []byte) ([]pendingName, error) {
	id, ok := keyID(k)
	if !ok || id == 0 {
		return names, &CorruptionError{Err: fmt.Errorf("%w: name key %x", ErrFormat, k)}
	}
	s, err := codec.VerifyChecksum(v)
	if err != nil {
		return names, &CorruptionError{Err: fmt.Errorf("%w: name %d: %w", ErrChecksum, id, err)}
	}
	return append(names, pendingName{id: id, s: string(s)}), nil
}

// nameValue is the stored value of a name: its bytes and a crc32c.
func nameValue(s string) []byte {
	return codec.AppendChecksum([]byte(s), []byte(s))
}

// loadNames reads the log's names at Open.
func (l *Log) loadNames(it *pebble.Iterator) error {
	var names []pendingName
	for ok := it.SeekGE([]byte{prefixName}); ok && it.Key()[0] == prefixName; ok = it.Next() {
		var err error
		if names, err = loadName(names, it.Key(), it.Value()); err != nil {
			return err
		}
	}
	l.names.add(names)
	return nil
}

// gcNames deletes every name no version-4 segment refers to, on disk and
// in memory, and clears namesStale. Callers hold sealMu (no seal adds a
// reference meanwhile).
func (l *Log) gcNames() error {
	l.namesStale = false
	if l.names.size() == 0 {
		return nil
	}
	if known, err := l.usageKnown("names"); !known {
		return err
	}
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	var drop []uint64
	l.names.mu.RLock()
	l.names.each(func(id uint64, _ []byte) {
		if l.use.names[id] == 0 {
			drop = append(drop, id)
		}
	})
	l.names.mu.RUnlock()
	if len(drop) == 0 {
		return nil
	}
	b := db.NewBatch()
	defer l.closeBatch(b)
	for _, id := range drop {
		if err := b.Delete(makeKey(prefixName, id), nil); err != nil {
			return err
		}
	}
	l.commitMu.Lock()
	err = l.commitLocked(b, pebble.NoSync)
	l.commitMu.Unlock()
	if err != nil {
		return wrapWrite("compact names", err)
	}
	if !l.waitReaders(len(drop), "names") {
		return nil
	}
	l.names.mu.Lock()
	l.names.remove(drop)
	l.names.mu.Unlock()
	l.names.readers.Unlock()
	return nil
}

// waitReaders waits for the reads in flight and returns true holding
// names.readers exclusively (TryLock: a read may read again from its
// callback, which a waiting Lock would block). A read that holds on past
// gcWait (its callback waits for something this compaction holds)
// leaves the n entries (what) in memory until the next compaction; they
// are gone from the store already.
func (l *Log) waitReaders(n int, what string) bool {
	deadline := time.Now().Add(gcWait)
	for !l.names.readers.TryLock() {
		if time.Now().After(deadline) {
			l.logf("lazymem: segment: compact: %d %s kept in memory: a read held on for %v", n, what, gcWait)
			return false
		}
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// namesUsed adds the name ids the head of version-4 value v refers to.
func (c *compressor) namesUsed(first uint64, v []byte, used map[uint64]bool) error {
	f, err := parseFramed(first, v)
	if err != nil {
		return err
	}
	head, err := c.expand(f, f.head, nil, -1)
	if err != nil {
		return err
	}
	cur, err := openCursor(head, f.count)
	if err != nil {
		return &CorruptionError{Segment: first, Err: err}
	}
	defer cur.release()
	for _, col := range []int{colAgents, colSessions, colRoles} {
		base := uint64(0)
		if col == colSessions {
			base = 1 // 0: the agent's previous session
		}
		cr := &cur.cols[col]
		for cr.off < len(cr.b) && cr.err == nil {
			if cr.uvarint("name reference") == base {
				used[cr.uvarint("name id")] = true
			}
		}
		if cr.err != nil {
			return &CorruptionError{Segment: first, Err: cr.err}
		}
	}
	cr := &cur.cols[colMeta]
	if metaUsed(cr, used); cr.err != nil {
		return &CorruptionError{Segment: first, Err: cr.err}
	}
	return nil
}

// nameRef appends to column c a reference to name s (version 4) and
// returns its index in the segment's table k of names: codes below base
// are the column's own (the sessions column's 0: the session of the
// agent's previous record), base is a new entry (followed by the name's
// id in the log's table), base+1+i is entry i. Names the log does not
// have yet are pending until the seal commits.
func (e *colEncoder) nameRef(c, k int, s []byte, base uint64) uint64 {
	col := e.cols[c]
	if i, ok := e.tables[k][string(s)]; ok {
		e.cols[c] = binary.AppendUvarint(col, base+1+i)
		return i
	}
	i := uint64(len(e.tables[k]))
	e.tables[k][string(s)] = i
	id, ok := e.names.ids[string(s)]
	if !ok {
		if id, ok = e.pendingIDs[string(s)]; !ok {
			id = e.names.next + uint64(len(e.pending))
			e.pending = append(e.pending, pendingName{id: id, s: string(s)})
			e.pendingIDs[string(s)] = id
		}
	}
	col = binary.AppendUvarint(col, base)
	e.cols[c] = binary.AppendUvarint(col, id)
	return i
}

// names appends the agent, session and role of a record to a version-4
// head's columns. A session that is the one of the agent's previous
// record in the segment is the code 0 (agents keep a session for many
// records while others interleave: on the Zipf corpus most records).
func (e *colEncoder) namesOf(agent, session, role []byte) {
	a := e.nameRef(colAgents, 0, agent, 0)
	for uint64(len(e.lastSess)) <= a {
		e.lastSess = append(e.lastSess, 0)
	}
	if si, ok := e.tables[1][string(session)]; ok && e.lastSess[a] == si+1 {
		e.cols[colSessions] = binary.AppendUvarint(e.cols[colSessions], 0)
	} else {
		e.lastSess[a] = e.nameRef(colSessions, 1, session, 1) + 1
	}
	e.nameRef(colRoles, 2, role, 0)
}

// headTable is a version-4 head's table of one kind of name (agents,
// sessions, roles, metadata strings), in the order its records first
// refer to them. A name first met in a record that a read walks past
// (lazy) is not looked up in the log's table until a record read refers
// to it: pend[i] is its id + 1, 0 once s[i] holds it. The lookups are
// cache misses in a table of 100k+ names after a reopen, and a cold read
// walks on average half its segment's records to reach its own
// (docs/benchmarks/cold.md, tenth pass).
type headTable struct {
	s    [][]byte
	pend []uint64
}

func (h *headTable) reset() {
	clear(h.s[:cap(h.s)])
	h.s, h.pend = h.s[:0], h.pend[:0]
}

func (h *headTable) add(s []byte, pend uint64) int {
	h.s, h.pend = append(h.s, s), append(h.pend, pend)
	return len(h.s) - 1
}

// at returns entry i, looking its name up in names if it was put off;
// false if names has no such name (c fails with the lookup's message).
func (h *headTable) at(c *colReader, names *nameTable, i int, what string) []byte {
	if p := h.pend[i]; p != 0 {
		s, ok := names.get(p - 1)
		if !ok {
			c.fail(fmt.Sprintf("%s: name %d not in the log", what, p-1))
			return nil
		}
		h.s[i], h.pend[i] = s, 0
	}
	return h.s[i]
}

// nameRef reads a reference of a version-4 head's column (codes as the
// encoder's nameRef writes them; codes below base are the caller's) into
// table, the segment's names so far, and returns the name and its index
// in table. lazy: the record is walked past, its name is not needed (nor
// looked up).
func (c *colReader) nameRef(names *nameTable, table *headTable, what string, base uint64, lazy bool) ([]byte, int) {
	k := c.uvarint(what)
	if c.err != nil {
		return nil, 0
	}
	if k == base {
		id := c.uvarint(what)
		if c.err != nil {
			return nil, 0
		}
		i := table.add(nil, id+1)
		if lazy {
			return nil, i
		}
		return table.at(c, names, i, what), i
	}
	if k < base || k-base > uint64(len(table.s)) {
		c.fail(what)
		return nil, 0
	}
	i := int(k - base - 1)
	if lazy {
		return nil, i
	}
	return table.at(c, names, i, what), i
}

// namesOf reads a record's agent, session and role from a version-4
// head (lazy: walks past them, see nameRef).
func (c *colCursor) namesOf(r *colRecord, lazy bool) {
	cols, sc := &c.cols, c.sc
	var a int
	r.agent, a = cols[colAgents].nameRef(c.names, &sc.nAgents, "agent", 0, lazy)
	for len(sc.lastSess) <= a {
		sc.lastSess = append(sc.lastSess, -1)
	}
	sess := &cols[colSessions]
	if sess.err == nil && sess.off < len(sess.b) && sess.b[sess.off] == 0 {
		sess.off++
		switch {
		case sc.lastSess[a] < 0:
			sess.fail("session: the agent has no previous session")
		case !lazy:
			r.session = sc.nSessions.at(sess, c.names, sc.lastSess[a], "session")
		}
	} else {
		var si int
		r.session, si = sess.nameRef(c.names, &sc.nSessions, "session", 1, lazy)
		sc.lastSess[a] = si
	}
	r.role, _ = cols[colRoles].nameRef(c.names, &sc.nRoles, "role", 0, lazy)
}

// maxNameBytes bounds the bytes of the metadata strings the name table
// takes: past it, a metadata key or value the table does not hold is
// written in the head (code 1) as before the table. Agents, sessions
// and roles always go to the table.
const maxNameBytes = 16 << 20

// metaRef appends to the meta column a reference to metadata string s
// (version 4): the segment's table of strings (tables[3]) with a new
// entry written as 0 and the string's id in the log's table, or as 1,
// its length and its bytes when the table is full; 2+i is entry i.
func (e *colEncoder) metaRef(c, k int, s []byte) {
	col := e.cols[c]
	if i, ok := e.tables[k][string(s)]; ok {
		e.cols[c] = binary.AppendUvarint(col, 2+i)
		return
	}
	e.tables[k][string(s)] = uint64(len(e.tables[k]))
	id, ok := e.names.ids[string(s)]
	if !ok {
		id, ok = e.pendingIDs[string(s)]
	}
	if !ok && e.names.bytes+e.pendingBytes+len(s) <= e.names.maxBytes {
		id, ok = e.names.next+uint64(len(e.pending)), true
		e.pending = append(e.pending, pendingName{id: id, s: string(s)})
		e.pendingIDs[string(s)] = id
		e.pendingBytes += len(s)
	}
	if !ok {
		col = binary.AppendUvarint(col, 1)
		col = binary.AppendUvarint(col, uint64(len(s)))
		e.cols[c] = append(col, s...)
		return
	}
	col = binary.AppendUvarint(col, 0)
	e.cols[c] = binary.AppendUvarint(col, id)
}

// metaRef reads a reference of a version-4 meta column (codes as the
// encoder's metaRef writes them) into table and returns the string (lazy:
// walks past it, see nameRef).
func (c *colReader) metaRef(names *nameTable, table *headTable, what string, lazy bool) []byte {
	k := c.uvarint(what)
	if c.err != nil {
		return nil
	}
	switch {
	case k == 0:
		id := c.uvarint(what)
		if c.err != nil {
			return nil
		}
		i := table.add(nil, id+1)
		if lazy {
			return nil
		}
		return table.at(c, names, i, what)
	case k == 1:
		s := c.bytes(c.uvarint(what), what)
		if c.err != nil {
			return nil
		}
		table.add(s, 0)
		return s
	case k-2 >= uint64(len(table.s)):
		c.fail(what)
		return nil
	case lazy:
		return nil
	}
	return table.at(c, names, int(k-2), what)
}

// metaOf reads a record's metadata from a version-4 head.
func (c *colCursor) metaOf(r *colRecord) {
	mc, sc := &c.cols[colMeta], c.sc
	nm := mc.uvarint("meta count")
	keys, vals, nvs := sc.mKeys[:0], sc.mVals[:0], sc.nvs[:0]
	metaSize := uvarintLen(nm)
	for f := uint64(0); f < nm && mc.err == nil; f++ {
		k := mc.metaRef(c.names, &sc.nMeta, "meta key", false)
		nv := mc.uvarint("meta value count")
		keys, nvs = append(keys, k), append(nvs, nv)
		metaSize += strLen(k) + uvarintLen(nv)
		for v := uint64(0); v < nv && mc.err == nil; v++ {
			s := mc.metaRef(c.names, &sc.nMeta, "meta value", false)
			vals = append(vals, s)
			metaSize += strLen(s)
		}
	}
	sc.mKeys, sc.mVals, sc.nvs = keys, vals, nvs
	r.nm, r.metaSize = nm, metaSize
}

// skipMeta walks past a record's metadata in a version-4 head, adding
// the strings it meets first to the segment's table unresolved.
func (c *colCursor) skipMeta() {
	mc, sc := &c.cols[colMeta], c.sc
	nm := mc.uvarint("meta count")
	for f := uint64(0); f < nm && mc.err == nil; f++ {
		mc.metaRef(c.names, &sc.nMeta, "meta key", true)
		nv := mc.uvarint("meta value count")
		for v := uint64(0); v < nv && mc.err == nil; v++ {
			mc.metaRef(c.names, &sc.nMeta, "meta value", true)
		}
	}
}

// metaUsed adds the name ids a version-4 meta column refers to.
func metaUsed(cr *colReader, used map[uint64]bool) {
	ref := func() {
		switch cr.uvarint("meta reference") {
		case 0:
			used[cr.uvarint("meta name id")] = true
		case 1:
			cr.bytes(cr.uvarint("meta string length"), "meta string")
		}
	}
	for cr.off < len(cr.b) && cr.err == nil {
		nm := cr.uvarint("meta count")
		for f := uint64(0); f < nm && cr.err == nil; f++ {
			ref()
			nv := cr.uvarint("meta value count")
			for v := uint64(0); v < nv && cr.err == nil; v++ {
				ref()
			}
		}
	}
}
