package bench

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// tinyCorpus is a hand-made corpus whose answers can be read off by eye.
func tinyCorpus() []Doc {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	day := int64(24 * time.Hour)
	return []Doc{
		{ID: 1, Time: t0, Agent: "a1", Session: "s1", Role: "user", Text: "the connection pool keeps timing out"},
		{ID: 2, Time: t0 + 1*day, Agent: "a1", Session: "s1", Role: "assistant", Text: "raise the pool size of the database connections"},
		{ID: 3, Time: t0 + 2*day, Agent: "a2", Session: "s9", Role: "user", Text: "database pool tuning for agent two"},
		{ID: 4, Time: t0 + 9*day, Agent: "a1", Session: "s2", Role: "user", Text: "pool party on friday", Meta: []Field{{Key: "tags", Values: []string{"social"}}}},
		{ID: 5, Time: t0 + 3*day, Agent: "a1", Session: "s1", Role: "tool", Text: "unrelated weather report"},
		{ID: 6, Time: t0 + 4*day, Agent: "a1", Session: "s1", Role: "user", Text: "Databases and pools, pooling databases"},
	}
}

func ids(h []Hit) []uint64 {
	out := make([]uint64, len(h))
	for i := range h {
		out[i] = h[i].ID
	}
	slices.Sort(out)
	return out
}

func TestBleveFilters(t *testing.T) {
	docs := tinyCorpus()
	b, st, err := BuildBleve(filepath.Join(t.TempDir(), "bleve"), docs, BleveOptions{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if st.Records != len(docs) || st.Durable < st.Apply {
		t.Fatalf("ingest stats %+v", st)
	}
	t0 := docs[0].Time
	day := int64(24 * time.Hour)
	cases := []struct {
		name string
		q    Query
		want []uint64
	}{
		{"no filter", Query{Text: "database pool"}, []uint64{1, 2, 3, 4, 6}},
		{"agent", Query{Text: "database pool", Agent: "a1"}, []uint64{1, 2, 4, 6}},
		{"agent+7d", Query{Text: "database pool", Agent: "a1", Since: t0, Until: t0 + 7*day}, []uint64{1, 2, 6}},
		// Until is exclusive: the record at t0+day is out.
		{"until exclusive", Query{Text: "pool", Agent: "a1", Since: t0, Until: t0 + day}, []uint64{1}},
		{"since only", Query{Text: "pool", Since: t0 + 2*day}, []uint64{3, 4, 6}},
		{"no match", Query{Text: "kubernetes", Agent: "a1"}, []uint64{}},
		{"other agent", Query{Text: "weather", Agent: "a2"}, []uint64{}},
		{"session", Query{Text: "database pool", Agent: "a1", Session: "s1"}, []uint64{1, 2, 6}},
		{"session alone", Query{Text: "pool", Session: "s2"}, []uint64{4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := b.Formulation(false).Search(&c.q, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(h); !slices.Equal(got, c.want) {
				t.Fatalf("got %v want %v", got, c.want)
			}
			for i := 1; i < len(h); i++ {
				if h[i].Score > h[i-1].Score {
					t.Fatalf("not score-descending: %+v", h)
				}
			}
			// The conjunction formulation must match the same records with
			// the same scores: its restriction clauses carry no weight.
			hc, err := b.Formulation(true).Search(&c.q, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(hc); !slices.Equal(got, c.want) {
				t.Fatalf("conjunction: got %v want %v", got, c.want)
			}
			score := map[uint64]float64{}
			for _, x := range h {
				score[x.ID] = x.Score
			}
			for _, x := range hc {
				if d := x.Score - score[x.ID]; d > 1e-9*x.Score || d < -1e-9*x.Score {
					t.Fatalf("conjunction score of %d: %v, filter clause %v", x.ID, x.Score, score[x.ID])
				}
			}
		})
	}
	// k truncates.
	h, err := b.Search(&Query{Text: "database pool"}, 2, nil)
	if err != nil || len(h) != 2 {
		t.Fatalf("k=2: %v %v", h, err)
	}
	// Stemming: "databases"/"pooling" in doc 6 match "database pool", and doc 6
	// holds each term twice, so it must rank first among a1's records.
	h, err = b.Search(&Query{Text: "database pool", Agent: "a1"}, 1, nil)
	if err != nil || len(h) != 1 || h[0].ID != 6 {
		t.Fatalf("top-1: %v %v", h, err)
	}
}

func TestBleveReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bleve")
	b, _, err := BuildBleve(dir, tinyCorpus(), BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Text: "pool", Agent: "a1"}
	before, err := b.Search(&q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Search(&q, 10, nil); err == nil {
		t.Fatal("search after close succeeded")
	}
	b, err = OpenBleve(dir, BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	after, err := b.Search(&q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Fatalf("reopen changed results: %v vs %v", before, after)
	}
	if b.DiskBytes() == 0 {
		t.Fatal("no bytes on disk")
	}
}
