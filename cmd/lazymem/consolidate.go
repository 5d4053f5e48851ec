package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

const consolidateSynopsis = `consolidate --db DIR --agent A [--session S] [--id N ...] [--json]

Turns agent A's high-value records into units of core memory: the records
not labelled yet are scored (decisions, action items, preferences pass the
value threshold), then every queued record (by value, by being recalled
often, by positive feedback) and every --id becomes units with the
rule-based consolidator. A later unit on the same topic supersedes the
earlier one.`

func cmdConsolidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("consolidate", consolidateSynopsis, stderr)
	dir := fs.String("db", "", "store directory `DIR` (required)")
	agent := fs.String("agent", "", "`AGENT` whose records are consolidated (required)")
	session := fs.String("session", "", "only `SESSION`")
	var idFlags stringList
	fs.Var(&idFlags, "id", "consolidate the record `ID` whatever its value (repeatable, or comma-separated)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("consolidate: --db is required")
	case *agent == "":
		return usagef("consolidate: --agent is required")
	case len(pos) > 0:
		return usagef("consolidate: unexpected argument %q", pos[0])
	}
	ids, err := parseIDs("consolidate: --id", idFlags)
	if err != nil {
		return err
	}
	db, err := engine.Open(*dir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := db.Consolidate(ctx, *agent, engine.ConsolidateOptions{Session: *session, IDs: ids})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Labelled   int                `json:"labelled"`
			Selected   int                `json:"selected"`
			Units      []consolidate.Unit `json:"units"`
			Superseded []uint64           `json:"superseded"`
			Micros     int64              `json:"duration_us"`
		}{rep.Labelled, rep.Selected, nonNilUnits(rep.Units), nonNilIDs(rep.Superseded), rep.Duration.Microseconds()}); err != nil {
			return err
		}
		return db.Close()
	}
	fmt.Fprintf(stdout, "labelled %d records, consolidated %d into %d units (%d superseded) in %v\n",
		rep.Labelled, rep.Selected, len(rep.Units), len(rep.Superseded), round(rep.Duration))
	printUnits(stdout, rep.Units)
	return db.Close()
}

func parseIDs(what string, list []string) ([]uint64, error) {
	var ids []uint64
	for _, s := range list {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			return nil, usagef("%s: %q is not a record id (a positive integer)", what, s)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func nonNilUnits(us []consolidate.Unit) []consolidate.Unit {
	if us == nil {
		return []consolidate.Unit{}
	}
	return us
}

func nonNilIDs(ids []uint64) []uint64 {
	if ids == nil {
		return []uint64{}
	}
	return ids
}

// printUnits prints units one per paragraph, history marked.
func printUnits(w io.Writer, us []consolidate.Unit) {
	for _, u := range us {
		state := ""
		if !u.Live() {
			state = fmt.Sprintf(" (superseded by %d)", u.SupersededBy)
		}
		fmt.Fprintf(w, "#%d %s [%s] %s%s\n", u.ID, u.Type, u.Topic, oneLine(u.Content), state)
		for _, a := range u.ActionItems {
			due := ""
			if !a.Due.IsZero() {
				due = " by " + a.Due.Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "    - %s: %s%s\n", a.Owner, a.Task, due)
		}
		fmt.Fprintf(w, "    sources %v, %s, confidence %.2f\n", u.SourceIDs, u.Time.Format("2006-01-02 15:04"), u.Confidence)
	}
}
