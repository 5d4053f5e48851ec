package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

func cmdRepair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := runStoreCheck("repair", args, stdout, stderr, engine.Repair, printRepair)
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
