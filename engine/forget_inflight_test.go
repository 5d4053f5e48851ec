package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestForgetDuringEmbedding: a recall that read its candidates' texts
// before Forget and embeds them while Forget runs must not put the
// forgotten records' vectors back in the cache once Forget has returned
// (neither tier, neither by text nor by record id), and a live record's
// vector computed the same way is kept.
func TestForgetDuringEmbedding(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	db := openWM(t, emb, WorkingMemoryOptions{Disable: true})
	var recs []Record
	for i := range 20 {
		recs = append(recs, Record{Time: wmNow.Add(-time.Hour), Agent: "a", Session: fmt.Sprint("s", i), Role: "user",
			Text: fmt.Sprintf("the vault code is quokka-%d", i)})
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	emb.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := db.Recall(ctx, Query{Agent: "a", Text: "vault code quokka", K: 5})
		done <- err
	}()
	// One session a record: no successor inherits a forgotten word, so
	// Forget reindexes nothing and needs no exclusive lock (which would
	// wait for the recall held in the embedder).
	<-emb.started // the recall holds the texts and waits in the embedder
	forgotten := ids[:15]
	if _, err := db.Forget(ctx, Selector{IDs: forgotten}); err != nil {
		t.Fatal(err)
	}
	emb.armed.Store(false)
	close(emb.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	kept := 0
	for i := range recs {
		has, err := db.cache.has(cacheKey("a", db.construct(&recs[i])))
		if err != nil {
			t.Fatal(err)
		}
		_, byID := db.cache.getID(ids[i])
		if i < len(forgotten) && (has || byID) {
			t.Errorf("record %d, forgotten while its vector was computed: cached after Forget returned (by text %v, by id %v)", ids[i], has, byID)
		}
		if i >= len(forgotten) && has {
			kept++
		}
	}
	if emb.texts.Load() == 0 {
		t.Fatal("the recall embedded nothing: the test did not race Forget")
	}
	t.Logf("%d texts embedded, %d live records' vectors kept", emb.texts.Load(), kept)
}
