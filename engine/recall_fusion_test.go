package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/embed"
)

// advising is a test double: the hash embedder recommending fusion
// settings (embed.FusionAdvisor).
type advising struct {
	embed.Embedder
	rec embed.Fusion
}

func (a advising) RecommendedFusion() embed.Fusion { return a.rec }

// TestEmbedderFusionDefaults: an embedder's recommended dense weight and
// candidates become the defaults of Options and of a Query that sets
// neither; the caller's values (Options or Query) win; an embedder that
// recommends nothing, or something out of range, gets the engine's.
func TestEmbedderFusionDefaults(t *testing.T) {
	h, err := embed.NewHash(embed.HashOptions{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	plain := struct{ embed.Embedder }{h} // hides the hash embedder's own advice
	semantic := advising{h, embed.Fusion{DenseWeight: 0.5, Candidates: 200}}
	cases := []struct {
		name     string
		o        Options
		q        Query
		wantW    float64
		wantCand int
	}{
		{"hash embedder", Options{Embedder: h}, Query{}, 0.2, 50},
		{"no advice", Options{Embedder: plain}, Query{}, DefaultDenseWeight, DefaultCandidates},
		{"semantic", Options{Embedder: semantic}, Query{}, 0.5, 200},
		{"semantic, K above the advice", Options{Embedder: semantic}, Query{K: 50}, 0.5, 250},
		{"options win", Options{Embedder: semantic, DenseWeight: 0.3, Candidates: 80}, Query{}, 0.3, 80},
		{"query wins", Options{Embedder: semantic}, Query{DenseWeight: 0.25, Candidates: 60}, 0.25, 60},
		{"rrf keeps equal weights", Options{Embedder: semantic}, Query{Fusion: FusionRRF}, 0.5, 200},
		{"advice out of range", Options{Embedder: advising{h, embed.Fusion{DenseWeight: 1.5, Candidates: MaxCandidates + 1}}}, Query{}, DefaultDenseWeight, DefaultCandidates},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.FS = vfs.NewMem()
			o.DisableDiskCache = true
			db, err := Open("s", o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			var recs []Record
			for i := range 300 {
				recs = append(recs, Record{Agent: "a", Session: "s", Text: fmt.Sprintf("the launch note %d", i)})
			}
			if _, err := db.AppendBatch(ctx, recs); err != nil {
				t.Fatal(err)
			}
			q := c.q
			q.Agent, q.Text = "a", "launch"
			res, err := db.Recall(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			// The query's defaults as the recall resolves them.
			pq := c.q
			pq.Agent = "a"
			if err := pq.prepare(&db.opts, true); err != nil {
				t.Fatal(err)
			}
			if pq.DenseWeight != c.wantW || pq.Candidates != c.wantCand {
				t.Errorf("query defaults: dense weight %g, candidates %d; want %g, %d", pq.DenseWeight, pq.Candidates, c.wantW, c.wantCand)
			}
			// Every record matches: the BM25 hits are the candidate limit.
			if got := res.Stats.Hits; got != c.wantCand {
				t.Errorf("BM25 hits %d, want the candidate limit %d", got, c.wantCand)
			}
		})
	}
}

// TestFusionOptionsValidate: out-of-range fusion options are errors
// naming the field.
func TestFusionOptionsValidate(t *testing.T) {
	for _, o := range []Options{{DenseWeight: -0.1}, {DenseWeight: 1.5}, {Candidates: -1}, {Candidates: MaxCandidates + 1}} {
		o.FS = vfs.NewMem()
		_, err := Open("s", o)
		if !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", o, err)
			continue
		}
		if o.DenseWeight != 0 && !containsWord(err.Error(), "DenseWeight") || o.Candidates != 0 && !containsWord(err.Error(), "Candidates") {
			t.Errorf("%v does not name the field", err)
		}
	}
}
