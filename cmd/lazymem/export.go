package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

const exportSynopsis = `export --db DIR [--agent A]

Writes the live records (of agent A, or of every agent) to standard output
as JSONL, one record per line in the format lazymem ingest reads:
  lazymem export --db ./mem --agent a1 > a1.jsonl
  lazymem ingest --db ./copy a1.jsonl
Forgotten and expired records are not written; ids are not kept.`

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", exportSynopsis, stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required)")
	agent := fs.String("agent", "", "export only the records of `AGENT` (default: every agent)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dbDir == "" {
		return usagef("export: --db is required")
	}
	if len(pos) > 0 {
		return usagef("export: unexpected argument %q", pos[0])
	}
	db, err := openStore(*dbDir, engine.Options{DisableEmbedder: true})
	if err != nil {
		return err
	}
	defer db.Close()
	p := newProgress(stderr, "exporting", 0)
	n, err := db.Export(ctx, *agent, &lineCounter{w: stdout, p: p})
	p.done()
	if err != nil {
		return err
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "exported %d records\n", n)
	}
	return db.Close()
}

// lineCounter passes writes through and reports the lines written.
type lineCounter struct {
	w     io.Writer
	p     *progress
	lines int64
}

func (c *lineCounter) Write(b []byte) (int, error) {
	for _, x := range b {
		if x == '\n' {
			c.lines++
		}
	}
	c.p.update(c.lines, 0)
	return c.w.Write(b)
}
