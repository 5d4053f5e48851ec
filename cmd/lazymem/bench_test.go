package main

import (
	"strings"
	"testing"
)

func TestBenchZipf(t *testing.T) {
	if testing.Short() {
		t.Skip("bench run skipped in -short")
	}
	dir := t.TempDir()
	args := []string{"bench", "--corpus", "zipf", "--scale", "2000", "--agents", "5", "--max-words", "30", "--per-class", "2", "--rounds", "1", "--dir", dir, "--cache"}
	code, out, errs := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("bench --corpus zipf: code %d: %s", code, errs)
	}
	for _, want := range []string{"| lazymem engine (log + index), session context on | 2000 |",
		"| lazymem index alone (no log), session context on | 2000 |", "| bleve | 2000 |", "| mid/none | 2 |", "| cjk/session | 2 |", "| all | 40 |",
		"Corpus: Zipf(1.1) over 50000 words a script, 8-30 words a record, 5 agents (0.1 of them writing Chinese script), sessions of 20 turns on average, 90 days, seed 1."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The cached run reuses the build: the same ingest rows.
	code, out2, errs := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("cached run: code %d: %s", code, errs)
	}
	ingest := func(s string) string {
		a, _, _ := strings.Cut(s, "| class/filter")
		_, b, _ := strings.Cut(a, "| ingest")
		return b
	}
	if ingest(out) != ingest(out2) {
		t.Errorf("cached run rebuilt:\n%s\nvs\n%s", ingest(out), ingest(out2))
	}
	for _, bad := range [][]string{
		{"bench", "--corpus", "nope"},
		{"bench", "--corpus", "zipf", "--cache"},
		{"bench", "--corpus", "zipf", "--scale", "2000", "--exponent", "0.5"},
		{"bench", "--corpus", "zipf", "--scale", "2000", "--min-words", "30", "--max-words", "20"},
		{"bench", "--corpus", "zipf", "--scale", "2000", "--days", "3"},
		{"bench", "--corpus", "zipf", "--scale", "2000", "--session-turns", "-1"},
	} {
		if code, _, _ := runCLI(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
