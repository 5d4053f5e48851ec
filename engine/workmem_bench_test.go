package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/engine/embed/use"
)

// BenchmarkLiveSessionFirstRecall is the first question asked in a live
// meeting, with working memory on and off: a store holding 20,000 turns of
// older history takes a meeting of 12 turns (a new session and new texts
// each iteration, appended one by one, untimed, then the working memory
// settled as it would between the last turn and the question), and the
// recall is timed. embedded/op is the texts the recall itself embedded.
// embedder=use runs USE-lite in process (skipped without the model:
// make use-model), where an embedding costs what a real model costs.
//
//	go test -run '^$' -bench LiveSessionFirstRecall -benchtime 50x ./engine/
func BenchmarkLiveSessionFirstRecall(b *testing.B) {
	embs := map[string]func() (embed.Embedder, error){
		"hash": func() (embed.Embedder, error) { return embed.NewHash(embed.HashOptions{}) },
		"use": func() (embed.Embedder, error) {
			dir := os.Getenv("LAZYMEM_USE_DIR")
			if dir == "" {
				dir = filepath.Join("..", use.DefaultDir)
			}
			return use.New(dir, use.Options{})
		},
	}
	for _, name := range []string{"hash", "use"} {
		for _, wm := range []string{"on", "off"} {
			b.Run(fmt.Sprintf("embedder=%s/workmem=%s", name, wm), func(b *testing.B) {
				emb, err := embs[name]()
				if err != nil {
					b.Skipf("embedder %s: %v", name, err)
				}
				benchLiveSession(b, emb, wm == "off")
			})
		}
	}
}

func benchLiveSession(b *testing.B, emb embed.Embedder, off bool) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := now
	db, err := engine.Open(b.TempDir(), engine.Options{Embedder: emb, Clock: func() time.Time { return clock },
		// A budget no iteration exhausts: 12 turns a meeting, b.N meetings
		// a few seconds apart (the default's 120 a minute would make the
		// settling wait, untimed, for tokens).
		WorkingMemory: engine.WorkingMemoryOptions{Disable: off, PerMinute: 1 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	topics := []string{"budget", "launch date", "hiring plan", "database migration", "office move", "customer escalation"}
	var hist []engine.Record
	for i := range 20000 {
		hist = append(hist, engine.Record{Time: now.AddDate(0, 0, -60).Add(time.Duration(i) * time.Minute), Agent: "team",
			Session: fmt.Sprint("old", i/40), Role: []string{"Ann", "Bo", "Cy"}[i%3],
			Text: fmt.Sprintf("note %d on the %s: item %d is still open", i, topics[i%len(topics)], i%97)})
	}
	for lo := 0; lo < len(hist); lo += 1000 {
		if _, err := db.AppendBatch(ctx, hist[lo:lo+1000]); err != nil {
			b.Fatal(err)
		}
	}
	turns := []string{
		"Let's start with the budget for the launch.",
		"The launch budget is now 150k, approved this morning.",
		"ok",
		"Marketing gets 40k of it.",
		"The launch date moves to December 15 because of the elevator maintenance.",
		"Who tells the customer?",
		"I will write to the customer today.",
		"The hiring plan waits until January.",
		"The database migration is done on staging.",
		"Production migration next Tuesday night.",
		"Anything else?",
		"No, thanks everyone.",
	}
	var embedded int
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		sess := fmt.Sprint("meet", i)
		for j, t := range turns {
			clock = now.Add(time.Duration(i)*time.Hour + time.Duration(j)*time.Minute)
			if _, err := db.Append(ctx, engine.Record{Agent: "team", Session: sess, Role: []string{"Ann", "Bo", "Cy"}[j%3],
				Text: fmt.Sprintf("%s (%d)", t, i)}); err != nil { // new texts: the cache has not seen them
				b.Fatal(err)
			}
		}
		db.SettleWorkingMemory()
		b.StartTimer()
		res, err := db.Recall(ctx, engine.Query{Agent: "team", CurrentSession: sess, Text: "what is the launch budget now?", K: 5})
		if err != nil {
			b.Fatal(err)
		}
		embedded += res.Stats.Embedded
	}
	b.ReportMetric(float64(embedded)/float64(b.N), "embedded/op")
	m := db.Metrics().WorkingMemory
	b.ReportMetric(float64(m.Embedded)/float64(b.N), "background/op")
}
