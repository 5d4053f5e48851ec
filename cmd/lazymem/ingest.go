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
is written; with --bad skip the bad lines are left out and the rest stored.`

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
	name := pos[0]
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
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
		skipBad: *bad == "skip", batch: *batch, maxReport: *maxReport, name: name,
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
}

// ingest reads JSONL records from in and appends them to db. In reject
// mode it parses and checks every line first and writes only if all are
// good, so a bad file leaves the store unchanged.
func ingest(ctx context.Context, db *engine.DB, in io.Reader, size int64, cfg ingestConfig, stderr io.Writer) (written, skipped int, err error) {
	now := time.Now()
	br := bufio.NewReaderSize(in, 1<<20)
	var recs []engine.Record
	var badLines int
	report := func(line int, err error) {
		badLines++
		if badLines <= cfg.maxReport {
			fmt.Fprintf(stderr, "%s:%d: %v\n", cfg.name, line, err)
		} else if badLines == cfg.maxReport+1 {
			fmt.Fprintf(stderr, "%s: more bad lines not shown (--max-errors %d)\n", cfg.name, cfg.maxReport)
		}
	}
	pr := newProgress(stderr, "ingest", size)
	defer pr.done()
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			return err
		}
		written += len(recs)
		recs = recs[:0]
		return nil
	}
	var pos int64
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return written, badLines, err
		}
		b, rerr := br.ReadBytes('\n')
		pos += int64(len(b))
		if len(bytes.TrimSpace(b)) > 0 {
			r, perr := wire.ParseRecord(b, now)
			if perr == nil {
				perr = db.Check(r)
			}
			if perr != nil {
				report(line, perr)
			} else {
				recs = append(recs, r)
			}
		}
		if cfg.skipBad && len(recs) >= cfg.batch {
			if err := flush(); err != nil {
				return written, badLines, err
			}
		}
		pr.update(int64(written+len(recs)), pos)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return written, badLines, fmt.Errorf("read %s: %w", cfg.name, rerr)
		}
	}
	if badLines > 0 && !cfg.skipBad {
		return 0, 0, fmt.Errorf("%s: %d bad lines: nothing was written (fix them, or use --bad skip to store the good lines)", cfg.name, badLines)
	}
	// Reject mode holds the whole file here; write it in batches.
	all := recs
	for len(all) > 0 {
		n := min(cfg.batch, len(all))
		recs = all[:n]
		if err := flush(); err != nil {
			return written, badLines, err
		}
		all = all[n:]
		pr.update(int64(written), pos)
	}
	return written, badLines, nil
}
