package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

const recallSynopsis = `recall --db DIR --agent A [filters] [flags] "query"

Finds the memories of agent A that answer the query. Relative time in the
query ("yesterday", "last week", "two days ago", "昨天", "最近三天") becomes a
time filter unless --no-time-parse is given.`

type recallFlags struct {
	db, agent, mode, fusion, since, until, now, session, embedder, tier string
	agents, sessions, roles                                             stringList
	where, not                                                          kvList
	k, candidates, turns                                                int
	json, explain, noTime                                               bool
}

func cmdRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("recall", recallSynopsis, stderr)
	f := recallFlags{where: kvList{}, not: kvList{}}
	fs.StringVar(&f.db, "db", "", "store directory (required)")
	fs.StringVar(&f.agent, "agent", "", "agent whose memories are searched (required)")
	fs.Var(&f.agents, "also-agent", "more agents to search (repeatable, or comma-separated)")
	fs.Var(&f.sessions, "session", "only these sessions (repeatable, or comma-separated)")
	fs.Var(&f.roles, "role", "only these roles/speakers (repeatable, or comma-separated)")
	fs.StringVar(&f.since, "since", "", "only records at or after this time: RFC 3339, a date (2026-05-01), or an age (36h, 7d)")
	fs.StringVar(&f.until, "until", "", "only records before this time (same forms as --since)")
	fs.Var(f.where, "where", "metadata filter key=value (repeatable; values of one key OR, keys AND)")
	fs.Var(f.not, "not", "exclude records with metadata key=value (repeatable)")
	fs.IntVar(&f.k, "k", engine.DefaultK, "number of memories to return")
	fs.IntVar(&f.candidates, "candidates", 0, "BM25 candidates handed to the selective stage (default max(50, 5*k))")
	fs.StringVar(&f.session, "current-session", "", "the session the agent is in: its latest turns join the candidates")
	fs.IntVar(&f.turns, "session-turns", engine.DefaultSessionTurns, "how many of the current session's latest turns join")
	fs.StringVar(&f.mode, "mode", "lazy", "lazy (embed candidates only), sparse (BM25, no embedding) or dense (embed every filtered record)")
	fs.StringVar(&f.fusion, "fusion", "", "how sparse and dense evidence combine in lazy mode: weighted (default) or rrf")
	fs.StringVar(&f.embedder, "embedder", "hash", embedderUsage)
	fs.StringVar(&f.tier, "tier", "all", "all (raw records and core units), core (units only) or raw (records only)")
	fs.StringVar(&f.now, "now", "", "reference time for relative expressions, RFC 3339 (default: now)")
	fs.BoolVar(&f.noTime, "no-time-parse", false, "do not turn time expressions in the query into a filter")
	fs.BoolVar(&f.explain, "explain", false, "say why each memory ranked")
	fs.BoolVar(&f.json, "json", false, "print one JSON object {memories, stats}")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case f.db == "":
		return usagef("recall: --db is required")
	case f.agent == "":
		return usagef("recall: --agent is required")
	case len(pos) > 1:
		return usagef("recall: want one query argument (quote it), got %d", len(pos))
	}
	q := engine.Query{
		Agent: f.agent, Agents: f.agents, Sessions: f.sessions, Roles: f.roles,
		Where: f.where, Not: f.not, K: f.k, Candidates: f.candidates,
		CurrentSession: f.session, SessionTurns: f.turns,
		Mode: engine.Mode(f.mode), Fusion: engine.Fusion(f.fusion),
		ParseTime: !f.noTime, Explain: f.explain, Tier: engine.Tier(f.tier),
	}
	if len(pos) == 1 {
		q.Text = pos[0]
	}
	now := time.Now()
	if f.now != "" {
		if now, err = time.Parse(time.RFC3339Nano, f.now); err != nil {
			return usagef("recall: --now %q is not an RFC 3339 time", f.now)
		}
		q.Now = now
	}
	if q.Since, err = parseWhen(f.since, now); err != nil {
		return usagef("recall: --since: %v", err)
	}
	if q.Until, err = parseWhen(f.until, now); err != nil {
		return usagef("recall: --until: %v", err)
	}
	if len(q.Where) == 0 {
		q.Where = nil
	}
	if len(q.Not) == 0 {
		q.Not = nil
	}
	emb, err := openEmbedder(f.embedder)
	if err != nil {
		return err
	}
	db, err := openStore(f.db, engine.Options{Embedder: emb})
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.Recall(ctx, q)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(stdout, res)
	}
	printResult(stdout, res, f.explain)
	return db.Close()
}

// parseWhen reads an absolute time (RFC 3339 or a date) or an age before
// now (90m, 36h, 7d, 2w).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			var v float64
			if _, err := fmt.Sscanf(s[:n-1], "%g", &v); err == nil && v >= 0 {
				return now.Add(-time.Duration(v * float64(u))), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time, a date (2006-01-02) nor an age (36h, 7d, 2w)", s)
}

func writeJSON(w io.Writer, res *engine.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(wire.FromResult(res))
}

func printResult(w io.Writer, res *engine.Result, explain bool) {
	st := res.Stats
	if len(res.Memories) == 0 {
		fmt.Fprintln(w, "no memories matched")
	}
	for i, m := range res.Memories {
		who := m.Role
		if who == "" {
			who = "-"
		}
		if m.Unit != nil {
			fmt.Fprintf(w, "%2d. [%s] core %s #%d %s (sources %v)\n    %s\n", i+1, m.Time.Format("2006-01-02 15:04"),
				m.Unit.Type, m.Unit.ID, scoreLine(m), m.Unit.SourceIDs, truncate(oneLine(m.Text), 300))
			if explain && len(m.Reasons) > 0 {
				fmt.Fprintf(w, "    why: %s\n", strings.Join(m.Reasons, ", "))
			}
			continue
		}
		fmt.Fprintf(w, "%2d. [%s] %s %s (session %s, id %d)\n    %s\n", i+1,
			m.Time.Format("2006-01-02 15:04"), who, scoreLine(m), m.Session, m.ID, truncate(oneLine(m.Text), 300))
		if explain && len(m.Reasons) > 0 {
			fmt.Fprintf(w, "    why: %s\n", strings.Join(m.Reasons, ", "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, statsLine(st))
}

func scoreLine(m engine.Memory) string {
	return fmt.Sprintf("score %.4f  bm25 %.2f  cos %.3f", m.Score, m.Sparse, m.Dense)
}

func statsLine(st engine.RecallStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d records passed the filters, %d BM25 hits", st.Mode, st.Filtered, st.Hits)
	if st.SessionTurns > 0 {
		fmt.Fprintf(&b, " + %d session turns", st.SessionTurns)
	}
	fmt.Fprintf(&b, ", %d candidates, %d embedded, %d from cache", st.Candidates, st.Embedded, st.CacheHits)
	if st.TimeExpr != "" {
		fmt.Fprintf(&b, "; %q -> [%s, %s)", st.TimeExpr, st.Since.Format(time.DateTime), st.Until.Format(time.DateTime))
	}
	d := st.Durations
	fmt.Fprintf(&b, "\ntime: filter %v, broad %v, fetch %v, embed %v, score %v; total %v",
		round(d.Filter), round(d.Broad), round(d.Fetch), round(d.Embed), round(d.Score), round(d.Total))
	return b.String()
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
