package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestPlanner runs the transcripts under testdata/planner: each loads a
// small store and prints, per recall, what every stage produced. After a
// deliberate change of behaviour, review the difference that
//
//	go test ./engine -run TestPlanner -rewrite
//
// writes into the files.
//
// Commands:
//
//	open [sparse-only] [now=2006-01-02T15:04]
//	    a fresh store (the hash embedder unless sparse-only); its clock,
//	    and so the Now of every recall, is fixed (default 2026-03-10T12:00,
//	    a Tuesday, UTC).
//	append
//	<time> <agent> <session> <role> [key=v1,v2 ...] | <text>
//	    one record per line; prints the ids.
//	recall agent=a1 [agents=(a2,..)] [sessions=(..)] [roles=(..)]
//	       [where=(key:value,..)] [not=(key:value,..)] [since=T] [until=T]
//	       [mode=lazy|sparse|dense] [fusion=weighted|rrf] [k=N]
//	       [candidates=N] [current=SESSION] [turns=N] [boost=X]
//	       [parse-time] [synonyms=(key:value,..)] [recency=DURATION]
//	       [max-dense-scan=N] [explain]
//	<query text, may be empty>
//	    prints the parse, filter, sources, selective and fuse stages and the
//	    final order.
func TestPlanner(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "planner"), func(t *testing.T, path string) {
		var db *DB
		defer func() {
			if db != nil {
				db.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "open":
				if db != nil {
					db.Close()
				}
				now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
				if td.HasArg("now") {
					now = planTime(t, td, "now")
				}
				opts := Options{Clock: func() time.Time { return now }, DisableEmbedder: td.HasArg("sparse-only")}
				var err error
				if db, err = Open(t.TempDir(), opts); err != nil {
					t.Fatal(err)
				}
				return ""
			case "append":
				return planAppend(t, db, td.Input)
			case "consolidate":
				return planConsolidate(t, db, td)
			case "recall":
				q := planQuery(t, td)
				db.mu.RLock()
				p, err := db.recall(context.Background(), q)
				db.mu.RUnlock()
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return p.transcript()
			}
			t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
			return ""
		})
	})
}

const planTimeLayout = "2006-01-02T15:04"

func planTime(t *testing.T, td *datadriven.TestData, key string) time.Time {
	var s string
	td.ScanArgs(t, key, &s)
	tm, err := time.Parse(planTimeLayout, s)
	if err != nil {
		t.Fatalf("%s: %s: %v", td.Pos, key, err)
	}
	return tm
}

// planAppend appends the records of input, one a line:
// "<time> <agent> <session> <role> [key=v1,v2 ...] | <text>".
func planAppend(t *testing.T, db *DB, input string) string {
	var recs []Record
	for _, line := range strings.Split(input, "\n") {
		head, text, ok := strings.Cut(line, " | ")
		f := strings.Fields(head)
		if !ok || len(f) < 4 {
			t.Fatalf("append: %q: want <time> <agent> <session> <role> [key=v,..] | <text>", line)
		}
		tm, err := time.Parse(planTimeLayout, f[0])
		if err != nil {
			t.Fatalf("append: %q: %v", line, err)
		}
		r := Record{Time: tm, Agent: f[1], Session: f[2], Role: f[3], Text: text}
		for _, kv := range f[4:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("append: %q: metadata %q is not key=v1,v2", line, kv)
			}
			if r.Meta == nil {
				r.Meta = map[string][]string{}
			}
			r.Meta[k] = strings.Split(v, ",")
		}
		recs = append(recs, r)
	}
	ids, err := db.AppendBatch(context.Background(), recs)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return fmt.Sprintf("ids %d..%d\n", ids[0], ids[len(ids)-1])
}

// planQuery reads a Query from the recall command's arguments and input.
func planQuery(t *testing.T, td *datadriven.TestData) Query {
	q := Query{Text: strings.TrimSuffix(td.Input, "\n")}
	pairs := func(key string) map[string][]string {
		m := map[string][]string{}
		a, _ := td.Arg(key)
		for _, kv := range a.Vals {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				t.Fatalf("%s: %s: %q is not key:value", td.Pos, key, kv)
			}
			m[k] = append(m[k], v)
		}
		return m
	}
	num := func(a datadriven.CmdArg) int {
		n, err := strconv.Atoi(a.SingleVal(t))
		if err != nil {
			t.Fatalf("%s: %s: %v", td.Pos, a.Key, err)
		}
		return n
	}
	for _, a := range td.CmdArgs {
		switch a.Key {
		case "agent":
			q.Agent = a.SingleVal(t)
		case "agents":
			q.Agents = a.Vals
		case "sessions":
			q.Sessions = a.Vals
		case "roles":
			q.Roles = a.Vals
		case "where":
			q.Where = pairs("where")
		case "not":
			q.Not = pairs("not")
		case "synonyms":
			q.Synonyms = pairs("synonyms")
		case "since":
			q.Since = planTime(t, td, "since")
		case "until":
			q.Until = planTime(t, td, "until")
		case "mode":
			q.Mode = Mode(a.SingleVal(t))
		case "fusion":
			q.Fusion = Fusion(a.SingleVal(t))
		case "k":
			q.K = num(a)
		case "candidates":
			q.Candidates = num(a)
		case "current":
			q.CurrentSession = a.SingleVal(t)
		case "turns":
			q.SessionTurns = num(a)
		case "max-dense-scan":
			q.MaxDenseScan = num(a)
		case "boost":
			b, err := strconv.ParseFloat(a.SingleVal(t), 64)
			if err != nil {
				t.Fatalf("%s: boost: %v", td.Pos, err)
			}
			q.SpeakerBoost = b
		case "recency":
			d, err := time.ParseDuration(a.SingleVal(t))
			if err != nil {
				t.Fatalf("%s: recency: %v", td.Pos, err)
			}
			q.RecencyHalfLife = d
		case "parse-time":
			q.ParseTime = true
		case "tier":
			q.Tier = Tier(a.SingleVal(t))
		case "explain":
			q.Explain = true
		default:
			t.Fatalf("%s: unknown argument %q", td.Pos, a.Key)
		}
	}
	return q
}

// transcript prints what each stage of a finished plan produced. Scores
// are rounded to 3 decimals (6 for the tiny scores of sparse mode's
// non-BM25 candidates): the last bits of a dot product depend on the
// kernel.
func (p *plan) transcript() string {
	var b strings.Builder
	st := &p.res.Stats
	fmt.Fprintf(&b, "parse: bm25 %q", st.Text)
	if p.q.Mode != ModeSparse {
		fmt.Fprintf(&b, ", dense %q", st.DenseText)
	}
	b.WriteString("\n")
	if st.TimeExpr != "" || !st.Since.IsZero() || !st.Until.IsZero() {
		fmt.Fprintf(&b, "time: %q [%s, %s)\n", st.TimeExpr, planFmtTime(st.Since), planFmtTime(st.Until))
	}
	if st.Expansion != "" {
		fmt.Fprintf(&b, "expansion: %s\n", st.Expansion)
	}
	if len(st.Speakers) > 0 {
		fmt.Fprintf(&b, "speakers: %s\n", strings.Join(st.Speakers, " "))
	}
	for _, n := range st.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "filter: %d records\n", st.Filtered)
	if p.q.Mode == ModeDense {
		fmt.Fprintf(&b, "dense: scored %d\n", st.Candidates)
	} else {
		var n [6]int
		for _, c := range p.cands {
			for i, s := range []sourceSet{fromBM25, fromSpeaker, fromFallback, fromSession, fromCore, fromNeighbour} {
				if c.from&s != 0 {
					n[i]++
				}
			}
		}
		fmt.Fprintf(&b, "sources: bm25 %d, neighbours %d, speaker %d, fallback %d, session %d (%d new), core %d; %d candidates\n",
			n[0], n[5], n[1], n[2], n[3], st.SessionTurns, n[4], st.Candidates)
	}
	if p.q.Mode != ModeSparse {
		fmt.Fprintf(&b, "selective: embedded %d, cache hits %d (disk %d)\n", st.Embedded, st.CacheHits, st.DiskHits)
	}
	if len(p.cands) > 0 {
		b.WriteString("candidates:\n")
		for i, c := range p.cands {
			fmt.Fprintf(&b, "  #%-3d %-14s sparse %-6s dense %-6s fused %s", c.id, c.from.String(),
				planScore(c.sparse, c.sparseRank > 0), planScore(float64(c.dense), c.denseRank > 0), planScore(float64(p.fused[i]), true))
			if c.speaker {
				b.WriteString(" speaker")
			}
			if c.question {
				b.WriteString(" question")
			}
			if c.lowInfo {
				b.WriteString(" low-info")
			}
			if c.superseded {
				b.WriteString(" newer")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("final:")
	if len(p.res.Memories) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	for i, m := range p.res.Memories {
		if m.Kind == KindCore && m.Unit != nil {
			fmt.Fprintf(&b, "  %d. core unit %d %s %q sources %v: %s", i+1, m.Unit.ID, m.Unit.Type, m.Unit.Topic, m.Unit.SourceIDs, m.Unit.Content)
			if !m.Unit.Live() {
				fmt.Fprintf(&b, " (superseded by %d)", m.Unit.SupersededBy)
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "  %d. #%d %s/%s %s: %s", i+1, m.ID, m.Agent, m.Session, m.Role, m.Text)
		if len(m.Reasons) > 0 {
			fmt.Fprintf(&b, "  [%s]", strings.Join(m.Reasons, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func planScore(s float64, ok bool) string {
	switch {
	case !ok && s == 0:
		return "-"
	case s != 0 && s < 1e-3 && s > -1e-3:
		return strconv.FormatFloat(s, 'g', 3, 64)
	}
	return strconv.FormatFloat(s, 'f', 3, 64)
}

func planFmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(planTimeLayout)
}

// String names the sources of a set: "bm25+session".
func (s sourceSet) String() string {
	var names []string
	for i, n := range []string{"bm25", "fallback", "session", "speaker", "neighbour"} {
		if s&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if s&fromCore != 0 {
		names = append(names, "core")
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, "+")
}

// planConsolidate runs the explicit consolidation trigger for an agent (and
// optionally one session) and lists the units stored, superseded ones
// marked.
func planConsolidate(t *testing.T, db *DB, td *datadriven.TestData) string {
	var agent string
	td.ScanArgs(t, "agent", &agent)
	var o ConsolidateOptions
	if td.HasArg("session") {
		td.ScanArgs(t, "session", &o.Session)
	}
	rep, err := db.Consolidate(context.Background(), agent, o)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "selected %d, units %d, superseded %v\n", rep.Selected, len(rep.Units), rep.Superseded)
	for _, u := range rep.Units {
		fmt.Fprintf(&b, "  unit %d %s %q sources %v: %s", u.ID, u.Type, u.Topic, u.SourceIDs, u.Content)
		if !u.Live() || slices.Contains(rep.Superseded, u.ID) {
			b.WriteString(" (superseded)")
		}
		b.WriteString("\n")
	}
	return b.String()
}
