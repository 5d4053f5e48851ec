package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestValidateBatch: ValidateBatch accepts what AppendBatch accepts and
// refuses what it refuses, with the same field error, writing nothing.
func TestValidateBatch(t *testing.T) {
	t.Chdir(t.TempDir())
	db, err := Open("store", memStoreOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	long := strings.Repeat("x", db.opts.MaxTextBytes+1)
	for _, recs := range [][]Record{
		{{Agent: "a", Text: "fine"}, {Agent: "a", Text: "also", Meta: map[string][]string{"k": {"v"}}}},
		{{Agent: "a", Text: "fine"}, {Agent: "", Text: "no agent"}},
		{{Agent: "a", Text: long}},
		{{Agent: "a", Text: "bad meta", Meta: map[string][]string{"": {"v"}}}},
		{},
	} {
		verr := db.ValidateBatch(recs, false)
		before := db.Metrics().Log.Next
		var aerr error
		if len(recs) > 0 || verr != nil {
			_, aerr = db.AppendBatch(ctx, recs)
		}
		if (verr == nil) != (aerr == nil) || verr != nil && verr.Error() != aerr.Error() {
			t.Errorf("%d records: ValidateBatch %v, AppendBatch %v", len(recs), verr, aerr)
		}
		if verr != nil && !errors.Is(verr, ErrInvalid) {
			t.Errorf("ValidateBatch %v does not wrap ErrInvalid", verr)
		}
		if verr != nil && db.Metrics().Log.Next != before {
			t.Errorf("a refused batch moved the log")
		}
	}
	if err := db.ValidateBatch([]Record{{Agent: "a"}}, true); err == nil || !strings.Contains(err.Error(), "record.text") {
		t.Errorf("single: %v, want record.text", err)
	}
}

// TestSelect: Select names the ids Forget then forgets.
func TestSelect(t *testing.T) {
	t.Chdir(t.TempDir())
	db, err := Open("store", memStoreOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.AppendBatch(ctx, []Record{
		{Agent: "a", Session: "s1", Text: "one"}, {Agent: "b", Session: "s1", Text: "two"},
		{Agent: "a", Session: "s2", Text: "three"}, {Agent: "a", Session: "s1", Text: "four"},
	}); err != nil {
		t.Fatal(err)
	}
	sel := Selector{Agent: "a", Sessions: []string{"s1"}}
	ids, err := db.Select(ctx, sel)
	if err != nil || !slices.Equal(ids, []uint64{1, 4}) {
		t.Fatalf("Select = %v, %v; want [1 4]", ids, err)
	}
	if ids, err := db.Select(ctx, Selector{IDs: []uint64{2, 3, 99}}); err != nil || !slices.Equal(ids, []uint64{2, 3}) {
		t.Fatalf("Select by ids = %v, %v; want [2 3]", ids, err)
	}
	res, err := db.Forget(ctx, sel)
	if err != nil || res.Forgotten != 2 {
		t.Fatalf("Forget = %+v, %v", res, err)
	}
	if ids, err := db.Select(ctx, sel); err != nil || len(ids) != 0 {
		t.Fatalf("Select after Forget = %v, %v", ids, err)
	}
	if _, err := db.Select(ctx, Selector{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty selector: %v", err)
	}
}
