package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestResultOutlivesLaterRecalls: a recall's candidates' buffers go back
// to a pool for the next recalls (recall.go candBufs); a result already
// returned must not change when they are reused, down to the records'
// metadata.
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
		{Agent: "a1", Text: "weather Lisbon", K: 3},
		{Agent: "a2", Text: "inventory service tuning", K: 2},
		{Agent: "a1", Text: "数据库连接池", K: 4},
		{Agent: "a1", Text: "Postgres upgrade Alice", K: 6, Explain: true},
	}
	var kept []*engine.Result
	var want []string
	for round := 0; round < 3; round++ {
		for _, q := range queries {
			r := recall(t, db, q)
			if len(r.Memories) == 0 {
				t.Fatalf("query %q found nothing", q.Text)
			}
			kept, want = append(kept, r), append(want, snap(r))
			for i, k := range kept {
				if got := snap(k); got != want[i] {
					t.Fatalf("result %d changed after later recalls:\nnow  %s\nwas  %s", i, got, want[i])
				}
			}
		}
	}
}
