package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestIngestRejectFileTwoPasses: in reject mode a regular file is checked
// in one pass and written in a second; every record arrives once, in file
// order, and a bad line anywhere (the last one here) writes nothing.
func TestIngestRejectFileTwoPasses(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n = 2500 // three batches of 1000, the last short
	for i := range n {
		fmt.Fprintf(&b, `{"agent":"a1","session":"s1","time":"2026-05-01T10:00:00Z","text":"note %d about the quarterly budget"}`+"\n", i)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(b.String()+`{"text":"no agent"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "mem")
	code, _, errs := runCLI(t, "", "ingest", "--db", db, bad)
	if code == 0 || !strings.Contains(errs, "bad.jsonl:2501:") || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("reject mode with a bad last line: exit %d\n%s", code, errs)
	}
	if _, out, _ := runCLI(t, "", "stats", "--db", db); !strings.Contains(out, "records       0") {
		t.Fatalf("reject mode wrote records:\n%s", out)
	}
	code, out, errs := runCLI(t, "", "ingest", "--db", db, good)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("ingested %d records (0 bad lines skipped)", n)) {
		t.Fatalf("reject mode, good file: exit %d\n%s\n%s", code, out, errs)
	}
	store, err := engine.Open(db, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []uint64{1, 1000, 1001, n} {
		r, err := store.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("note %d about", id-1); !strings.HasPrefix(r.Text, want) {
			t.Fatalf("record %d: %q, want it to start with %q", id, r.Text, want)
		}
	}
	if next := store.Metrics().Log.Next; next != n+1 {
		t.Fatalf("the store holds %d records, want %d", next-1, n)
	}
}

// changingFile serves first, then second after a Seek: a file rewritten
// between ingest's two passes.
type changingFile struct {
	first, second []byte
	r             *bytes.Reader
}

func (f *changingFile) Read(p []byte) (int, error) {
	if f.r == nil {
		f.r = bytes.NewReader(f.first)
	}
	return f.r.Read(p)
}

func (f *changingFile) Seek(off int64, whence int) (int64, error) {
	f.r = bytes.NewReader(f.second)
	return f.r.Seek(off, whence)
}

// TestIngestFileChangedBetweenPasses: a line that was good in the check
// pass and is bad when read again stops the writing there, and the error
// says the file changed and how many records were written.
func TestIngestFileChangedBetweenPasses(t *testing.T) {
	store, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	line := func(i int) string {
		return fmt.Sprintf(`{"agent":"a1","text":"line %d"}`+"\n", i)
	}
	var first, second strings.Builder
	for i := range 10 {
		first.WriteString(line(i))
		if i == 6 {
			second.WriteString(`{"text":"the agent is gone"}` + "\n")
		} else {
			second.WriteString(line(i))
		}
	}
	f := &changingFile{first: []byte(first.String()), second: []byte(second.String())}
	var errs bytes.Buffer
	written, _, err := ingest(context.Background(), store, f, 0, ingestConfig{batch: 3, maxReport: 5, name: "f.jsonl", again: f}, &errs)
	if err == nil || !strings.Contains(err.Error(), "changed while it was ingested") || !strings.Contains(errs.String(), "f.jsonl:7:") {
		t.Fatalf("err %v, stderr %q", err, errs.String())
	}
	// Batches of 3: lines 1-3 and 4-6 were written before line 7.
	if written != 6 || !strings.Contains(err.Error(), "6 records were written") {
		t.Fatalf("written %d, err %v", written, err)
	}
	if next := store.Metrics().Log.Next; next != 7 {
		t.Fatalf("the store holds %d records, want 6", next-1)
	}
}

// TestIngestRejectStdin: standard input in reject mode is checked while a
// temporary copy is made, then written from the copy: a bad line writes
// nothing, a good stream arrives whole and in order, and no copy is left.
func TestIngestRejectStdin(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, `{"agent":"a1","session":"s1","text":"piped note %d"}`+"\n", i)
	}
	db := filepath.Join(t.TempDir(), "mem")
	code, _, errs := runCLI(t, b.String()+"not json\n", "ingest", "--db", db, "-")
	if code == 0 || !strings.Contains(errs, "standard input:1501:") || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("a bad piped line: exit %d\n%s", code, errs)
	}
	if _, out, _ := runCLI(t, "", "stats", "--db", db); !strings.Contains(out, "records       0") {
		t.Fatalf("reject mode wrote piped records:\n%s", out)
	}
	code, out, errs := runCLI(t, b.String(), "ingest", "--db", db, "-")
	if code != 0 || !strings.Contains(out, "ingested 1500 records (0 bad lines skipped)") {
		t.Fatalf("a good pipe: exit %d\n%s\n%s", code, out, errs)
	}
	store, err := engine.Open(db, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []uint64{1, 1000, 1500} {
		r, err := store.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("piped note %d", id-1); r.Text != want {
			t.Fatalf("record %d: %q, want %q", id, r.Text, want)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
