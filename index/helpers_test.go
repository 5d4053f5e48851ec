package index

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testwatch.Start()
	goleak.VerifyTestMain(m)
}

// memSource is a fake log.
type memSource struct{ docs []*Doc }

func (s *memSource) LastID() uint64 {
	if len(s.docs) == 0 {
		return 0
	}
	return s.docs[len(s.docs)-1].ID
}

func (s *memSource) Scan(from uint64, fn func(d *Doc) error) error {
	i, _ := slices.BinarySearchFunc(s.docs, from, func(d *Doc, id uint64) int {
		switch {
		case d.ID < id:
			return -1
		case d.ID > id:
			return 1
		}
		return 0
	})
	for _, d := range s.docs[i:] {
		c := *d
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

// Text makes memSource a TextSource.
func (s *memSource) Text(id uint64) (string, error) {
	i, ok := slices.BinarySearchFunc(s.docs, id, func(d *Doc, id uint64) int { return cmp.Compare(d.ID, id) })
	if !ok {
		return "", fmt.Errorf("memSource: no document %d", id)
	}
	return s.docs[i].Text, nil
}

// Docs makes memSource a DocSource.
func (s *memSource) Docs(ids []uint64, fn func(d *Doc) error) error {
	for _, id := range ids {
		i, ok := slices.BinarySearchFunc(s.docs, id, func(d *Doc, id uint64) int { return cmp.Compare(d.ID, id) })
		if !ok {
			continue
		}
		c := *s.docs[i]
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

// genCorpus makes n docs with ids from firstID, mostly increasing times
// (10% late), a Zipf vocabulary of vocab words, 4 agents, metadata tags.
func genCorpus(rng *rand.Rand, n int, firstID uint64, vocab int) []*Doc {
	z := rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	docs := make([]*Doc, 0, n)
	t := int64(1_700_000_000_000_000_000)
	id := firstID
	for i := 0; i < n; i++ {
		t += int64(rng.IntN(1000)) * 1e6
		ts := t
		if rng.IntN(10) == 0 {
			ts -= int64(rng.IntN(50_000)) * 1e6 // late
		}
		nw := rng.IntN(20)
		text := ""
		for j := 0; j < nw; j++ {
			text += fmt.Sprintf("w%d ", z.Uint64())
		}
		d := &Doc{ID: id, Time: ts, Agent: fmt.Sprintf("a%d", rng.IntN(4)),
			Session: fmt.Sprintf("s%d", rng.IntN(10)), Role: []string{"user", "assistant", "tool"}[rng.IntN(3)], Text: text}
		if rng.IntN(2) == 0 {
			d.Meta = append(d.Meta, Field{Key: "tags", Values: []string{fmt.Sprintf("t%d", rng.IntN(5)), fmt.Sprintf("t%d", rng.IntN(5))}})
		}
		if rng.IntN(3) == 0 {
			d.Meta = append(d.Meta, Field{Key: "intent", Values: []string{fmt.Sprintf("i%d", rng.IntN(3))}})
		}
		docs = append(docs, d)
		id += 1 + uint64(rng.IntN(20)/19) // occasional gaps
	}
	return docs
}

// oracle computes BM25 and filters naively from the raw corpus.
type oracle struct {
	docs    []*Doc
	deleted map[uint64]bool
	an      Analyzer
	k1, b   float64
	// context: a document's text, its terms counted own times, is followed
	// by its session predecessor's (the previous live document of the same
	// agent and session), counted inherited times, and k1 is scaled by
	// own; zero weights are 1. sample: Options.ContextSample.
	context        bool
	own, inherited int
	sample         bool
}

func (o *oracle) live() []*Doc {
	var out []*Doc
	for _, d := range o.docs {
		if !o.deleted[d.ID] {
			out = append(out, d)
		}
	}
	return out
}

func (o *oracle) search(query string, filter *roaring.Bitmap, k int) []Hit {
	live := o.live()
	qterms := o.an.Terms(nil, query)
	qtf := map[string]float64{}
	for _, t := range qterms {
		qtf[t]++
	}
	tfs := make([]map[string]int, len(live))
	dls := make([]int, len(live))
	df := map[string]int{}
	total := 0
	prev := map[string]*Doc{}
	own, inh := 1, 1
	if o.context {
		own, inh = max(o.own, 1), max(o.inherited, 1)
	}
	for i, d := range live {
		ts := o.an.Terms(nil, d.Text)
		tfs[i] = map[string]int{}
		for _, t := range ts {
			tfs[i][t] += own
		}
		dls[i] = own * len(ts)
		if o.context && d.Session != "" && d.Agent != "" {
			key := d.Agent + "\x00" + d.Session
			if p := prev[key]; p != nil {
				pt := o.an.Terms(nil, p.Text)
				// With sample, a share min(own, pred)/pred of each frequency
				// (rounded half up) and min(own, pred) words of length.
				num, den := 1, 1
				if o.sample && len(ts) < len(pt) {
					num, den = len(ts), len(pt)
				}
				pc := map[string]int{}
				for _, t := range pt {
					pc[t]++
				}
				for t, c := range pc {
					if v := (inh*c*num + den/2) / den; v > 0 {
						tfs[i][t] += v
					}
				}
				dls[i] += inh * len(pt) * num / den
			}
			prev[key] = d
		}
		total += dls[i]
		for t := range tfs[i] {
			df[t]++
		}
	}
	n := float64(len(live))
	avgdl := float64(total) / n
	k1 := o.k1
	if o.context {
		k1 *= float64(max(o.own, 1))
	}
	var hits []Hit
	for i, d := range live {
		if filter != nil && !filter.Contains(uint32(d.ID)) {
			continue
		}
		dl := dls[i]
		s, matched := 0.0, false
		for t, q := range qtf {
			tf := float64(tfs[i][t])
			if tf == 0 {
				continue
			}
			matched = true
			dfv := float64(df[t])
			idf := math.Log(1 + (n-dfv+0.5)/(dfv+0.5))
			s += q * idf * tf * (o.k1 + 1) / (tf + k1*(1-o.b+o.b*float64(dl)/avgdl))
		}
		if matched {
			hits = append(hits, Hit{ID: d.ID, Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.ID) - int(b.ID)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

func (o *oracle) filter(f *Filter) *roaring.Bitmap {
	bm := roaring.New()
	in := func(v string, list []string) bool { return len(list) == 0 || slices.Contains(list, v) }
	has := func(d *Doc, key string, vals []string) bool {
		for _, m := range d.Meta {
			if m.Key == key {
				for _, v := range m.Values {
					if slices.Contains(vals, v) {
						return true
					}
				}
			}
		}
		return false
	}
	for _, d := range o.live() {
		if !in(d.Agent, f.Agents) || !in(d.Session, f.Sessions) || !in(d.Role, f.Roles) {
			continue
		}
		if (f.Since != 0 && d.Time < f.Since) || (f.Until != 0 && d.Time >= f.Until) {
			continue
		}
		ok := true
		byKey := map[string][]string{}
		for _, w := range f.Where {
			byKey[w.Key] = append(byKey[w.Key], w.Values...)
		}
		for k, vs := range byKey {
			if !has(d, k, vs) {
				ok = false
			}
		}
		for _, nf := range f.Not {
			if has(d, nf.Key, nf.Values) {
				ok = false
			}
		}
		if ok {
			bm.Add(uint32(d.ID))
		}
	}
	return bm
}

func randQuery(rng *rand.Rand, vocab int) string {
	n := 1 + rng.IntN(4)
	q := ""
	for i := 0; i < n; i++ {
		switch rng.IntN(10) {
		case 0:
			q += "absentterm "
		default:
			q += fmt.Sprintf("w%d ", int(math.Floor(math.Pow(float64(vocab), rng.Float64())))-1)
		}
	}
	return q
}

func randFilter(rng *rand.Rand, docs []*Doc) *Filter {
	f := &Filter{}
	if rng.IntN(2) == 0 {
		f.Agents = []string{fmt.Sprintf("a%d", rng.IntN(4))}
		if rng.IntN(3) == 0 {
			f.Agents = append(f.Agents, fmt.Sprintf("a%d", rng.IntN(4)))
		}
	}
	if rng.IntN(4) == 0 {
		f.Sessions = []string{fmt.Sprintf("s%d", rng.IntN(10)), fmt.Sprintf("s%d", rng.IntN(10))}
	}
	if rng.IntN(4) == 0 {
		f.Roles = []string{"user"}
	}
	if rng.IntN(3) == 0 {
		f.Where = []Field{{Key: "tags", Values: []string{fmt.Sprintf("t%d", rng.IntN(5))}}}
		if rng.IntN(2) == 0 {
			f.Where = append(f.Where, Field{Key: "tags", Values: []string{"t4"}})
		}
	}
	// Values no record holds: alone a clause of them empties the filter
	// (filterLocked returns before any union); beside held ones, under
	// the same key, they change nothing.
	switch rng.IntN(12) {
	case 0:
		f.Agents = append(f.Agents, "a-absent")
	case 1:
		f.Agents = []string{"a-absent"}
	case 2:
		f.Roles = []string{"nobody"}
	case 3:
		f.Where = append([]Field{{Key: "tags", Values: []string{"t-absent"}}}, f.Where...)
	case 4:
		f.Where = append(f.Where, Field{Key: "color", Values: []string{"red"}})
	case 5, 6:
		// Every agent, one twice: the index's union of all agents
		// (filterLocked) instead of the agents' own bitmaps.
		f.Agents = []string{"a3", "a1", "a0", "a2", "a1"}
		if rng.IntN(2) == 0 {
			f.Agents = append(f.Agents, "a-absent")
		}
	case 7:
		f.Agents = []string{"a3", "a1", "a2", "a1"} // all but one
	}
	if rng.IntN(4) == 0 {
		f.Not = []Field{{Key: "intent", Values: []string{fmt.Sprintf("i%d", rng.IntN(3))}}}
	}
	if rng.IntN(2) == 0 && len(docs) > 0 {
		a := docs[rng.IntN(len(docs))].Time
		b := docs[rng.IntN(len(docs))].Time
		if a > b {
			a, b = b, a
		}
		f.Since = a
		if rng.IntN(4) != 0 {
			f.Until = b
		}
	}
	return f
}

func sameHits(t *testing.T, what string, got, want []Hit, tol float64) {
	t.Helper()
	short := func(h []Hit) []Hit { return h[:min(len(h), 12)] }
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d\ngot  %v\nwant %v", what, len(got), len(want), short(got), short(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > tol*math.Abs(want[i].Score) {
			t.Fatalf("%s: hit %d = %v, want %v\ngot  %v\nwant %v", what, i, got[i], want[i], short(got), short(want))
		}
	}
}

// closeHits is sameHits for an oracle that sums in another order: scores
// match per rank within tol, and ids match except between hits whose
// scores are equal within tol (ties broken differently by rounding).
func closeHits(t *testing.T, what string, got, want []Hit, tol float64) {
	t.Helper()
	short := func(h []Hit) []Hit { return h[:min(len(h), 12)] }
	near := func(a, b float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d\ngot  %v\nwant %v", what, len(got), len(want), short(got), short(want))
	}
	ws := map[uint64]float64{}
	for i := range want {
		ws[want[i].ID] = want[i].Score
		if !near(got[i].Score, want[i].Score) {
			t.Fatalf("%s: rank %d score %v, want %v", what, i, got[i], want[i])
		}
	}
	for i, g := range got {
		s, ok := ws[g.ID]
		if (ok && !near(g.Score, s)) || (!ok && !near(g.Score, want[len(want)-1].Score)) {
			t.Fatalf("%s: rank %d %v not in oracle top-k\ngot  %v\nwant %v", what, i, g, short(got), short(want))
		}
	}
}

// checkOracle runs n random queries with random filters over x: the pruned
// search equals the exhaustive one over the same postings (block bounds
// hold with every weighting) and, with exact, the oracle's BM25. It
// returns how many top 10s differ from the oracle's in their ids.
func checkOracle(t *testing.T, rng *rand.Rand, x *Index, o *oracle, all []*Doc, vocab, n int, what string, exact bool) int {
	t.Helper()
	bad := 0
	for range n {
		query := randQuery(rng, vocab)
		f := randFilter(rng, all)
		bm, err := x.Filter(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Search(query, bm, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := o.search(query, o.filter(f), 10)
		if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID }) {
			bad++
		}
		if exact {
			closeHits(t, fmt.Sprintf("%s: %q %+v", what, query, f), got, want, 1e-9)
		}
		ex, err := x.SearchExhaustive(query, bm, 10)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("%s: %q pruned vs exhaustive", what, query), got, ex, 1e-6)
	}
	return bad
}

// addInBatches adds all to x in random batches of up to 300, the source
// holding each batch before it is added (as the log does).
func addInBatches(t *testing.T, rng *rand.Rand, x *Index, src *memSource, all []*Doc) {
	t.Helper()
	for n := 0; n < len(all); {
		end := min(len(all), n+1+rng.IntN(300))
		src.docs = all[:end]
		if err := x.Add(all[n:end]); err != nil {
			t.Fatal(err)
		}
		n = end
	}
}
