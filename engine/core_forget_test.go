package engine

import (
	"context"
	"testing"
	"time"
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
