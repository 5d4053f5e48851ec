package engine

import (
	"context"
	"runtime/debug"
	"testing"
)

// TestOpenCollectsGarbage: Open of a store holding records runs a
// collection before it returns, none with Options.KeepOpenGarbage, none
// for an empty store. The collector's own pacing is off meanwhile, so
// every cycle counted is one somebody asked for.
func TestOpenCollectsGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	dir := t.TempDir()
	gc := newGCProbe()
	opens := func(opts Options) uint64 {
		t.Helper()
		before := gc.read()
		db, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		n := gc.read() - before
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := opens(Options{}); n != 0 {
		t.Fatalf("Open of an empty store ran %d collections, want 0", n)
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(context.Background(), Record{Agent: "a1", Text: "the budget was approved"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := opens(Options{}); n == 0 {
		t.Fatal("Open of a store holding a record ran no collection")
	}
	if n := opens(Options{KeepOpenGarbage: true}); n != 0 {
		t.Fatalf("Open with KeepOpenGarbage ran %d collections, want 0", n)
	}
}
