package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

func cmdRepair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("repair", "repair --db DIR [--json]", stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required; the store must not be open)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dbDir == "" {
		return usagef("repair: --db is required")
	}
	if len(pos) > 0 {
		return usagef("repair: unexpected argument %q", pos[0])
	}
	prog := stageProgress(stderr, "repair")
	rr, err := engine.Repair(*dbDir, engine.VerifyOptions{Progress: prog.update})
	prog.done()
	if rr != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rr); jerr != nil && err == nil {
				err = jerr
			}
		} else {
			printRepair(stdout, rr)
		}
	}
	return err
}

func printRepair(w io.Writer, rr *engine.RepairReport) {
	if rr.Before != nil && rr.Before.OK() {
		fmt.Fprintln(w, "ok         no damage found; nothing to repair")
		return
	}
	if rr.Before != nil {
		printVerify(w, rr.Before)
	}
	fmt.Fprintf(w, "quarantine %s\n", rr.Quarantine)
	for _, m := range rr.Moved {
		fmt.Fprintf(w, "set aside  %s\n", m)
	}
	fmt.Fprintf(w, "lost       %d records that could not be read\n", rr.LostRecords)
	if rr.After != nil && rr.After.OK() {
		fmt.Fprintf(w, "repaired   the store opens and verifies clean (%d live records)\n", rr.After.Live)
	}
}
