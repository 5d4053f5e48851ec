package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestResultOutlivesLaterRecalls: a recall's candidates' buffers go back
// to a pool for the next recalls (recall.go candBufs); a result already
// returned must share nothing that later recalls write. The results are
// read while other recalls run: a result pointing into a pooled buffer
// changes under the reader (and the race detector, which make test runs
// this package under, reports the write).
func TestResultOutlivesLaterRecalls(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	snap := func(r *engine.Result) string {
		b, err := json.Marshal(r.Memories)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	queries := []engine.Query{
		{Agent: "a1", Text: "connection pool size billing", K: 5, Explain: true},
		{Agent: "a1", Text: "weather Lisbon", K: 3, Explain: true},
		{Agent: "a2", Text: "inventory service tuning", K: 2},
		{Agent: "a1", Text: "数据库连接池", K: 4, Explain: true},
		{Agent: "a1", Text: "Postgres upgrade Alice", K: 6, Explain: true},
	}
	var kept []*engine.Result
	var want []string
	for _, q := range queries {
		r := recall(t, db, q)
		if len(r.Memories) == 0 {
			t.Fatalf("query %q found nothing", q.Text)
		}
		kept, want = append(kept, r), append(want, snap(r))
	}
	done := make(chan error, 1)
	go func() {
		for n := 0; n < 300; n++ {
			if _, err := db.Recall(context.Background(), queries[n%len(queries)]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		for i, k := range kept {
			if got := snap(k); got != want[i] {
				t.Fatalf("result %d changed while later recalls ran:\nnow  %s\nwas  %s", i, got, want[i])
			}
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
	}
}
