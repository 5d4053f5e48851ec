package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

const ingestSynopsis = `ingest --db DIR [--bad reject|skip] [--batch N] FILE.jsonl|-

Appends one record per line of FILE (or standard input for -). A line is a
JSON object with the fields:
  time     RFC 3339 time, e.g. "2026-05-01T14:03:00Z" (default: now)
  agent    the agent (tenant) the record belongs to (required)
  session  the conversation it is part of
  role     the speaker: user, assistant, tool, or a name
  text     the content (required)
  meta     object of string to string or array of strings, e.g.
           {"tags": ["db", "infra"], "intent": "decision"}
Blank lines are ignored. Bad lines are reported with their line numbers.
With --bad reject (the default) one bad line stops the ingest before anything
is written (a file is read twice: checked, then written; standard input is
copied to a temporary file in $TMPDIR as it is checked, and written from the
copy); with --bad skip the bad lines are left out and the rest stored as they
are read.`

func cmdIngest(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("ingest", ingestSynopsis, stderr)
	db := fs.String("db", "", "store directory `DIR` (created if missing) (required)")
	bad := fs.String("bad", "reject", "what to do with bad lines (`ACTION`): reject (write nothing) or skip (write the good ones)")
	batch := fs.Int("batch", 1000, "records per durable batch")
	maxReport := fs.Int("max-errors", 20, "how many bad lines to print")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *db == "":
		return usagef("ingest: --db is required")
	case len(pos) != 1:
		return usagef("ingest: want exactly one input file (or - for standard input), got %d", len(pos))
	case *bad != "reject" && *bad != "skip":
		return usagef("ingest: --bad must be reject or skip, got %q", *bad)
	case *batch < 1 || *batch > 100000:
		return usagef("ingest: --batch must be in [1, 100000], got %d", *batch)
	}
	var in io.Reader = stdin
	var size int64
	var again io.ReadSeeker
	name := pos[0]
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
			if st.Mode().IsRegular() {
				again = f
			}
		}
		in = f
	} else {
		name = "standard input"
	}
	if *bad == "reject" && again == nil {
		// A pipe cannot be read twice: its lines are copied to a
		// temporary file as they are checked, and written from it.
		tmp, err := os.CreateTemp("", "lazymem-ingest-*.jsonl")
		if err != nil {
			return fmt.Errorf("ingest: a temporary copy of %s: %w", name, err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		in, again = io.TeeReader(in, tmp), tmp
	}
	store, err := engine.Open(*db, engine.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	n, skipped, err := ingest(ctx, store, in, size, ingestConfig{
		skipBad: *bad == "skip", batch: *batch, maxReport: *maxReport, name: name, again: again,
	}, stderr)
	if err != nil {
		return err
	}
	// The index as it is at rest (one segment instead of the several a
	// load's merges leave): the store's next recalls, often new processes
	// of this command, search it so.
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "\rsettling the index... ")
	}
	if err := store.Settle(); err != nil {
		return err
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "done\n")
	}
	m := store.Metrics()
	fmt.Fprintf(stdout, "ingested %d records (%d bad lines skipped) into %s; the store holds %d records\n",
		n, skipped, *db, m.Log.Next-1)
	return store.Close()
}

type ingestConfig struct {
	skipBad   bool
	batch     int
	maxReport int
	name      string
	// again is what reject mode reads in its second pass, from its start:
	// in itself for a regular file, else a copy made while in was read.
	again io.ReadSeeker
}

// ingest reads JSONL records from in and appends them to db. In reject
// mode it parses and checks every line first and writes only if all are
// good, so a bad file leaves the store unchanged: it reads in to check it,
// then cfg.again (the same file, or a copy of standard input) to write, in
// batches as it reads.
//
// Why two passes rather than the records held until the end: held, a
// file's records were most of the process's memory (200k Zipf records, 60
// MB of JSONL: 534-553 MB resident, against 327-374 MB in two passes) and
// a larger file would not fit; on a machine whose page faults are dear
// (~10 µs) that memory was also an eighth of the ingest's time (3.81-3.95
// s against 3.32-3.56 s; docs/benchmarks/ingest-context.md, eleventh
// pass).
func ingest(ctx context.Context, db *engine.DB, in io.Reader, size int64, cfg ingestConfig, stderr io.Writer) (written, skipped int, err error) {
	sc := &jsonlScan{db: db, now: time.Now(), cfg: cfg, stderr: stderr}
	if cfg.skipBad {
		// Good lines are written as they are read, bad ones skipped.
		err := sc.run(ctx, in, size, "ingest", true, false)
		return sc.written, sc.bad, err
	}
	if cfg.again == nil {
		return 0, 0, fmt.Errorf("ingest: reject mode needs %s twice", cfg.name)
	}
	if err := sc.run(ctx, in, size, "check", false, false); err != nil {
		return 0, 0, err
	}
	if sc.bad > 0 {
		return 0, 0, fmt.Errorf("%s: %d bad lines: nothing was written (fix them, or use --bad skip to store the good lines)", cfg.name, sc.bad)
	}
	if _, err := cfg.again.Seek(0, io.SeekStart); err != nil {
		return 0, 0, fmt.Errorf("read %s again: %w", cfg.name, err)
	}
	// The second pass writes as it reads; a line that fails now failed
	// nowhere in the first pass: the file changed between the two.
	err = sc.run(ctx, cfg.again, size, "ingest", true, true)
	if err == nil && sc.bad > 0 {
		err = fmt.Errorf("%s: changed while it was ingested: %d lines good in the first pass are bad now; %d records were written", cfg.name, sc.bad, sc.written)
	}
	return sc.written, 0, err
}

// jsonlScan reads JSONL records, parsing and checking every line and
// reporting the bad ones.
type jsonlScan struct {
	db      *engine.DB
	now     time.Time // the time of a record that has none
	cfg     ingestConfig
	stderr  io.Writer
	bad     int // bad lines seen
	written int // records appended
}

// run reads in to its end. With write, the good records are appended in
// batches of cfg.batch as they are read; with stopAtBad too, nothing more
// is written once a line is bad (the rest is still read and reported).
func (sc *jsonlScan) run(ctx context.Context, in io.Reader, size int64, label string, write, stopAtBad bool) error {
	br := bufio.NewReaderSize(in, 1<<20)
	var recs []engine.Record
	pr := newProgress(sc.stderr, label, size)
	defer pr.done()
	flush := func() error {
		if len(recs) == 0 || stopAtBad && sc.bad > 0 {
			return nil
		}
		if _, err := sc.db.AppendBatch(ctx, recs); err != nil {
			return err
		}
		sc.written += len(recs)
		clear(recs) // do not pin the batch's texts
		recs = recs[:0]
		return nil
	}
	var pos int64
	good := 0 // lines parsed and checked without error
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, rerr := br.ReadBytes('\n')
		pos += int64(len(b))
		if len(bytes.TrimSpace(b)) > 0 {
			r, perr := wire.ParseRecord(b, sc.now)
			if perr == nil {
				perr = sc.db.Check(r)
			}
			switch {
			case perr != nil:
				sc.bad++
				if sc.bad <= sc.cfg.maxReport {
					fmt.Fprintf(sc.stderr, "%s:%d: %v\n", sc.cfg.name, line, perr)
				} else if sc.bad == sc.cfg.maxReport+1 {
					fmt.Fprintf(sc.stderr, "%s: more bad lines not shown (--max-errors %d)\n", sc.cfg.name, sc.cfg.maxReport)
				}
			default:
				good++
				if write && !(stopAtBad && sc.bad > 0) {
					recs = append(recs, r)
				}
			}
		}
		if len(recs) >= sc.cfg.batch {
			if err := flush(); err != nil {
				return err
			}
		}
		pr.update(int64(good), pos)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", sc.cfg.name, rerr)
		}
	}
	return flush()
}
