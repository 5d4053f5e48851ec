package engine

import (
	"sync"
	"time"
)

// fact is what fusion reads of a record besides its scores: its time (the
// recency prior, supersession, the newest-first share, a named date),
// whether its text is a question or only pleasantries (questionWeight,
// lowInfoWeight), and its agent, session and role (the session
// neighbours). 21 bytes instead of the record: a recall that finds a
// candidate's vector by id and its fact here does not read the candidate
// from the log; only the K it returns (and the texts a rule compares) are
// read.
type fact struct {
	time  int64 // unix nanoseconds, as logged
	flags uint8
	// agent, session and role are the record's, as indexes into the
	// table's interned names (0: "").
	agent, session, role uint32
	// key is the embedding cache key of the record's constructed text
	// (cacheKey), set once a recall has looked its vector up by text
	// (factKeyed): a later recall whose memory tier lost the vector by id
	// looks it up by this key on disk without reading the record.
	key [cacheHashLen]byte
}

const (
	factKnown    uint8 = 1 << iota // the other fields are set
	factQuestion                   // isQuestion(text)
	factLowInfo                    // theLexicon().lowInfo(text)
	factKeyed                      // key is set
	factAgenda                     // agendaLine(text)
)

func (f fact) known() bool    { return f.flags&factKnown != 0 }
func (f fact) question() bool { return f.flags&factQuestion != 0 }
func (f fact) lowInfo() bool  { return f.flags&factLowInfo != 0 }
func (f fact) keyed() bool    { return f.flags&factKeyed != 0 }
func (f fact) agenda() bool   { return f.flags&factAgenda != 0 }

// factOf derives the fact of a record read from the log.
func factOf(r *Record) fact {
	f := fact{time: r.Time.UnixNano(), flags: factKnown}
	if isQuestion(r.Text) {
		f.flags |= factQuestion
	}
	if theLexicon().lowInfo(r.Text) {
		f.flags |= factLowInfo
	}
	if agendaLine(r.Text) {
		f.flags |= factAgenda
	}
	return f
}

// factPageBits: a page holds the facts of 256 consecutive ids (9.25
// KiB). Candidates are scattered over an agent's history, so pages fill
// sparsely at first; a store whose every record was recalled once holds
// 37 bytes a record (37 MB a million), plus each distinct agent, session
// and role name once.
const factPageBits = 8

type factPage struct {
	time  [1 << factPageBits]int64
	flags [1 << factPageBits]uint8
	key   [1 << factPageBits][cacheHashLen]byte
	names [1 << factPageBits][3]uint32 // agent, session, role
}

// factPageBytes is the size of a factPage.
const factPageBytes = (8 + 1 + cacheHashLen + 12) << factPageBits

func (t *factTable) at(id uint64) (*factPage, uint64) {
	pg := id >> factPageBits
	if pg >= uint64(len(t.pages)) {
		return nil, 0
	}
	return t.pages[pg], id & (1<<factPageBits - 1)
}

// page returns the page of id, adding it; under t.mu held exclusively.
func (t *factTable) page(id uint64) (*factPage, uint64) {
	pg := id >> factPageBits
	for uint64(len(t.pages)) <= pg {
		t.pages = append(t.pages, nil)
	}
	if t.pages[pg] == nil {
		t.pages[pg] = new(factPage)
	}
	return t.pages[pg], id & (1<<factPageBits - 1)
}

// factTable holds the facts of the records the DB has read for a recall,
// by id. It is a cache of derived data, kept for the DB's lifetime: a
// record never changes once logged and an id is never assigned twice (a
// forgotten or dropped id stays unassigned), so an entry never goes stale;
// a record deleted after its fact was learnt is left out when the recall
// reads the records it returns, as before. The lexicon is part of the
// binary, so the flags cannot disagree with the rules of this process.
// Nothing is persisted: a recall that finds no fact reads the record (as
// it must anyway when its vector is not cached by id: the text is
// embedded) and learns it.
type factTable struct {
	mu    sync.RWMutex
	pages []*factPage // by id >> factPageBits
	n     int         // facts held
	names []string    // interned agent, session and role names; names[0] = ""
	ord   map[string]uint32
}

// intern returns the index of name in t.names, adding it; under t.mu held
// exclusively.
func (t *factTable) intern(name string) uint32 {
	if name == "" {
		return 0
	}
	if o, ok := t.ord[name]; ok {
		return o
	}
	if t.ord == nil {
		t.ord = map[string]uint32{}
		t.names = []string{""}
	}
	o := uint32(len(t.names))
	t.names = append(t.names, name)
	t.ord[name] = o
	return o
}

// name returns the interned name o; under t.mu held.
func (t *factTable) name(o uint32) string {
	if o == 0 {
		return ""
	}
	return t.names[o]
}

// lookup sets the fact of every candidate the table knows.
func (t *factTable) lookup(cands []cand) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i := range cands {
		t.lookupOne(&cands[i])
	}
}

// lookupAt sets the fact of the candidates at sel that the table knows.
func (t *factTable) lookupAt(cands []cand, sel []int) {
	if len(sel) == 0 {
		return
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, i := range sel {
		t.lookupOne(&cands[i])
	}
}

// lookupOne sets c's fact if the table knows it; under t.mu held.
func (t *factTable) lookupOne(c *cand) {
	p, j := t.at(c.id)
	if p == nil || p.flags[j]&factKnown == 0 {
		return
	}
	ns := p.names[j]
	c.setFact(fact{time: p.time[j], flags: p.flags[j], key: p.key[j], agent: ns[0], session: ns[1], role: ns[2]},
		t.name(ns[0]), t.name(ns[1]), t.name(ns[2]))
}

// learn derives and keeps the facts of the candidates at sel that were
// read from the log and whose fact was not known.
func (t *factTable) learn(cands []cand, sel []int) {
	locked := false
	for _, i := range sel {
		c := &cands[i]
		if !c.fetched || c.fact.known() {
			continue
		}
		c.fact = factOf(&c.rec)
		if !locked {
			t.mu.Lock()
			defer t.mu.Unlock()
			locked = true
		}
		c.fact.agent, c.fact.session, c.fact.role = t.intern(c.rec.Agent), t.intern(c.rec.Session), t.intern(c.rec.Role)
		p, j := t.page(c.id)
		if p.flags[j]&factKnown == 0 {
			t.n++
		}
		p.time[j], p.flags[j] = c.fact.time, p.flags[j]&factKeyed|c.fact.flags
		p.names[j] = [3]uint32{c.fact.agent, c.fact.session, c.fact.role}
	}
}

// setKeys keeps keys[j] as the cache key of the candidate at sel[j],
// whose fact is known.
func (t *factTable) setKeys(cands []cand, sel []int, keys []string) {
	if len(sel) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for j, i := range sel {
		c := &cands[i]
		if !c.fact.known() || len(keys[j]) != cacheHashLen {
			continue
		}
		p, k := t.page(c.id)
		if p.flags[k]&factKnown == 0 {
			t.n++
			p.time[k] = c.fact.time
			p.names[k] = [3]uint32{c.fact.agent, c.fact.session, c.fact.role}
		}
		p.flags[k] |= c.fact.flags | factKeyed
		copy(p.key[k][:], keys[j])
		c.fact.flags |= factKeyed
		copy(c.fact.key[:], keys[j])
	}
}

// forget drops the facts of ids (forgotten records: nothing derived from
// their text is kept, not even its cache key).
func (t *factTable) forget(ids []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if p, j := t.at(id); p != nil && p.flags[j]&factKnown != 0 {
			p.time[j], p.flags[j], p.key[j], p.names[j] = 0, 0, [cacheHashLen]byte{}, [3]uint32{}
			t.n--
		}
	}
}

// size returns the number of facts held and the bytes of their pages.
func (t *factTable) size() (n int, bytes int64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	pages := 0
	for _, p := range t.pages {
		if p != nil {
			pages++
		}
	}
	bytes = int64(pages)*factPageBytes + int64(8*len(t.pages))
	for _, name := range t.names {
		bytes += int64(len(name)) + 16 + 24 // the string, its header, its map entry (about)
	}
	return t.n, bytes
}

// setFact gives an unread candidate the time, agent, session and role
// its record would give it.
func (c *cand) setFact(f fact, agent, session, role string) {
	c.fact = f
	if !c.fetched {
		c.rec.Time = time.Unix(0, f.time).UTC() // as fromCodec
		c.rec.Agent, c.rec.Session, c.rec.Role = agent, session, role
	}
}
