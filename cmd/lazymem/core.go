package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/lazymem/lazymem/engine"
)

const coreSynopsis = `core --db DIR --agent A [--history] [--json]

Lists agent A's core memory: its live units (decisions, action items,
preferences, outcomes, facts), each citing the records it came from; with
--history the superseded ones too. --json prints a JSON array of units
with the fields id, type, topic, content, action_items, participants,
source_ids, time, confidence (and supersedes, superseded_by, agent).`

func cmdCore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("core", coreSynopsis, stderr)
	dir := fs.String("db", "", "store directory `DIR` (required)")
	agent := fs.String("agent", "", "`AGENT` whose core memory is listed (required)")
	history := fs.Bool("history", false, "include superseded units")
	asJSON := fs.Bool("json", false, "print a JSON array of units")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("core: --db is required")
	case *agent == "":
		return usagef("core: --agent is required")
	case len(pos) > 0:
		return usagef("core: unexpected argument %q", pos[0])
	}
	db, err := engine.Open(*dir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	units, err := db.Core(ctx, *agent, *history)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(nonNilUnits(units)); err != nil {
			return err
		}
	} else {
		printUnits(stdout, units)
	}
	return db.Close()
}
