package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
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
	recency, synonyms                                                   string
	agents, sessions, roles                                             stringList
	where, not                                                          kvList
	k, candidates, turns, fallback, feedback, maxDense, context         int
	denseWeight, speakerBoost, recencyWeight                            float64
	json, explain, noTime, noExpansion                                  bool
}

// newRecallFlags declares the flags of recall: one per field of the
// daemon's JSON query (TestRecallFlagsCoverQuery holds them together).
func newRecallFlags(stderr io.Writer) (*flag.FlagSet, *recallFlags) {
	fs := newFlags("recall", recallSynopsis, stderr)
	f := &recallFlags{where: kvList{}, not: kvList{}}
	fs.StringVar(&f.db, "db", "", "store directory `DIR` (required)")
	fs.StringVar(&f.agent, "agent", "", "`AGENT` whose memories are searched (required)")
	fs.Var(&f.agents, "also-agent", "more `AGENTS` to search (repeatable, or comma-separated)")
	fs.Var(&f.sessions, "session", "only these `SESSIONS` (repeatable, or comma-separated)")
	fs.Var(&f.roles, "role", "only these `ROLES` (speakers; repeatable, or comma-separated)")
	fs.StringVar(&f.since, "since", "", "only records at or after `TIME`: RFC 3339, a date (2026-05-01), or an age (36h, 7d)")
	fs.StringVar(&f.until, "until", "", "only records before `TIME` (same forms as --since)")
	fs.Var(f.where, "where", "metadata filter `KEY=VALUE` (repeatable; values of one key OR, keys AND)")
	fs.Var(f.not, "not", "exclude records with metadata `KEY=VALUE` (repeatable)")
	fs.IntVar(&f.k, "k", engine.DefaultK, "return `N` memories")
	fs.IntVar(&f.candidates, "candidates", 0, "`N` BM25 candidates handed to the selective stage (default max(50, 5*k))")
	fs.StringVar(&f.session, "current-session", "", "the `SESSION` the agent is in: its latest turns join the candidates")
	fs.IntVar(&f.turns, "session-turns", engine.DefaultSessionTurns, "how many (`N`) of the current session's latest turns join; negative: none")
	fs.StringVar(&f.mode, "mode", "lazy", "`MODE`: lazy (embed candidates only), sparse (BM25, no embedding) or dense (embed every filtered record)")
	fs.IntVar(&f.maxDense, "max-dense-scan", 0, fmt.Sprintf("in dense mode, fail rather than embed more than `N` filtered records (default %d)", engine.DefaultMaxDenseScan))
	fs.StringVar(&f.fusion, "fusion", "", "`FUSION` of sparse and dense evidence in lazy mode: weighted (default) or rrf")
	fs.Float64Var(&f.denseWeight, "dense-weight", 0, "share `W` of the dense evidence in the fusion, in [0, 1] (default 0.2 weighted, 0.5 rrf)")
	fs.Float64Var(&f.speakerBoost, "speaker-boost", 0, "multiply by `X` the score of turns whose speaker the query names (default 2; 1 or negative: off)")
	fs.StringVar(&f.recency, "recency", "", fmt.Sprintf("recency prior's `HALF_LIFE` (a Go duration, 72h), or off (default %v)", engine.DefaultRecencyHalfLife))
	fs.Float64Var(&f.recencyWeight, "recency-weight", 0, fmt.Sprintf("weight `W` of the recency prior, in [0, 1] (default %g)", engine.DefaultRecencyWeight))
	fs.IntVar(&f.fallback, "fallback-scan", 0, fmt.Sprintf("when BM25 finds fewer than k/2 records, rank up to `N` of the latest filtered records instead (default %d; negative: no fallback)", engine.DefaultFallbackScan))
	fs.BoolVar(&f.noExpansion, "no-expansion", false, "do not expand the query with the built-in lexicon's related words")
	fs.IntVar(&f.feedback, "feedback-docs", 0, fmt.Sprintf("pseudo-relevance feedback from the top `N` BM25 hits (default 0: off; at most %d)", engine.MaxFeedbackDocs))
	fs.StringVar(&f.synonyms, "synonyms", "", `JSON `+"`FILE`"+` of query synonyms, {"word": ["synonym", ...]}`)
	fs.StringVar(&f.embedder, "embedder", "hash", embedderUsage)
	fs.StringVar(&f.tier, "tier", "all", "`TIER`: all (raw records and core units), core (units only) or raw (records only)")
	fs.StringVar(&f.now, "now", "", "reference `TIME` for relative expressions and recency, RFC 3339 (default: now)")
	fs.BoolVar(&f.noTime, "no-time-parse", false, "do not turn time expressions in the query into a filter")
	fs.BoolVar(&f.explain, "explain", false, "say why each memory ranked, what the query searched besides its words, and the recall's notes")
	fs.BoolVar(&f.json, "json", false, "print one JSON object {memories, stats}")
	fs.IntVar(&f.context, "context", 0, "print the prompt block an agent receives, at most `BUDGET` characters, instead of the list")
	return fs, f
}

func cmdRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newRecallFlags(stderr)
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
	case f.context < 0:
		return usagef("recall: --context %d: want a positive budget in characters", f.context)
	case f.context > 0 && f.json:
		return usagef("recall: --context and --json exclude each other")
	}
	q, err := f.query(pos)
	if err != nil {
		return err
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
	switch {
	case f.json:
		return writeJSON(stdout, res)
	case f.context > 0:
		_, err := io.WriteString(stdout, engine.FormatContext(res.Memories, f.context))
		if err != nil {
			return err
		}
		return db.Close()
	}
	printResult(stdout, res, f.explain)
	return db.Close()
}

// query builds the engine query of the parsed flags and the positional
// query text (pos holds at most one argument).
func (f *recallFlags) query(pos []string) (engine.Query, error) {
	var err error
	q := engine.Query{
		Agent: f.agent, Agents: f.agents, Sessions: f.sessions, Roles: f.roles,
		Where: f.where, Not: f.not, K: f.k, Candidates: f.candidates,
		CurrentSession: f.session, SessionTurns: f.turns,
		Mode: engine.Mode(f.mode), MaxDenseScan: f.maxDense, Fusion: engine.Fusion(f.fusion),
		DenseWeight: f.denseWeight, SpeakerBoost: f.speakerBoost, RecencyWeight: f.recencyWeight,
		FallbackScan: f.fallback, NoExpansion: f.noExpansion, FeedbackDocs: f.feedback,
		ParseTime: !f.noTime, Explain: f.explain, Tier: engine.Tier(f.tier),
	}
	if q.RecencyHalfLife, err = parseRecency(f.recency); err != nil {
		return q, usagef("recall: --recency: %v", err)
	}
	if f.synonyms != "" {
		if q.Synonyms, err = readSynonyms(f.synonyms); err != nil {
			return q, err
		}
	}
	if len(pos) == 1 {
		q.Text = pos[0]
	}
	now := time.Now()
	if f.now != "" {
		if now, err = time.Parse(time.RFC3339Nano, f.now); err != nil {
			return q, usagef("recall: --now %q is not an RFC 3339 time", f.now)
		}
		q.Now = now
	}
	if q.Since, err = parseWhen(f.since, now); err != nil {
		return q, usagef("recall: --since: %v", err)
	}
	if q.Until, err = parseWhen(f.until, now); err != nil {
		return q, usagef("recall: --until: %v", err)
	}
	if len(q.Where) == 0 {
		q.Where = nil
	}
	if len(q.Not) == 0 {
		q.Not = nil
	}
	return q, nil
}

// parseRecency reads --recency: a positive duration, "off" (no recency
// prior) or empty (the engine's default).
func parseRecency(s string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is neither a positive duration (72h) nor off", s)
	}
	return d, nil
}

// readSynonyms reads a --synonyms file: one JSON object mapping a word or
// phrase to its synonyms, the daemon's "synonyms" query field.
func readSynonyms(path string) (map[string][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("recall: --synonyms: %w", err)
	}
	bad := func(format string, args ...any) error {
		return usagef("recall: --synonyms %s: %s", path, fmt.Sprintf(format, args...))
	}
	var syn map[string][]string
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&syn); err != nil {
		return nil, bad(`want a JSON object {"word": ["synonym", ...]}: %v`, err)
	}
	if dec.More() {
		return nil, bad("data after the JSON object")
	}
	if syn == nil {
		return nil, bad(`want a JSON object {"word": ["synonym", ...]}, got null`)
	}
	for k, vs := range syn {
		if strings.TrimSpace(k) == "" {
			return nil, bad("an empty word")
		}
		if len(vs) == 0 {
			return nil, bad("%q has no synonyms", k)
		}
		for _, v := range vs {
			if strings.TrimSpace(v) == "" {
				return nil, bad("%q has an empty synonym", k)
			}
		}
	}
	return syn, nil
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
	if explain {
		if e := distinctWords(st.Expansion); e != "" {
			fmt.Fprintf(w, "also searched: %s\n", e)
		}
		for _, n := range st.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// distinctWords returns the words of s once each, in their first order:
// Stats.Expansion gives a term as often as its weight.
func distinctWords(s string) string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(s) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
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
	fmt.Fprintf(&b, ", %d candidates; %d texts embedded, %d vectors from the cache (the question's included)", st.Candidates, st.Embedded, st.CacheHits)
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
