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
held in memory until its end); with --bad skip the bad lines are left out and
the rest stored as they are read.`

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
	var rewind io.Seeker
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
				rewind = f
			}
		}
		in = f
	} else {
		name = "standard input"
	}
	store, err := engine.Open(*db, engine.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	n, skipped, err := ingest(ctx, store, in, size, ingestConfig{
		skipBad: *bad == "skip", batch: *batch, maxReport: *maxReport, name: name, rewind: rewind,
	}, stderr)
	if err != nil {
		return err
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
	// rewind, when set, is in as a seeker (a regular file): reject mode
	// then checks the file in a first pass and reads it again to write,
	// instead of holding every record of the file in memory.
	rewind io.Seeker
}

// ingest reads JSONL records from in and appends them to db. In reject
// mode it parses and checks every line first and writes only if all are
// good, so a bad file leaves the store unchanged: a regular file is read
// twice (checked, then written in batches as it is read again), standard
// input is held in memory until its end.
//
// Why two passes: held whole, a file's records were most of the
// process's memory (200k Zipf records, 60 MB of JSONL: 534-553 MB
// resident, against 327-374 MB in two passes) and a larger file would
// not fit; on a machine whose page faults are dear (~10 µs) that memory
// was also an eighth of the ingest's time (3.81-3.95 s against 3.32-3.56
// s; docs/benchmarks/ingest-context.md, eleventh pass).
func ingest(ctx context.Context, db *engine.DB, in io.Reader, size int64, cfg ingestConfig, stderr io.Writer) (written, skipped int, err error) {
	now := time.Now()
	sc := &jsonlScan{db: db, now: now, cfg: cfg, stderr: stderr}
	switch {
	case cfg.skipBad:
		// Good lines are written as they are read, bad ones skipped.
		err := sc.run(ctx, in, size, "ingest", true, false)
		return sc.written, sc.bad, err
	case cfg.rewind != nil:
		if err := sc.run(ctx, in, size, "check", false, false); err != nil {
			return 0, 0, err
		}
		if sc.bad > 0 {
			return 0, 0, sc.rejected()
		}
		if _, err := cfg.rewind.Seek(0, io.SeekStart); err != nil {
			return 0, 0, fmt.Errorf("read %s again: %w", cfg.name, err)
		}
		// The second pass writes as it reads; a line that fails now
		// failed nowhere in the first pass: the file changed between
		// the two.
		err := sc.run(ctx, in, size, "ingest", true, true)
		if err == nil && sc.bad > 0 {
			err = fmt.Errorf("%s: changed while it was ingested: %d lines good in the first pass are bad now; %d records were written", cfg.name, sc.bad, sc.written)
		}
		return sc.written, 0, err
	}
	// Standard input in reject mode: held whole, then written in batches.
	sc.hold = true
	if err := sc.run(ctx, in, size, "ingest", false, false); err != nil {
		return 0, 0, err
	}
	if sc.bad > 0 {
		return 0, 0, sc.rejected()
	}
	pr := newProgress(stderr, "ingest", int64(len(sc.held)))
	defer pr.done()
	for all := sc.held; len(all) > 0; {
		n := min(cfg.batch, len(all))
		if _, err := db.AppendBatch(ctx, all[:n]); err != nil {
			return sc.written, 0, err
		}
		sc.written += n
		all = all[n:]
		pr.update(int64(sc.written), int64(sc.written))
	}
	return sc.written, 0, nil
}

// jsonlScan reads JSONL records, parsing and checking every line and
// reporting the bad ones.
type jsonlScan struct {
	db      *engine.DB
	now     time.Time // the time of a record that has none
	cfg     ingestConfig
	stderr  io.Writer
	bad     int             // bad lines seen
	written int             // records appended
	hold    bool            // keep every good record in held
	held    []engine.Record // with hold
}

func (sc *jsonlScan) rejected() error {
	return fmt.Errorf("%s: %d bad lines: nothing was written (fix them, or use --bad skip to store the good lines)", sc.cfg.name, sc.bad)
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
			case write && !(stopAtBad && sc.bad > 0):
				recs = append(recs, r)
			case sc.hold:
				sc.held = append(sc.held, r)
			}
		}
		if len(recs) >= sc.cfg.batch {
			if err := flush(); err != nil {
				return err
			}
		}
		pr.update(int64(sc.written+len(recs)+len(sc.held)), pos)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", sc.cfg.name, rerr)
		}
	}
	return flush()
}
