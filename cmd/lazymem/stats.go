package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stats", "stats --db DIR [--json]", stderr)
	dbDir := fs.String("db", "", "store directory (required)")
	asJSON := fs.Bool("json", false, "print the metrics as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dbDir == "" {
		return usagef("stats: --db is required")
	}
	if len(pos) > 0 {
		return usagef("stats: unexpected argument %q", pos[0])
	}
	db, err := openStore(*dbDir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	m := db.Metrics()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	l := m.Log
	fmt.Fprintf(stdout, "records       %d (ids 1..%d)\n", l.Next-1, l.Next-1)
	fmt.Fprintf(stdout, "log           %d sealed segments, %d records unsealed\n", l.Segments, l.TailRecords)
	ratio := 0.0
	if l.RawBytes > 0 {
		ratio = float64(l.DiskBytes) / float64(l.RawBytes)
	}
	fmt.Fprintf(stdout, "bytes         %s raw records, %s on disk (%.2fx)\n", human(l.RawBytes), human(int64(l.DiskBytes)), ratio)
	fmt.Fprintf(stdout, "deleted       %d awaiting compaction\n", l.Tombstones)
	fmt.Fprintf(stdout, "index         %+v\n", m.Index)
	fmt.Fprintf(stdout, "embed cache   %+v\n", m.Cache)
	return db.Close()
}

func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
