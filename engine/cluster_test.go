package engine

import (
	"context"
	"errors"
	"fmt"
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

// TestBackupIndexed: a copy made by BackupIndexed opens with its index
// loaded (nothing re-indexed) where Backup's copy re-indexes every
// record, answers the same recall as the store, and keeps a forgotten
// record forgotten.
func TestBackupIndexed(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("store", memStoreOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var recs []Record
	for i := range 300 {
		recs = append(recs, Record{Agent: "a", Session: fmt.Sprint("s", i%7), Text: fmt.Sprintf("note %d about the harbour crane number %d", i, i%11)})
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Forget(ctx, Selector{IDs: ids[:5]}); err != nil {
		t.Fatal(err)
	}
	q := Query{Agent: "a", Text: "harbour crane number 3", K: 20, Mode: ModeSparse}
	want, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir     string
		backup  func(context.Context, string) error
		rebuilt uint64
	}{{"plain", db.Backup, 295}, {"indexed", db.BackupIndexed, 0}} {
		if err := tc.backup(ctx, tc.dir); err != nil {
			t.Fatal(err)
		}
		cp, err := Open(tc.dir, memStoreOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		m := cp.Metrics().Index
		got, err := cp.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if m.Rebuilt != tc.rebuilt || m.Docs != 295 {
			t.Errorf("%s: re-indexed %d, %d docs; want %d, 295", tc.dir, m.Rebuilt, m.Docs, tc.rebuilt)
		}
		if len(got.Memories) != len(want.Memories) {
			t.Fatalf("%s: %d memories, the store %d", tc.dir, len(got.Memories), len(want.Memories))
		}
		for i := range got.Memories {
			if got.Memories[i].ID != want.Memories[i].ID || got.Memories[i].Score != want.Memories[i].Score {
				t.Errorf("%s: memory %d: %d (%v), the store %d (%v)", tc.dir, i, got.Memories[i].ID, got.Memories[i].Score, want.Memories[i].ID, want.Memories[i].Score)
			}
		}
		if _, err := cp.Get(ctx, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: forgotten record: %v", tc.dir, err)
		}
		if err := cp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
