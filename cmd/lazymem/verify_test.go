package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/internal/storetest"
	"github.com/lazymem/lazymem/segment"
)

// damagedCLIStore ingests n records through the CLI, seals them into a
// Pebble sstable and flips bytes in the middle of it.
func damagedCLIStore(t *testing.T, n int) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "mem")
	var in strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, `{"time":"2026-05-01T10:%02d:%02dZ","agent":"a1","session":"s%d","role":"user","text":"note %d: service-%d pool resized to %d (%x)"}`+"\n",
			(i/60)%60, i%60, i/50, i, i%17, i*3, i*2654435761)
	}
	if code, _, errs := runCLI(t, in.String(), "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	storetest.DamageLogBlock(t, filepath.Join(db, "log"), segment.Options{})
	return db
}

func TestVerifyRepairCLI(t *testing.T) {
	db := damagedCLIStore(t, 3000)

	code, out, errs := runCLI(t, "", "verify", "--db", db)
	if code != 1 || !strings.Contains(out, "DAMAGED    segment") || !strings.Contains(out, " ids ") || !strings.Contains(errs, "damaged") {
		t.Fatalf("verify of a damaged store: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "verify", "--db", db, "--json")
	var rep struct {
		Records uint64 `json:"records"`
		Damage  []struct {
			Kind    string `json:"kind"`
			Segment uint64 `json:"segment"`
			Offset  int64  `json:"offset"`
			FirstID uint64 `json:"first_id"`
			LastID  uint64 `json:"last_id"`
		} `json:"damage"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("verify --json: code %d, %v\n%s", code, err, out)
	}
	if rep.Records != 3000 || len(rep.Damage) == 0 || rep.Damage[0].Kind != "segment" || rep.Damage[0].FirstID == 0 {
		t.Fatalf("verify --json: %+v", rep)
	}

	code, out, errs = runCLI(t, "", "repair", "--db", db)
	t.Logf("repair output:\n%s", out)
	if code != 0 || !strings.Contains(out, "quarantine "+filepath.Join(db, "quarantine")) || !strings.Contains(out, "repaired") {
		t.Fatalf("repair: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "", "verify", "--db", db); code != 0 || !strings.Contains(out, "no damage") {
		t.Fatalf("verify after repair: code %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "service-5 pool"); code != 0 || !strings.Contains(out, "service-5") {
		t.Fatalf("recall after repair: code %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ = runCLI(t, "", "repair", "--db", db); code != 0 || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("repair of a sound store: code %d\n%s", code, out)
	}
	if code, _, _ = runCLI(t, "", "verify"); code != 2 {
		t.Fatalf("verify without --db: code %d, want 2", code)
	}
}
