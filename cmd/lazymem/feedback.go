package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

const feedbackSynopsis = `feedback --db DIR (--up | --down) ID...

Records that the memories with these record ids were useful (--up) or not
(--down). A useful record is queued for the next consolidation; one with
more negative than positive feedback leaves the queue. (Over the daemon,
feedback can also name a recall by its recall_id; recall ids live in the
serving process, so the one-shot CLI takes record ids.)`

func cmdFeedback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("feedback", feedbackSynopsis, stderr)
	dir := fs.String("db", "", "store directory `DIR` (required)")
	up := fs.Bool("up", false, "the memories were useful (+1)")
	down := fs.Bool("down", false, "the memories were not useful (-1)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("feedback: --db is required")
	case *up == *down:
		return usagef("feedback: give exactly one of --up and --down")
	case len(pos) == 0:
		return usagef("feedback: no record ids")
	}
	ids, err := parseIDs("feedback", pos)
	if err != nil {
		return err
	}
	signal := 1
	if *down {
		signal = -1
	}
	db, err := engine.Open(*dir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Feedback(ctx, 0, ids, signal); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "feedback %+d recorded for %d records\n", signal, len(ids))
	return db.Close()
}
