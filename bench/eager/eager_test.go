package eager

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine/embed"
)

func TestMain(m *testing.M) {
	testwatch.Start()
	goleak.VerifyTestMain(m)
}

const testSeed = 42

func corpus(t *testing.T, n int) ([]workload.Record, []workload.Query, workload.Config) {
	t.Helper()
	cfg := workload.Config{Seed: testSeed, Records: n, Agents: 4, Sessions: 10}
	recs, err := workload.Records(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := workload.New(cfg)
	return recs, g.Queries(90), g.Config()
}

func hashEmbedder(t *testing.T) embed.Embedder {
	t.Helper()
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBaselines checks, for every baseline, that direct-wording questions
// find their planted record, that results respect the agent scope and the
// time window, and that the embedding counts are exactly what eager
// ingestion implies.
func TestBaselines(t *testing.T) {
	const n = 3000
	recs, queries, _ := corpus(t, n)
	if len(queries) < 30 {
		t.Fatalf("only %d queries", len(queries))
	}
	results := map[string][][]int{}
	for _, name := range Systems {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b, err := New(name, Options{Embedder: hashEmbedder(t), EmbedBatch: 500, Seed: testSeed})
			if err != nil {
				t.Fatal(err)
			}
			// Two Ingest calls: ordinals continue across calls.
			if err := b.Ingest(ctx, recs[:1234]); err != nil {
				t.Fatal(err)
			}
			if err := b.Ingest(ctx, recs[1234:]); err != nil {
				t.Fatal(err)
			}
			u := b.Usage()
			// 1234 = 500+500+234, 1766 = 500+500+500+266: 7 calls.
			want := Usage{Calls: 7, Texts: n, APICalls: (6 + 6 + 3) + (6 + 6 + 6 + 3)} // ceil(500/96) = 6
			if u != want {
				t.Fatalf("ingest usage %+v, want %+v", u, want)
			}
			var planted, found int
			var all [][]int
			for _, q := range queries {
				got, err := b.Query(ctx, q, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) > 10 {
					t.Fatalf("%d results for k=10", len(got))
				}
				for _, o := range got {
					if recs[o].Agent != q.Agent {
						t.Fatalf("query for %s returned a record of %s", q.Agent, recs[o].Agent)
					}
					if !q.Since.IsZero() && (recs[o].Time.Before(q.Since) || !recs[o].Time.Before(q.Until)) {
						t.Fatalf("record %d at %v outside [%v, %v)", o, recs[o].Time, q.Since, q.Until)
					}
				}
				if q.Kind == "planted" {
					planted++
					if slices.ContainsFunc(got, func(o int) bool { return slices.Contains(q.Relevant, o) }) {
						found++
					}
				}
				all = append(all, got)
			}
			results[name] = all
			floor := 0.8
			if planted == 0 || float64(found) < floor*float64(planted) {
				t.Errorf("planted record in the top 10 for %d of %d direct-wording queries", found, planted)
			}
			u2 := b.Usage().Sub(u)
			if q := int64(len(queries)); u2 != (Usage{Calls: q, Texts: q, APICalls: q}) {
				t.Errorf("query usage %+v, want one call and one text per query", u2)
			}
			if b.Bytes() < int64(n)*384*4 {
				t.Errorf("Bytes %d is less than the vectors alone", b.Bytes())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Query(ctx, queries[0], 10); !errors.Is(err, ErrClosed) {
				t.Errorf("Query after Close: %v, want ErrClosed", err)
			}
		})
	}
	// chromem and flat are both exhaustive: the same records (ties aside, the
	// same order). HNSW is approximate: most of the same records.
	flat, chrom, hn := results["flat"], results["chromem"], results["hnsw"]
	if len(flat) != len(queries) || len(chrom) != len(queries) || len(hn) != len(queries) {
		t.Fatal("a subtest failed")
	}
	var same, overlap, total int
	for i := range flat {
		if sameSet(flat[i], chrom[i]) {
			same++
		}
		for _, o := range hn[i] {
			if slices.Contains(flat[i], o) {
				overlap++
			}
		}
		total += len(flat[i])
	}
	if same < len(flat)*9/10 {
		t.Errorf("chromem and flat agree on %d of %d queries", same, len(flat))
	}
	if overlap < total*4/10 {
		t.Errorf("hnsw shares %d of flat's %d results", overlap, total)
	}
}

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestMeter(t *testing.T) {
	m := NewMeter(hashEmbedder(t), 96)
	ctx := context.Background()
	for _, n := range []int{0, 1, 96, 97, 200} {
		if _, err := m.Embed(ctx, make([]string, n)); err != nil {
			t.Fatal(err)
		}
	}
	want := Usage{Calls: 5, Texts: 394, APICalls: 1 + 1 + 1 + 2 + 3}
	if got := m.Usage(); got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
}

func TestOptions(t *testing.T) {
	if _, err := New("flat", Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("no embedder: %v", err)
	}
	if _, err := New("faiss", Options{Embedder: hashEmbedder(t)}); !errors.Is(err, ErrOptions) {
		t.Errorf("unknown name: %v", err)
	}
}
