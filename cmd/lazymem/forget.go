package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/lazymem/lazymem/engine"
)

const forgetSynopsis = `forget --db DIR --agent A [--session S]... [--role R]... [--where K=V]... [--since T] [--until T] [--id N]... [--json]

Forgets records of agent A: all of them, or those of the given sessions,
roles, metadata, time range or ids (filters combine with AND, values of one
flag with OR), as POST /v1/forget does. From then on no command returns
them; their bytes leave the files at the next compaction (lazymem compact).`

func cmdForget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("forget", forgetSynopsis, stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required)")
	agent := fs.String("agent", "", "`AGENT` whose records are forgotten (required)")
	var sessions, roles, idStrs stringList
	fs.Var(&sessions, "session", "forget only the records of `SESSION` (repeatable)")
	fs.Var(&roles, "role", "forget only the records of speaker `ROLE` (repeatable)")
	fs.Var(&idStrs, "id", "forget only the record `ID` (repeatable)")
	where := kvList{}
	fs.Var(where, "where", "forget only records with metadata `KEY=VALUE` (repeatable; values of one key OR, keys AND)")
	since := fs.String("since", "", "forget only records at or after `TIME`: RFC 3339, a date (2026-05-01), or an age (36h, 7d)")
	until := fs.String("until", "", "forget only records before `TIME` (same forms as --since: --until 90d forgets what is older than 90 days)")
	asJSON := fs.Bool("json", false, `print {"forgotten": N} as JSON`)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dbDir == "":
		return usagef("forget: --db is required")
	case *agent == "":
		return usagef("forget: --agent is required (there is no forgetting of everything)")
	case len(pos) > 0:
		return usagef("forget: unexpected argument %q", pos[0])
	}
	sel := engine.Selector{Agent: *agent, Sessions: sessions, Roles: roles}
	if len(where) > 0 {
		sel.Where = where
	}
	now := time.Now()
	if sel.Since, err = parseWhen(*since, now); err != nil {
		return usagef("forget: --since: %v", err)
	}
	if sel.Until, err = parseWhen(*until, now); err != nil {
		return usagef("forget: --until: %v", err)
	}
	for _, s := range idStrs {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil || id == 0 {
			return usagef("forget: --id %q: want a record id (a positive integer)", s)
		}
		sel.IDs = append(sel.IDs, id)
	}
	// With an embedder so the embedding cache is open: Forget drops the
	// forgotten texts' vectors (of every embedder) from it.
	db, err := openStore(*dbDir, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.Forget(ctx, sel)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(map[string]int{"forgotten": res.Forgotten}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "forgot %d records of agent %s", res.Forgotten, *agent)
		if res.Reindexed > 0 {
			fmt.Fprintf(stdout, " (%d records re-indexed)", res.Reindexed)
		}
		fmt.Fprintln(stdout, "; run lazymem compact to purge their bytes from the files")
	}
	return db.Close()
}

// openStore opens an existing store: a directory that holds none is an
// error (every command but ingest, which creates stores).
func openStore(dir string, opts engine.Options) (*engine.DB, error) {
	opts.MustExist = true
	return engine.Open(dir, opts)
}
