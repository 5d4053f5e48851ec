package engine

import (
	"context"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
)

// TestCoreForgetSources: forgetting the source of a live unit deletes the
// unit and revives the unit it superseded; retention sees only live units'
// sources as pinned.
func TestCoreForgetSources(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{Clock: func() time.Time { return storeClock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := func(m int) time.Time { return storeClock.Add(time.Duration(m) * time.Minute) }
	ids, err := db.AppendBatch(ctx, []Record{
		{Time: at(0), Agent: "a", Session: "s", Role: "王磊", Text: "好，那我们决定上线时间定在十二月十五号。"},
		{Time: at(1), Agent: "a", Session: "s", Role: "李娜", Text: "嗯。"},
		{Time: at(2), Agent: "a", Session: "s", Role: "王磊", Text: "好，那我们决定上线时间推迟到十二月二十二号。"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := db.EndSession(ctx, "a", "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Units) != 2 || rep.Units[0].SupersededBy != rep.Units[1].ID {
		t.Fatalf("units %+v: want the second to supersede the first", rep.Units)
	}
	first, second := rep.Units[0].ID, rep.Units[1].ID
	if live := db.coreCitedLive(); live.GetCardinality() != 1 || !live.Contains(uint32(ids[2])) {
		t.Errorf("coreCitedLive = %v, want only %d", live.ToArray(), ids[2])
	}
	if db.coreCited(ids[0]) || !db.coreCited(ids[2]) || db.coreCited(ids[1]) {
		t.Errorf("cited: %v %v %v, want only the live unit's source pinned", db.coreCited(ids[0]), db.coreCited(ids[1]), db.coreCited(ids[2]))
	}
	db.mu.RLock()
	err = db.coreForgetSources(ctx, []uint64{ids[2]})
	db.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	units, err := db.Core(ctx, "a", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0].ID != first || !units[0].Live() {
		t.Fatalf("after forgetting the revision: %+v, want unit %d alone and live again (unit %d deleted)", units, first, second)
	}
	if !db.coreCited(ids[0]) || db.coreCited(ids[2]) {
		t.Error("the revived unit's source is not pinned, or the forgotten one still is")
	}
	v, err := db.Value(ctx, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if v.Labelled || v.Consolidated || len(v.Types) > 0 {
		t.Errorf("the forgotten record keeps pipeline state: %+v", v)
	}
	// Forgetting the last source leaves no unit.
	db.mu.RLock()
	err = db.coreForgetSources(ctx, []uint64{ids[0]})
	db.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if units, _ := db.Core(ctx, "a", true); len(units) != 0 {
		t.Errorf("units left: %+v", units)
	}
}

// TestCoreReembedOnEmbedderChange: units stored under one embedder get
// vectors of the next one the DB opens with, in the background.
func TestCoreReembedOnEmbedderChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, Options{Clock: func() time.Time { return storeClock }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(ctx, Record{Time: storeClock, Agent: "a", Session: "s", Role: "王磊", Text: "好，那我们决定上线时间定在十二月十五号。"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := db.EndSession(ctx, "a", "s"); err != nil || len(rep.Units) != 1 {
		t.Fatalf("EndSession: %v, %v", rep, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := embed.NewHash(embed.HashOptions{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{Embedder: h, Core: CoreOptions{FlushInterval: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vecLen := func() int {
		db.core.mu.Lock()
		defer db.core.mu.Unlock()
		for _, e := range db.core.units {
			return len(e.vec)
		}
		return -1
	}
	for range 2000 { // the test fails only if the pass never runs
		if vecLen() == 64 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("unit vector length %d, want 64", vecLen())
}
