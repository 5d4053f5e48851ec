package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lazymem/lazymem/engine"
)

const compactSynopsis = `compact --db DIR

Purges forgotten and expired records physically: afterwards no file of the
store holds their bytes (log segments, the log's and the cache's Pebble
files, the index).`

func cmdCompact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compact", compactSynopsis, stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dbDir == "" {
		return usagef("compact: --db is required")
	}
	if len(pos) > 0 {
		return usagef("compact: unexpected argument %q", pos[0])
	}
	db, err := openStore(*dbDir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	before := db.Metrics().Log.DiskBytes
	stop := ticker(stderr, "compacting")
	start := time.Now()
	err = db.Compact(ctx)
	stop()
	if err != nil {
		return err
	}
	after := db.Metrics().Log.DiskBytes
	fmt.Fprintf(stdout, "compacted in %v: log %s -> %s on disk\n", round(time.Since(start)), human(int64(before)), human(int64(after)))
	return db.Close()
}

// ticker shows "label 3s" on a terminal until stop is called: for the
// long commands whose progress is not counted.
func ticker(w io.Writer, label string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r%s %v ", label, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}
