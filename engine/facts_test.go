package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestFactsKeepRankings: a recall that takes its candidates' facts from
// the fact table (and their vectors by the key the table holds) ranks
// exactly as one that reads every candidate from the log, which is what a
// recall does with an empty table (and what every recall did before the
// table). The scenario history (questions, pleasantries, revised
// decisions, two languages) is asked every question in three modes, each
// time three ways: with the table emptied first (the reference), again
// (facts and vectors by id known), and with the memory tier emptied
// (facts known, vectors found on disk by the facts' keys). Memories,
// scores, reasons and notes must be identical, and the last two must have
// left candidates unread.
func TestFactsKeepRankings(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.FixedZone("CST", 8*3600))
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type question struct {
		Text, Agent, Session string
		K                    int
	}
	var batch []Record
	readLines(t, filepath.Join("testdata", "scenarios", "records.jsonl"), func(b []byte) error {
		var r Record
		err := json.Unmarshal(b, &r)
		batch = append(batch, r)
		return err
	})
	var qs []question
	readLines(t, filepath.Join("testdata", "scenarios", "questions.jsonl"), func(b []byte) error {
		var q question
		err := json.Unmarshal(b, &q)
		qs = append(qs, q)
		return err
	})
	if len(batch) < 100 || len(qs) < 50 {
		t.Fatalf("read %d records and %d questions", len(batch), len(qs))
	}
	if _, err := db.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name string
		q    func(q question) Query
	}
	variants := []variant{
		{"lazy", func(q question) Query {
			return Query{Agent: q.Agent, Text: q.Text, CurrentSession: q.Session, K: q.K, Now: now, ParseTime: true, Explain: true}
		}},
		{"lazy-weighted-k3", func(q question) Query {
			return Query{Agent: q.Agent, Text: q.Text, K: 3, Candidates: 8, Fusion: FusionWeighted, Now: now, Explain: true}
		}},
		{"sparse", func(q question) Query {
			return Query{Agent: q.Agent, Text: q.Text, CurrentSession: q.Session, K: q.K, Mode: ModeSparse, Now: now, ParseTime: true, Explain: true}
		}},
	}
	var unreadWarm, unreadDisk, diskHits int
	for _, v := range variants {
		for _, q := range qs {
			name := fmt.Sprintf("%s %q", v.name, q.Text)
			resetFacts(&db.facts) // every candidate is read
			ref, _ := recallPlan(t, db, v.q(q))
			warm, unread := recallPlan(t, db, v.q(q))
			unreadWarm += unread
			sameResult(t, name+" warm", ref, warm)
			db.cache.mem.Clear()
			disk, unread := recallPlan(t, db, v.q(q))
			unreadDisk += unread
			diskHits += disk.Stats.DiskHits
			sameResult(t, name+" vectors on disk", ref, disk)
		}
	}
	if n, bytes := db.facts.size(); n == 0 || bytes == 0 {
		t.Fatalf("the fact table holds %d facts in %d bytes", n, bytes)
	}
	if unreadWarm == 0 || unreadDisk == 0 || diskHits == 0 {
		t.Fatalf("candidates left unread: %d warm, %d with the vectors on disk (%d disk hits): the fact table was not used", unreadWarm, unreadDisk, diskHits)
	}
	t.Logf("candidates left unread: %d warm, %d with the vectors on disk", unreadWarm, unreadDisk)
}

// recallPlan runs q and returns its result and how many candidates it did
// not read from the log.
func recallPlan(t *testing.T, db *DB, q Query) (*Result, int) {
	t.Helper()
	p, err := db.recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	unread := 0
	for i := range p.cands {
		if !p.cands[i].fetched {
			unread++
		}
	}
	return &p.res, unread
}

func sameResult(t *testing.T, name string, want, got *Result) {
	t.Helper()
	if !reflect.DeepEqual(want.Memories, got.Memories) {
		t.Fatalf("%s: memories differ:\n got %s\nwant %s", name, memoryLines(got), memoryLines(want))
	}
	ws, gs := want.Stats, got.Stats
	ws.Durations, gs.Durations = StageDurations{}, StageDurations{}
	ws.CacheHits, gs.CacheHits, ws.DiskHits, gs.DiskHits, ws.Embedded, gs.Embedded = 0, 0, 0, 0, 0, 0
	if !reflect.DeepEqual(ws, gs) {
		t.Fatalf("%s: stats differ:\n got %+v\nwant %+v", name, gs, ws)
	}
}

func memoryLines(r *Result) string {
	s := ""
	for _, m := range r.Memories {
		s += fmt.Sprintf("\n  #%d %.9g %v", m.ID, m.Score, m.Reasons)
	}
	return s
}

func resetFacts(t *factTable) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pages, t.n = nil, 0
}

// readLines calls fn with every non-empty line of path.
func readLines(t *testing.T, path string, fn func([]byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
