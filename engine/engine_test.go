package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// counting wraps an embedder and counts calls and texts.
type counting struct {
	embed.Embedder
	calls, texts atomic.Int64
	mu           sync.Mutex
	seen         []string
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	c.texts.Add(int64(len(texts)))
	c.mu.Lock()
	c.seen = append(c.seen, texts...)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

func (c *counting) reset() { c.calls.Store(0); c.texts.Store(0); c.seen = nil }

// RecommendedFusion says the wrapped hash embedder is lexical and
// recommends no weights: the engine's default fusion, which the tests
// using counting were written against (lexical was read from the name
// then).
func (c *counting) RecommendedFusion() embed.Fusion { return embed.Fusion{Lexical: true} }

func newCounting(t testing.TB) *counting {
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &counting{Embedder: h}
}

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // a Tuesday

// corpus is a small history of two agents over ten days.
func corpus() []engine.Record {
	day := func(d int, h int) time.Time { return t0.AddDate(0, 0, -d).Add(time.Duration(h-12) * time.Hour) }
	return []engine.Record{
		{Time: day(9, 10), Agent: "a1", Session: "s1", Role: "user", Text: "Let's set the connection pool size to 20 for billing-api.", Meta: map[string][]string{"tags": {"db", "config"}, "service": {"billing-api"}}},
		{Time: day(9, 11), Agent: "a1", Session: "s1", Role: "assistant", Text: "Done: HikariCP maximumPoolSize is now 20 on billing-api.", Meta: map[string][]string{"tags": {"db"}, "service": {"billing-api"}}},
		{Time: day(8, 9), Agent: "a1", Session: "s2", Role: "user", Text: "What's the weather like in Lisbon?", Meta: map[string][]string{"tags": {"chitchat"}}},
		{Time: day(8, 9), Agent: "a1", Session: "s2", Role: "assistant", Text: "Sunny and 22 degrees in Lisbon today."},
		{Time: day(2, 15), Agent: "a1", Session: "s3", Role: "user", Text: "The connection pool is exhausted again, timeouts on checkout.", Meta: map[string][]string{"tags": {"db", "incident"}, "service": {"checkout"}}},
		{Time: day(2, 16), Agent: "a1", Session: "s3", Role: "assistant", Text: "We decided to raise the pool to 50 and add a circuit breaker.", Meta: map[string][]string{"tags": {"db", "decision"}, "service": {"checkout"}}},
		{Time: day(1, 10), Agent: "a1", Session: "s4", Role: "user", Text: "Remind me to email Alice about the Postgres upgrade.", Meta: map[string][]string{"tags": {"todo"}}},
		{Time: day(1, 11), Agent: "a1", Session: "s4", Role: "tool", Text: `{"reminder": "email Alice", "status": "scheduled"}`},
		{Time: day(0, 9), Agent: "a1", Session: "s5", Role: "user", Text: "昨天我们讨论了数据库连接池的配置。"},
		{Time: day(0, 10), Agent: "a1", Session: "s5", Role: "assistant", Text: "是的，连接池大小改成了五十。"},
		{Time: day(0, 11), Agent: "a1", Session: "s5", Role: "user", Text: "Okay thanks, that is all for now."},
		{Time: day(3, 12), Agent: "a2", Session: "x1", Role: "user", Text: "Our connection pool for the inventory service needs tuning.", Meta: map[string][]string{"tags": {"db"}}},
	}
}

// openT opens a store for the tests that count a recall's own embeddings:
// working memory off (its background embedding of live turns has tests of
// its own, workmem_test.go).
func openT(t *testing.T, dir string, emb embed.Embedder) *engine.DB {
	t.Helper()
	db, err := engine.Open(dir, engine.Options{Embedder: emb, Clock: func() time.Time { return t0 },
		WorkingMemory: engine.WorkingMemoryOptions{Disable: true}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func load(t *testing.T, db *engine.DB) []uint64 {
	t.Helper()
	ids, err := db.AppendBatch(context.Background(), corpus())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func texts(ms []engine.Memory) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func recall(t *testing.T, db *engine.DB, q engine.Query) *engine.Result {
	t.Helper()
	res, err := db.Recall(context.Background(), q)
	if err != nil {
		t.Fatalf("Recall(%+v): %v", q, err)
	}
	return res
}

func TestAppendGet(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	ids := load(t, db)
	for i, want := range corpus() {
		if ids[i] != uint64(i+1) {
			t.Fatalf("ids[%d] = %d, want %d", i, ids[i], i+1)
		}
		got, err := db.Get(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		want.ID = ids[i]
		if !got.Time.Equal(want.Time) || got.Agent != want.Agent || got.Session != want.Session ||
			got.Role != want.Role || got.Text != want.Text || fmt.Sprint(got.Meta) != fmt.Sprint(want.Meta) || got.ID != want.ID {
			t.Errorf("Get(%d) = %+v, want %+v", ids[i], got, want)
		}
	}
	// A record without time takes the clock's.
	id, err := db.Append(ctx, engine.Record{Agent: "a1", Text: "no time given"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Get(ctx, id)
	if err != nil || !r.Time.Equal(t0) {
		t.Fatalf("Get(%d) = %v, %v; want time %v", id, r.Time, err, t0)
	}
	if _, err := db.Get(ctx, 999); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Get(999) err = %v, want ErrNotFound", err)
	}
}

func TestRecallFilters(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	cases := []struct {
		name  string
		q     engine.Query
		check func(m engine.Memory) bool
		min   int
	}{
		{"agent", engine.Query{Text: "connection pool", Agent: "a1"}, func(m engine.Memory) bool { return m.Agent == "a1" }, 3},
		{"agents", engine.Query{Text: "connection pool", Agents: []string{"a1", "a2"}}, func(m engine.Memory) bool { return m.Agent == "a1" || m.Agent == "a2" }, 4},
		{"sessions", engine.Query{Text: "pool", Agent: "a1", Sessions: []string{"s3"}}, func(m engine.Memory) bool { return m.Session == "s3" }, 2},
		{"roles", engine.Query{Text: "pool", Agent: "a1", Roles: []string{"assistant"}}, func(m engine.Memory) bool { return m.Role == "assistant" }, 2},
		{"since-until", engine.Query{Text: "pool", Agent: "a1", Since: t0.AddDate(0, 0, -3), Until: t0.AddDate(0, 0, -1)},
			func(m engine.Memory) bool {
				return !m.Time.Before(t0.AddDate(0, 0, -3)) && m.Time.Before(t0.AddDate(0, 0, -1))
			}, 2},
		{"where", engine.Query{Text: "pool", Agent: "a1", Where: map[string][]string{"tags": {"decision", "config"}}},
			func(m engine.Memory) bool {
				return slices.Contains(m.Meta["tags"], "decision") || slices.Contains(m.Meta["tags"], "config")
			}, 2},
		{"where-and", engine.Query{Text: "pool", Agent: "a1", Where: map[string][]string{"tags": {"db"}, "service": {"checkout"}}},
			func(m engine.Memory) bool {
				return slices.Contains(m.Meta["tags"], "db") && slices.Contains(m.Meta["service"], "checkout")
			}, 2},
		{"not", engine.Query{Text: "pool", Agent: "a1", Not: map[string][]string{"service": {"checkout"}}},
			func(m engine.Memory) bool { return !slices.Contains(m.Meta["service"], "checkout") }, 2},
	}
	for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse, engine.ModeDense} {
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				q := c.q
				q.Mode = mode
				res := recall(t, db, q)
				if len(res.Memories) < c.min {
					t.Fatalf("%d memories, want >= %d: %q", len(res.Memories), c.min, texts(res.Memories))
				}
				for _, m := range res.Memories {
					if !c.check(m) {
						t.Errorf("memory %d (%+v) does not match the filter", m.ID, m.Record)
					}
				}
				if res.Stats.Filtered < len(res.Memories) {
					t.Errorf("Stats.Filtered = %d < %d memories", res.Stats.Filtered, len(res.Memories))
				}
			})
		}
	}
}

func TestRecallModes(t *testing.T) {
	emb := newCounting(t)
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	load(t, db)
	q := engine.Query{Text: "what did we decide about the connection pool", Agent: "a1", K: 3}

	q.Mode = engine.ModeSparse
	emb.reset()
	res := recall(t, db, q)
	if emb.calls.Load() != 0 || res.Stats.Embedded != 0 {
		t.Errorf("sparse embedded %d texts in %d calls", emb.texts.Load(), emb.calls.Load())
	}
	for _, m := range res.Memories {
		if m.Dense != 0 || m.Sparse <= 0 {
			t.Errorf("sparse memory %d: sparse %v dense %v", m.ID, m.Sparse, m.Dense)
		}
	}

	q.Mode = engine.ModeLazy
	emb.reset()
	res = recall(t, db, q)
	if got := texts(res.Memories); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "decided") }) {
		t.Errorf("lazy top-3 = %q, want the decision among them", got)
	}
	if res.Stats.Candidates != res.Stats.Hits || res.Stats.Hits == 0 {
		t.Errorf("lazy stats %+v", res.Stats)
	}
	if int(emb.texts.Load()) != res.Stats.Candidates+1 || emb.calls.Load() != 1 {
		t.Errorf("lazy embedded %d texts in %d calls, want %d in 1", emb.texts.Load(), emb.calls.Load(), res.Stats.Candidates+1)
	}
	lazyCached := res.Stats.Candidates
	for _, m := range res.Memories {
		if m.Dense == 0 {
			t.Errorf("lazy memory %d has no dense score", m.ID)
		}
	}

	q.Mode = engine.ModeDense
	emb.reset()
	res = recall(t, db, q)
	filtered := res.Stats.Filtered
	if filtered != 11 {
		t.Errorf("dense filtered %d, want 11 records of a1", filtered)
	}
	// The candidates' vectors are cached by the lazy recall; the rest and
	// no query (cached) are embedded now.
	if got := int(emb.texts.Load()); got != filtered-lazyCached || lazyCached == 0 {
		t.Errorf("dense embedded %d texts, want %d (11 records, %d cached by the lazy recall)", got, filtered-lazyCached, lazyCached)
	}
	for _, m := range res.Memories {
		if m.Sparse != 0 || m.Dense == 0 {
			t.Errorf("dense memory %d: sparse %v dense %v", m.ID, m.Sparse, m.Dense)
		}
	}
	for i := 1; i < len(res.Memories); i++ {
		if res.Memories[i].Dense > res.Memories[i-1].Dense {
			t.Errorf("dense results not ordered by cosine: %v", res.Memories)
		}
	}
}

func TestSessionChain(t *testing.T) {
	emb := newCounting(t)
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	load(t, db)
	// "that" matches nothing by BM25 (stopword): the session chain alone
	// (the fallback pass off) brings the current thread's last turns.
	res := recall(t, db, engine.Query{Text: "that", Agent: "a1", CurrentSession: "s5", SessionTurns: 2, FallbackScan: -1, Explain: true})
	if res.Stats.SessionTurns != 2 || len(res.Memories) != 2 {
		t.Fatalf("session chain: %d turns, memories %q", res.Stats.SessionTurns, texts(res.Memories))
	}
	for _, m := range res.Memories {
		if m.Session != "s5" || m.ID < 10 {
			t.Errorf("memory %d from session %s, want the 2 latest of s5", m.ID, m.Session)
		}
		if !slices.ContainsFunc(m.Reasons, func(s string) bool { return strings.HasPrefix(s, "session") }) {
			t.Errorf("reasons %q lack the session", m.Reasons)
		}
	}
	// Lazy embeds at most Candidates + SessionTurns (+ the query).
	emb.reset()
	res = recall(t, db, engine.Query{Text: "pool", Agent: "a1", Candidates: 2, CurrentSession: "s1", SessionTurns: 2})
	if got := emb.texts.Load(); got > 2+2+1 {
		t.Errorf("lazy embedded %d texts, want <= 5", got)
	}
	if res.Stats.Candidates > 4 {
		t.Errorf("candidates %d > 4", res.Stats.Candidates)
	}
}

func TestTimeExpressions(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	cases := []struct {
		text string
		want []string // substrings of the texts that must all be returned, and nothing else
	}{
		{"connection pool two days ago", []string{"exhausted", "decided"}},
		{"what about Alice yesterday", []string{"Alice", "reminder"}},
		{"连接池 昨天", []string{"Alice", "reminder"}},
		{"pool in the last 3 days", []string{"exhausted", "decided", "Alice", "reminder", "昨天", "五十", "Okay"}},
		{"最近三天 连接池", []string{"exhausted", "decided", "Alice", "reminder", "昨天", "五十", "Okay"}},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			res := recall(t, db, engine.Query{Text: c.text, Agent: "a1", ParseTime: true, Now: t0, Mode: engine.ModeDense, K: 20})
			if res.Stats.TimeExpr == "" {
				t.Fatalf("no time expression found in %q", c.text)
			}
			if strings.Contains(res.Stats.Text, res.Stats.TimeExpr) {
				t.Errorf("searched text %q still holds %q", res.Stats.Text, res.Stats.TimeExpr)
			}
			got := texts(res.Memories)
			if len(got) != len(c.want) {
				t.Fatalf("got %d memories %q, want %d", len(got), got, len(c.want))
			}
			for _, w := range c.want {
				if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("missing %q in %q", w, got)
				}
			}
		})
	}
	// Nothing but stopwords left once the expression is gone: the window's
	// records themselves.
	res0 := recall(t, db, engine.Query{Text: "what was there yesterday?", Agent: "a1", ParseTime: true, Now: t0, Mode: engine.ModeSparse})
	if got := texts(res0.Memories); len(got) != 2 || res0.Stats.Hits != 0 {
		t.Errorf("yesterday alone: %d hits, memories %q, want the 2 records of yesterday", res0.Stats.Hits, got)
	}
	// Off by default: the words are searched, no window.
	res := recall(t, db, engine.Query{Text: "pool yesterday", Agent: "a1", Mode: engine.ModeSparse})
	if res.Stats.TimeExpr != "" || !res.Stats.Since.IsZero() {
		t.Errorf("ParseTime off, but window %v..%v", res.Stats.Since, res.Stats.Until)
	}
}

func TestBadInputsLeaveStoreUnchanged(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	good := engine.Record{Agent: "a1", Text: "fine"}
	big := strings.Repeat("x", engine.DefaultMaxTextBytes+1)
	manyKeys := map[string][]string{}
	for i := range engine.DefaultMaxMetaKeys + 1 {
		manyKeys[fmt.Sprint("k", i)] = []string{"v"}
	}
	manyVals := map[string][]string{"k": make([]string, engine.DefaultMaxMetaValues+1)}
	for i := range manyVals["k"] {
		manyVals["k"][i] = "v"
	}
	recs := []struct {
		r      engine.Record
		reason error
		field  string
	}{
		{engine.Record{Text: "no agent"}, engine.ErrMissing, "agent"},
		{engine.Record{Agent: "a1"}, engine.ErrMissing, "text"},
		{engine.Record{Agent: "a1", Text: "  \n"}, engine.ErrMissing, "text"},
		{engine.Record{Agent: "a1", Text: big}, engine.ErrTooLong, "text"},
		{engine.Record{Agent: "a1", Text: "bad \xff utf8"}, engine.ErrUTF8, "text"},
		{engine.Record{Agent: "a\xc0", Text: "x"}, engine.ErrUTF8, "agent"},
		{engine.Record{Agent: "a1", Session: "s\xff", Text: "x"}, engine.ErrUTF8, "session"},
		{engine.Record{Agent: "a1", Role: "r\xff", Text: "x"}, engine.ErrUTF8, "role"},
		{engine.Record{Agent: "a1", Text: "x", Meta: map[string][]string{"": {"v"}}}, engine.ErrEmpty, "meta"},
		{engine.Record{Agent: "a1", Text: "x", Meta: map[string][]string{"k": {""}}}, engine.ErrEmpty, `meta["k"][0]`},
		{engine.Record{Agent: "a1", Text: "x", Meta: map[string][]string{"k": {}}}, engine.ErrEmpty, `meta["k"]`},
		{engine.Record{Agent: "a1", Text: "x", Meta: map[string][]string{"k\xff": {"v"}}}, engine.ErrUTF8, "meta"},
		{engine.Record{Agent: "a1", Text: "x", Meta: map[string][]string{"k": {"v\xff"}}}, engine.ErrUTF8, `meta["k"][0]`},
		{engine.Record{Agent: "a1", Text: "x", Meta: manyKeys}, engine.ErrTooMany, "meta"},
		{engine.Record{Agent: "a1", Text: "x", Meta: manyVals}, engine.ErrTooMany, `meta["k"]`},
	}
	before := db.Metrics()
	for i, c := range recs {
		_, err := db.Append(ctx, c.r)
		if !errors.Is(err, engine.ErrInvalid) || !errors.Is(err, c.reason) || !strings.Contains(err.Error(), "record."+c.field) {
			t.Errorf("case %d: Append err = %v, want %v naming record.%s", i, err, c.reason, c.field)
		}
		// In a batch, after a good record: nothing of the batch is written.
		_, err = db.AppendBatch(ctx, []engine.Record{good, c.r})
		if !errors.Is(err, c.reason) || !strings.Contains(err.Error(), "records[1]."+c.field) {
			t.Errorf("case %d: AppendBatch err = %v, want %v naming records[1].%s", i, err, c.reason, c.field)
		}
	}
	if _, err := db.AppendBatch(ctx, nil); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("empty batch: %v", err)
	}
	after := db.Metrics()
	if after.Log.Next != before.Log.Next || after.Index.Docs != before.Index.Docs {
		t.Fatalf("store changed: log next %d -> %d, docs %d -> %d", before.Log.Next, after.Log.Next, before.Index.Docs, after.Index.Docs)
	}
	res := recall(t, db, engine.Query{Text: "fine", Agent: "a1", Mode: engine.ModeSparse})
	if res.Stats.Hits != 0 {
		t.Fatalf("a rejected record is searchable: %q", texts(res.Memories))
	}

	queries := []struct {
		q      engine.Query
		reason error
		field  string
	}{
		{engine.Query{Text: "x"}, engine.ErrMissing, "query.agent"},
		{engine.Query{Text: "x\xff", Agent: "a1"}, engine.ErrUTF8, "query.text"},
		{engine.Query{Text: "x", Agent: "a1", Since: t0, Until: t0.Add(-time.Hour)}, engine.ErrRange, "query.since"},
		{engine.Query{Text: "x", Agent: "a1", K: -1}, engine.ErrRange, "query.k"},
		{engine.Query{Text: "x", Agent: "a1", K: engine.MaxK + 1}, engine.ErrRange, "query.k"},
		{engine.Query{Text: "x", Agent: "a1", Candidates: -5}, engine.ErrRange, "query.candidates"},
		{engine.Query{Text: "x", Agent: "a1", Candidates: engine.MaxCandidates + 1}, engine.ErrRange, "query.candidates"},
		{engine.Query{Text: "x", Agent: "a1", Mode: "eager"}, engine.ErrUnknown, "query.mode"},
		{engine.Query{Text: "x", Agent: "a1", Fusion: "max"}, engine.ErrUnknown, "query.fusion"},
		{engine.Query{Text: "x", Agent: "a1", Where: map[string][]string{"k": {""}}}, engine.ErrEmpty, `query.where["k"][0]`},
		{engine.Query{Text: "x", Agent: "a1", Not: map[string][]string{"": {"v"}}}, engine.ErrEmpty, "query.not"},
		{engine.Query{Text: "x", Agent: "a1", Sessions: []string{""}}, engine.ErrEmpty, "query.sessions[0]"},
		{engine.Query{Text: "x", Agent: "a1", Roles: []string{"r\xff"}}, engine.ErrUTF8, "query.roles[0]"},
		{engine.Query{Text: "x", Agent: "a1", DenseWeight: 2}, engine.ErrRange, "query.dense_weight"},
		{engine.Query{Text: "x", Agent: "a1", Synonyms: map[string][]string{"pool": {""}}}, engine.ErrEmpty, `query.synonyms["pool"][0]`},
	}
	for i, c := range queries {
		_, err := db.Recall(ctx, c.q)
		if !errors.Is(err, engine.ErrInvalid) || !errors.Is(err, c.reason) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("query %d: err = %v, want %v naming %s", i, err, c.reason, c.field)
		}
	}
}

// TestReopen: everything survives a restart, and the embeddings computed
// before it are not computed again.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	emb := newCounting(t)
	db := openT(t, dir, emb)
	load(t, db)
	q := engine.Query{Text: "connection pool decision", Agent: "a1", CurrentSession: "s4"}
	first := recall(t, db, q)
	if first.Stats.Embedded == 0 {
		t.Fatal("first recall embedded nothing")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Recall(context.Background(), q); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("Recall after Close: %v", err)
	}
	emb.reset()
	db = openT(t, dir, emb)
	defer db.Close()
	again := recall(t, db, q)
	if emb.texts.Load() != 0 || again.Stats.Embedded != 0 {
		t.Fatalf("after reopen %d texts re-embedded (stats %d), want 0", emb.texts.Load(), again.Stats.Embedded)
	}
	if again.Stats.DiskHits != again.Stats.Candidates+1 {
		t.Errorf("disk hits %d, want %d", again.Stats.DiskHits, again.Stats.Candidates+1)
	}
	if fmt.Sprint(ids(again.Memories)) != fmt.Sprint(ids(first.Memories)) {
		t.Errorf("after reopen %v, before %v", ids(again.Memories), ids(first.Memories))
	}
	// Appends continue after the old ids.
	id, err := db.Append(context.Background(), engine.Record{Agent: "a1", Text: "after reopen"})
	if err != nil || id != uint64(len(corpus())+1) {
		t.Fatalf("Append after reopen: id %d, %v", id, err)
	}
}

func ids(ms []engine.Memory) []uint64 {
	var out []uint64
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// TestEmbedCounts is acceptance 2: lazy embeds at most the candidates (and
// the query), and an identical recall embeds nothing.
func TestEmbedCounts(t *testing.T) {
	emb := newCounting(t)
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	var recs []engine.Record
	for i := range 500 {
		recs = append(recs, engine.Record{
			Time:  t0.Add(time.Duration(i) * time.Minute),
			Agent: "a1", Session: fmt.Sprint("s", i/50), Role: []string{"user", "assistant"}[i%2],
			Text: fmt.Sprintf("message %d about the deploy pipeline and topic%d with value %d", i, i%7, i*31%101),
		})
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	for _, cands := range []int{10, 50, 200} {
		emb.reset()
		q := engine.Query{Text: "deploy pipeline topic3", Agent: "a1", Candidates: cands, CurrentSession: "s9", SessionTurns: 5}
		res := recall(t, db, q)
		if got := int(emb.texts.Load()); got > cands+5+1 {
			t.Errorf("candidates=%d: embedded %d texts, want <= %d", cands, got, cands+6)
		}
		if res.Stats.Embedded != int(emb.texts.Load()) {
			t.Errorf("Stats.Embedded %d, embedder saw %d", res.Stats.Embedded, emb.texts.Load())
		}
		if emb.calls.Load() > 1 {
			t.Errorf("%d embedder calls, want one batch", emb.calls.Load())
		}
		emb.reset()
		first := res
		res = recall(t, db, q)
		if len(res.Memories) != len(first.Memories) {
			t.Fatalf("second recall: %d memories, first %d", len(res.Memories), len(first.Memories))
		}
		for i, m := range res.Memories {
			f := first.Memories[i]
			if m.ID != f.ID || m.Score != f.Score || m.Dense != f.Dense || m.Text != f.Text || !m.Time.Equal(f.Time) {
				t.Errorf("second recall #%d = %d %v %q, first %d %v %q", i, m.ID, m.Score, m.Text, f.ID, f.Score, f.Text)
			}
		}
		if emb.texts.Load() != 0 || res.Stats.Embedded != 0 || emb.calls.Load() != 0 {
			t.Errorf("candidates=%d: second identical recall embedded %d texts", cands, emb.texts.Load())
		}
		if res.Stats.CacheHits != res.Stats.Candidates+1 {
			t.Errorf("cache hits %d, want %d", res.Stats.CacheHits, res.Stats.Candidates+1)
		}
	}
}

// TestConcurrentRecallsEmbedOnce: recalls missing the same texts at the same
// time compute each once.
func TestConcurrentRecallsEmbedOnce(t *testing.T) {
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	emb := &slowCounting{counting: counting{Embedder: h}, gate: make(chan struct{})}
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	load(t, db)
	q := engine.Query{Text: "connection pool", Agent: "a1"}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.Recall(context.Background(), q)
		}()
	}
	// Let the first embedder call block until every recall is in flight.
	for emb.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(emb.gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every distinct text embedded exactly once.
	seen := map[string]int{}
	for _, s := range emb.seen {
		seen[s]++
	}
	for s, c := range seen {
		if c != 1 {
			t.Errorf("%q embedded %d times", s, c)
		}
	}
	if m := db.Metrics().Cache; m.Computed != uint64(len(seen)) {
		t.Errorf("metrics computed %d, want %d", m.Computed, len(seen))
	}
}

type slowCounting struct {
	counting
	gate chan struct{}
}

func (s *slowCounting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, err := s.counting.Embed(ctx, texts)
	<-s.gate
	return v, err
}

func TestConcurrentAppendRecall(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	var wg sync.WaitGroup
	const writers, per = 4, 50
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := db.Append(context.Background(), engine.Record{Agent: "a1", Session: fmt.Sprint("w", w), Text: fmt.Sprintf("writer %d line %d kafka lag", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if _, err := db.Recall(context.Background(), engine.Query{Text: "kafka lag", Agent: "a1"}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	res := recall(t, db, engine.Query{Text: "kafka lag", Agent: "a1", Mode: engine.ModeSparse, K: 1000, Candidates: 1000})
	if len(res.Memories) != writers*per {
		t.Fatalf("%d records found, want %d", len(res.Memories), writers*per)
	}
}

func TestFusionAndRecency(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	q := engine.Query{Text: "connection pool", Agent: "a1", Fusion: engine.FusionWeighted, Explain: true}
	res := recall(t, db, q)
	for i, m := range res.Memories {
		if m.Score < 0 || m.Score > 1 {
			t.Errorf("weighted score %v outside [0,1]", m.Score)
		}
		if i > 0 && m.Score > res.Memories[i-1].Score {
			t.Errorf("not sorted by score")
		}
	}
	// A strong recency prior puts the newest matching record first.
	now := t0.AddDate(0, 0, -2).Add(5 * time.Hour) // an hour after the newest match before it
	q = engine.Query{Text: "connection pool", Agent: "a1", Mode: engine.ModeSparse, Until: now,
		RecencyHalfLife: 10 * time.Minute, RecencyWeight: 1, Now: now}
	res = recall(t, db, q)
	newest := res.Memories[0]
	for _, m := range res.Memories[1:] {
		if m.Time.After(newest.Time) {
			t.Errorf("with recency prior, %v ranks below %v", m.Time, newest.Time)
		}
	}
}

func TestSynonyms(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	q := engine.Query{Text: "hikari settings", Agent: "a1", Mode: engine.ModeSparse}
	plain := recall(t, db, q)
	q.Synonyms = map[string][]string{"Hikari": {"connection pool"}, "unrelated": {"lisbon"}}
	exp := recall(t, db, q)
	if len(exp.Memories) <= len(plain.Memories) {
		t.Fatalf("synonyms did not widen: %d -> %d", len(plain.Memories), len(exp.Memories))
	}
	if !strings.Contains(exp.Stats.Text, "connection pool") || strings.Contains(exp.Stats.Text, "lisbon") {
		t.Errorf("expanded text %q", exp.Stats.Text)
	}
}

func TestSparseOnlyDB(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{DisableEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	load(t, db)
	if _, err := db.Recall(context.Background(), engine.Query{Text: "pool", Agent: "a1"}); !errors.Is(err, engine.ErrNoEmbedder) {
		t.Fatalf("lazy without embedder: %v", err)
	}
	res := recall(t, db, engine.Query{Text: "pool", Agent: "a1", Mode: engine.ModeSparse})
	if len(res.Memories) == 0 {
		t.Fatal("sparse recall found nothing")
	}
}

func TestEmbedderErrors(t *testing.T) {
	db := openT(t, t.TempDir(), badEmbedder{dim: 8})
	defer db.Close()
	load(t, db)
	_, err := db.Recall(context.Background(), engine.Query{Text: "pool", Agent: "a1"})
	if !errors.Is(err, engine.ErrEmbed) {
		t.Fatalf("wrong-dimension embedder: %v", err)
	}
}

type badEmbedder struct{ dim int }

func (b badEmbedder) Name() string { return "bad" }
func (b badEmbedder) Dim() int     { return b.dim }
func (b badEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, b.dim+1)
	}
	return out, nil
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []engine.Options{
		{MaxTextBytes: -1},
		{MaxMetaKeys: -1},
		{DisableEmbedder: true, Embedder: badEmbedder{dim: 4}},
		{Embedder: badEmbedder{dim: 0}},
	} {
		o.EnsureDefaults()
		if err := o.Validate(); !errors.Is(err, engine.ErrOptions) {
			t.Errorf("%+v: Validate = %v", o, err)
		}
	}
	var o engine.Options
	if err := o.EnsureDefaults().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestErrorMessages(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	ctx := context.Background()
	_, err := db.Append(ctx, engine.Record{Text: "x"})
	if got, want := fmt.Sprint(err), "lazymem: record.agent: missing"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = db.AppendBatch(ctx, []engine.Record{{Agent: "a", Text: "ok"}, {Agent: "a", Text: strings.Repeat("x", 70000)}})
	if got, want := fmt.Sprint(err), "lazymem: records[1].text: too long (70000 bytes, limit 65536)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = db.Recall(ctx, engine.Query{Agent: "a", Mode: "eager"})
	if got, want := fmt.Sprint(err), `lazymem: query.mode: unknown value ("eager", want lazy, sparse or dense)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var fe *engine.FieldError
	if !errors.As(err, &fe) || fe.Field != "query.mode" {
		t.Errorf("errors.As FieldError: %#v", err)
	}
}

func TestClosed(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	load(t, db)
	if m := db.Metrics(); m.Appended != uint64(len(corpus())) || m.Index.Docs != uint64(len(corpus())) {
		t.Errorf("metrics %+v", m)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.Append(ctx, engine.Record{Agent: "a", Text: "x"}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if _, err := db.Get(ctx, 1); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if err := db.Close(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

func TestEmptyQueryTextReturnsLatest(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	load(t, db)
	res := recall(t, db, engine.Query{Agent: "a1", Sessions: []string{"s5"}, Mode: engine.ModeSparse, K: 2})
	if got := ids(res.Memories); fmt.Sprint(got) != "[11 10]" {
		t.Errorf("latest of s5 = %v, want [11 10]", got)
	}
}

func TestSpeakerBoost(t *testing.T) {
	db := openT(t, t.TempDir(), newCounting(t))
	defer db.Close()
	recs := []engine.Record{
		{Time: t0, Agent: "conv", Session: "s1", Role: "Melanie", Text: "Caroline, how is the adoption research going? Adoption is a big step, adoption takes time."},
		{Time: t0.Add(time.Minute), Agent: "conv", Session: "s1", Role: "Caroline", Text: "I have been researching adoption agencies all week."},
		{Time: t0.Add(2 * time.Minute), Agent: "conv", Session: "s1", Role: "Melanie", Text: "I painted a lake sunrise last weekend."},
		{Time: t0.Add(3 * time.Minute), Agent: "other", Session: "s9", Role: "Caroline", Text: "Unrelated agent."},
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	q := engine.Query{Text: "What did Caroline research about adoption?", Agent: "conv", Mode: engine.ModeSparse, Explain: true}
	res := recall(t, db, q)
	if fmt.Sprint(res.Stats.Speakers) != "[Caroline]" || strings.Contains(res.Stats.Text, "Caroline") {
		t.Errorf("speakers %q, searched text %q", res.Stats.Speakers, res.Stats.Text)
	}
	if res.Memories[0].Role != "Caroline" || !slices.Contains(res.Memories[0].Reasons, "speaker x2") {
		t.Errorf("with boost, top = %s %q %q", res.Memories[0].Role, res.Memories[0].Text, res.Memories[0].Reasons)
	}
	q.SpeakerBoost = -1
	res = recall(t, db, q)
	if res.Stats.Speakers != nil || res.Memories[0].Role != "Melanie" {
		t.Errorf("without boost: speakers %q, top %s", res.Stats.Speakers, res.Memories[0].Role)
	}
	// Lowercase in the query, lazy and dense modes.
	for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeDense} {
		res = recall(t, db, engine.Query{Text: "what did caroline research about adoption", Agent: "conv", Mode: mode})
		if fmt.Sprint(res.Stats.Speakers) != "[Caroline]" || res.Memories[0].Role != "Caroline" {
			t.Errorf("%s: speakers %q, top %s", mode, res.Stats.Speakers, res.Memories[0].Role)
		}
		// The name is dropped from the embedded query too.
		if res.Stats.DenseText != "what did research about adoption" || strings.Contains(res.Stats.Text, "caroline") {
			t.Errorf("%s: embedded %q, searched %q", mode, res.Stats.DenseText, res.Stats.Text)
		}
	}
	if res = recall(t, db, q); res.Stats.DenseText != "" {
		t.Errorf("sparse mode embedded %q", res.Stats.DenseText)
	}
	// A name that is no role of the agent is searched as a word.
	res = recall(t, db, engine.Query{Text: "Melanie adoption", Agent: "other", Mode: engine.ModeSparse})
	if res.Stats.Speakers != nil || !strings.Contains(res.Stats.Text, "Melanie") {
		t.Errorf("other agent: speakers %q, text %q", res.Stats.Speakers, res.Stats.Text)
	}
}

// TestIndexRepair: a damaged index is set aside and rebuilt from the log.
func TestIndexRepair(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir, newCounting(t))
	load(t, db)
	q := engine.Query{Text: "connection pool", Agent: "a1", Mode: engine.ModeSparse}
	before := ids(recall(t, db, q).Memories)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "index", "MANIFEST")
	b, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(man, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Open(dir, engine.Options{DisableIndexRepair: true}); err == nil {
		t.Fatal("Open with a corrupt index and repair disabled succeeded")
	}
	db = openT(t, dir, newCounting(t))
	defer db.Close()
	if m := db.Metrics(); m.IndexRepaired == "" || m.Index.Docs != uint64(len(corpus())) {
		t.Fatalf("after repair: %+v", m)
	}
	if after := ids(recall(t, db, q).Memories); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after repair %v, before %v", after, before)
	}
}

// TestSessionContext: by default a turn is found by the words of the turn it
// answers (its session's previous turn), across appends, a crash-free
// reopen and an index rebuilt from the log; DisableSessionContext turns it
// off (and a reopen with the other setting re-indexes).
func TestSessionContext(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func(disable bool) *engine.DB {
		t.Helper()
		db, err := engine.Open(dir, engine.Options{DisableEmbedder: true, DisableSessionContext: disable})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	hits := func(db *engine.DB, text string) []string {
		t.Helper()
		return texts(recall(t, db, engine.Query{Agent: "c", Text: text, Mode: engine.ModeSparse}).Memories)
	}
	db := open(false)
	if _, err := db.Append(ctx, engine.Record{Agent: "c", Session: "s1", Role: "Mel", Text: "Which adoption agency did you pick?"}); err != nil {
		t.Fatal(err)
	}
	// The answer arrives in a later call: the predecessor comes from the
	// index's memory of the session.
	if _, err := db.AppendBatch(ctx, []engine.Record{
		{Agent: "c", Session: "s1", Role: "Caroline", Text: "The one in Denver, they were lovely."},
		{Agent: "c", Session: "s2", Role: "Caroline", Text: "I painted a sunrise."},
	}); err != nil {
		t.Fatal(err)
	}
	want := "[Which adoption agency did you pick? The one in Denver, they were lovely.]"
	if got := hits(db, "adoption agency"); fmt.Sprint(got) != want {
		t.Fatalf("with context: %v, want %v", got, want)
	}
	if got := hits(db, "sunrise"); len(got) != 1 {
		t.Fatalf("sunrise: %v", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen: the next turn's predecessor is read back from the log.
	db = open(false)
	if _, err := db.Append(ctx, engine.Record{Agent: "c", Session: "s2", Role: "Mel", Text: "Lovely colours!"}); err != nil {
		t.Fatal(err)
	}
	if got := hits(db, "sunrise"); len(got) != 2 {
		t.Fatalf("sunrise after reopen: %v", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(true)
	if got := hits(db, "adoption agency"); fmt.Sprint(got) != "[Which adoption agency did you pick?]" {
		t.Fatalf("without context: %v", got)
	}
	if m := db.Metrics(); m.Index.Rebuilt != 4 {
		t.Fatalf("setting changed: %d records re-indexed, want 4", m.Index.Rebuilt)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Index lost (or set aside): rebuilt from the log with the same context.
	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	db = open(false)
	defer db.Close()
	if got := hits(db, "adoption agency"); fmt.Sprint(got) != want {
		t.Fatalf("rebuilt: %v, want %v", got, want)
	}
	if got := hits(db, "sunrise"); len(got) != 2 {
		t.Fatalf("sunrise rebuilt: %v", got)
	}
}
