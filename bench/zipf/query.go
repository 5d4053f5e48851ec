package zipf

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Class is a kind of query text.
type Class string

// The query classes; see the package comment for what each draws.
const (
	Mid    Class = "mid"
	Rare   Class = "rare"
	Common Class = "common"
	Long   Class = "long"
	CJK    Class = "cjk"
)

// Classes lists every class in report order.
var Classes = []Class{Mid, Rare, Common, Long, CJK}

// FilterKind is the restriction a query carries.
type FilterKind string

// The filters, from the least selective to the most.
const (
	None    FilterKind = "none"
	Window  FilterKind = "window"
	Agent   FilterKind = "agent"
	Session FilterKind = "session"
)

// Filters lists every filter kind in report order.
var Filters = []FilterKind{None, Window, Agent, Session}

// WindowLength is the span of a Window query.
const WindowLength = 7 * 24 * time.Hour

// Query is one keyword query with its restriction. Agent and Session are
// empty and Since/Until zero when the filter does not use them; the window
// is [Since, Until).
type Query struct {
	Class        Class
	Filter       FilterKind
	Text         string
	Agent        string
	Session      string
	Since, Until time.Time
}

// Queries draws perCell queries of every (class, filter) pair over recs,
// which Generate made from cfg. The cells are interleaved (one query of
// each in turn) so that a timed pass spreads a shared machine's noise over
// all of them. Agent and session filters name an agent or a session of the
// query's script, taken from a random record, so that no cell is trivially
// empty. The CJK class is skipped when the corpus has no CJK record.
func Queries(cfg Config, recs []Record, perCell int, seed int64) ([]Query, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if perCell < 1 {
		return nil, fmt.Errorf("%w: perCell %d: must be at least 1", ErrConfig, perCell)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no records", ErrConfig)
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x71756572))
	z := rand.NewZipf(r, cfg.Exponent, 1, uint64(cfg.Vocab-1))
	var latinRecs, cjkRecs []int
	for i := range recs {
		if recs[i].CJK {
			cjkRecs = append(cjkRecs, i)
		} else {
			latinRecs = append(latinRecs, i)
		}
	}
	first, last := recs[0].Time, recs[len(recs)-1].Time
	var out []Query
	for n := 0; n < perCell; n++ {
		for _, c := range Classes {
			pool := latinRecs
			if c == CJK {
				pool = cjkRecs
			}
			if len(pool) == 0 {
				continue
			}
			for _, f := range Filters {
				q := Query{Class: c, Filter: f, Text: queryText(r, z, c)}
				switch f {
				case Agent:
					q.Agent = recs[pool[r.IntN(len(pool))]].Agent
				case Session:
					rec := &recs[pool[r.IntN(len(pool))]]
					q.Agent, q.Session = rec.Agent, rec.Session
				case Window:
					room := last.Sub(first) - WindowLength
					q.Since = first
					if room > 0 {
						q.Since = first.Add(time.Duration(r.Int64N(int64(room))))
					}
					q.Until = q.Since.Add(WindowLength)
				}
				out = append(out, q)
			}
		}
	}
	return out, nil
}

// queryText draws the words of one query of class c, distinct ranks.
func queryText(r *rand.Rand, z *rand.Zipf, c Class) string {
	n := 2 + r.IntN(3)
	lo, hi := 10, 3010
	switch c {
	case Rare:
		lo, hi = 3010, minVocab
	case Common:
		lo, hi = 0, 100
	case Long:
		n = 8 + r.IntN(5)
	}
	ranks := make([]int, 0, n)
	for len(ranks) < n {
		var k int
		if c == Long {
			k = int(z.Uint64())
		} else {
			k = lo + r.IntN(hi-lo)
		}
		dup := false
		for _, x := range ranks {
			dup = dup || x == k
		}
		if !dup {
			ranks = append(ranks, k)
		}
	}
	words := make([]string, n)
	for i, k := range ranks {
		if c == CJK {
			words[i] = CJKWord(k)
		} else {
			words[i] = Word(k)
		}
	}
	return strings.Join(words, " ")
}
