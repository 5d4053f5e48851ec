package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

func TestExport(t *testing.T) {
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	ids := load(t, db)
	if _, err := db.Forget(ctx, engine.Selector{IDs: []uint64{ids[0]}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := db.Agent("a1", engine.Quota{}).Export(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var want []engine.Record
	for i, r := range corpus() {
		if r.Agent == "a1" && i != 0 {
			want = append(want, r)
		}
	}
	if n != len(want) {
		t.Fatalf("exported %d records, want %d (a1's, without the forgotten one)", n, len(want))
	}
	sc := bufio.NewScanner(&buf)
	for i := 0; sc.Scan(); i++ {
		var line struct {
			Time                       time.Time
			Agent, Session, Role, Text string
			Meta                       map[string][]string
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, sc.Bytes())
		}
		got := engine.Record{Time: line.Time, Agent: line.Agent, Session: line.Session, Role: line.Role, Text: line.Text, Meta: line.Meta}
		w := want[i]
		if !got.Time.Equal(w.Time) || got.Agent != w.Agent || got.Session != w.Session || got.Role != w.Role ||
			got.Text != w.Text || !reflect.DeepEqual(got.Meta, w.Meta) {
			t.Fatalf("line %d = %+v, want %+v", i+1, got, w)
		}
	}
}

// TestBackupOnline: a backup taken while writers append opens as a store
// holding every record acknowledged before the backup began, each intact,
// with forgotten records still forgotten and the index rebuilt.
func TestBackupOnline(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir, nil)
	defer db.Close()
	ctx := context.Background()
	ids := load(t, db)
	if _, err := db.Forget(ctx, engine.Selector{IDs: []uint64{ids[4]}}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var written sync.Map
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				r := engine.Record{Agent: "w", Text: fmt.Sprintf("writer %d line %d", w, i)}
				id, err := db.Append(ctx, r)
				if err != nil {
					t.Error(err)
					return
				}
				written.Store(id, r.Text)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond)
	ackedBefore := db.Metrics().Log.Next - 1
	bdir := filepath.Join(t.TempDir(), "backup")
	if err := db.Backup(ctx, bdir); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	if err := db.Backup(ctx, bdir); !errors.Is(err, engine.ErrExists) {
		t.Fatalf("a backup into a non-empty directory = %v", err)
	}
	b := openT(t, bdir, nil)
	defer b.Close()
	next := b.Metrics().Log.Next
	if next-1 < ackedBefore {
		t.Fatalf("the backup holds ids up to %d, %d were acknowledged before it", next-1, ackedBefore)
	}
	for id := uint64(1); id < next; id++ {
		r, err := b.Get(ctx, id)
		if id == ids[4] {
			if !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("the forgotten record is in the backup: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Get(%d) in the backup: %v", id, err)
		}
		if int(id) <= len(ids) {
			if r.Text != corpus()[id-1].Text {
				t.Fatalf("record %d differs in the backup", id)
			}
		} else if w, _ := written.Load(id); r.Text != w {
			t.Fatalf("record %d = %q in the backup, %q written", id, r.Text, w)
		}
	}
	res := recall(t, b, engine.Query{Agent: "a2", Text: "inventory connection pool", Mode: engine.ModeSparse})
	if len(res.Memories) != 1 {
		t.Fatalf("the backup's rebuilt index finds %v", ids2(res.Memories))
	}
}

// TestBackupKeepsFeedback: feedback counted since the last background
// flush is in the copy, with and without the index. (The core store's
// checkpoint was taken without flushing its WAL: the counts the backup
// had just committed without a sync were missing from the copy, and a
// cluster snapshot lost the feedback applied before it.)
func TestBackupKeepsFeedback(t *testing.T) {
	ctx := context.Background()
	for _, indexed := range []bool{false, true} {
		db, err := engine.Open(t.TempDir(), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := db.AppendBatch(ctx, []engine.Record{{Agent: "a", Text: "useful"}, {Agent: "a", Text: "useless"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(db.Feedback(ctx, 0, ids[:1], 1), db.Feedback(ctx, 0, ids[1:], -1)); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "copy")
		backup := db.Backup
		if indexed {
			backup = db.BackupIndexed
		}
		if err := errors.Join(backup(ctx, dir), db.Close()); err != nil {
			t.Fatal(err)
		}
		cp, err := engine.Open(dir, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		v0, err0 := cp.Value(ctx, ids[0])
		v1, err1 := cp.Value(ctx, ids[1])
		if err := errors.Join(err0, err1, cp.Close()); err != nil {
			t.Fatal(err)
		}
		if v0.Positive != 1 || v1.Negative != 1 || !v0.Queued {
			t.Errorf("indexed %v: the copy has +%d (queued %v) and -%d, want +1 (queued) and -1", indexed, v0.Positive, v0.Queued, v1.Negative)
		}
	}
}
