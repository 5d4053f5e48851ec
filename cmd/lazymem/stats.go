package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stats", "stats --db DIR [--json]", stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required)")
	asJSON := fs.Bool("json", false, "print the metrics as JSON (snake case, as the daemon's GET /v1/stats)")
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
	m := wire.FromMetrics(db.Metrics())
	if *asJSON {
		// The same JSON as the daemon's GET /v1/stats for an admin.
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(m); err != nil {
			return err
		}
		return db.Close()
	}
	printStats(stdout, m)
	return db.Close()
}

// printStats is the human-readable form of m: one topic a line, sizes in
// binary units, ratios where they say something (compression, cache).
func printStats(w io.Writer, m wire.Metrics) {
	l, x, c := m.Log, m.Index, m.Cache
	if l.Records == 0 {
		fmt.Fprintf(w, "records       0\n")
	} else {
		fmt.Fprintf(w, "records       %d (ids 1..%d)\n", l.Records, l.Records)
	}
	fmt.Fprintf(w, "log           %d sealed segments, %d records unsealed\n", l.Segments, l.TailRecords)
	ratio := 0.0
	if l.RawBytes > 0 {
		ratio = float64(l.DiskBytes) / float64(l.RawBytes)
	}
	fmt.Fprintf(w, "bytes         %s raw records, %s on disk (%.2fx)\n", human(l.RawBytes), human(int64(l.DiskBytes)), ratio)
	fmt.Fprintf(w, "deleted       %d awaiting compaction, %d deleted and %d slots dropped since open\n", l.Tombstones, l.Deleted, l.DroppedRecords)
	fmt.Fprintf(w, "index         %d documents in %d segments (%s) + %d in memory, %d terms in memory\n", x.Docs, x.Segments, human(x.SegmentBytes), x.MemDocs, x.Terms)
	fmt.Fprintf(w, "index work    %d flushes, %d merges, %d re-indexed from the log at open\n", x.Flushes, x.Merges, x.Rebuilt)
	if x.Amended > 0 {
		fmt.Fprintf(w, "index amended %d records indexed again after a forgotten turn before them (kept apart until a rebuild)\n", x.Amended)
	}
	lookups := c.MemHits + c.DiskHits + c.Computed + c.Shared
	hit := 0.0
	if lookups > 0 {
		hit = float64(c.MemHits+c.DiskHits) / float64(lookups)
	}
	fmt.Fprintf(w, "embed cache   %s: %d lookups since open, %.0f%% hits (%d memory, %d disk), %d embedded in %d calls\n",
		c.Embedder, lookups, 100*hit, c.MemHits, c.DiskHits, c.Computed, c.EmbedCalls)
	fmt.Fprintf(w, "format        store format %d\n", m.StoreFormat)
	errs := m.BackgroundErrors + m.IndexErrors + uint64(x.MergeErrors+x.FlushErrors+x.ContextErrors)
	if errs == 0 && m.IndexRepaired == "" && len(x.Repairs) == 0 {
		fmt.Fprintf(w, "health        ok: no repairs, no background errors\n")
		return
	}
	fmt.Fprintf(w, "health        %d background errors, %d batches not indexed, %d merge and %d flush errors\n", m.BackgroundErrors, m.IndexErrors, x.MergeErrors, x.FlushErrors)
	if m.IndexRepaired != "" {
		fmt.Fprintf(w, "repaired      the index was corrupt: moved to %s and rebuilt from the log\n", m.IndexRepaired)
	}
	for _, r := range x.Repairs {
		fmt.Fprintf(w, "repaired      %s\n", r)
	}
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
