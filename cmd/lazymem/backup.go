package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lazymem/lazymem/engine"
)

const backupSynopsis = `backup --db DIR --to DIR2

Writes a consistent copy of the store to DIR2 (new or empty) while it may
be in use by no other process (the store is locked while open). Restore by
opening DIR2, e.g. lazymem recall --db DIR2 ...; the index is rebuilt from
the log on the first open.`

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", backupSynopsis, stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required)")
	to := fs.String("to", "", "`DIR` to copy into, new or empty (required)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dbDir == "":
		return usagef("backup: --db is required")
	case *to == "":
		return usagef("backup: --to is required")
	case len(pos) > 0:
		return usagef("backup: unexpected argument %q", pos[0])
	}
	db, err := openStore(*dbDir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	stop := ticker(stderr, "backing up")
	start := time.Now()
	err = db.Backup(ctx, *to)
	stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %d records to %s in %v\n", db.Metrics().Index.Docs, *to, round(time.Since(start)))
	return db.Close()
}
