package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// testdata/store-v1/store is a store written by the engine of store format
// 1 (before the store had a FORMAT marker), and
// testdata/store-v1/answers.golden the answers that engine gave on it. TestUpgradeStoreV1 opens a copy of it
// with today's engine and wants the same answers: a change that can no
// longer read what an earlier release wrote fails here.
//
// The store holds three agents, several sessions, English and Chinese text
// and metadata; the log has sealed segments and an unsealed tail; the index
// has two persisted segments and lacks the newest records (it was closed
// without a flush, as after a crash: Open re-indexes them from the log);
// the embedding cache holds the vectors of one lazy recall.
//
// To write such a store again (for a new format version, into a new
// directory: DIR/store and DIR/answers.golden) run
//
//	go test ./engine -run TestWriteStore -write-store=DIR

const (
	storeV1Dir    = "testdata/store-v1/store"
	storeV1Golden = "testdata/store-v1/answers.golden"
)

// storeClock is the fixed clock of the upgrade store: records without a
// time and the queries' reference time.
var storeClock = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func storeOptions() Options {
	o := Options{Clock: func() time.Time { return storeClock }}
	o.Index.Analyzer = storeV1Analyzer()
	return o
}

// storeV1Analyzer is the analysis the upgrade store was written with (CJK
// bigrams without unigrams), so that opening it reads its persisted index
// segments. A store opened under other analysis rules re-indexes from the
// log (the index's own tests cover that); the answers would then follow
// the new rules, not the recorded ones.
func storeV1Analyzer() index.Analyzer {
	o := analysis.DefaultOptions()
	o.CJKUnigrams = false
	a, err := analysis.New(o)
	if err != nil {
		return nil // the index default; the segment check then reports it
	}
	return v1Analyzer{a}
}

type v1Analyzer struct{ a *analysis.Analyzer }

func (v v1Analyzer) Terms(dst []string, text string) []string { return v.a.AppendTerms(dst, text) }
func (v v1Analyzer) Signature() string                        { return v.a.Signature() }

// storeRecords returns the records of the upgrade store in three batches:
// the first two end with an index flush, the third stays in the log only.
func storeRecords() [3][]Record {
	day := func(d, h int) time.Time { return storeClock.AddDate(0, 0, -d).Add(time.Duration(h-12) * time.Hour) }
	return [3][]Record{{
		{Time: day(20, 9), Agent: "a1", Session: "s1", Role: "user", Text: "Let's set the connection pool size to 20 for billing-api.", Meta: map[string][]string{"tags": {"db", "config"}, "service": {"billing-api"}}},
		{Time: day(20, 10), Agent: "a1", Session: "s1", Role: "assistant", Text: "Done: HikariCP maximumPoolSize is now 20 on billing-api.", Meta: map[string][]string{"tags": {"db"}, "service": {"billing-api"}}},
		{Time: day(19, 9), Agent: "a1", Session: "s2", Role: "user", Text: "What's the weather like in Lisbon?", Meta: map[string][]string{"tags": {"chitchat"}}},
		{Time: day(19, 9), Agent: "a1", Session: "s2", Role: "assistant", Text: "Sunny and 22 degrees in Lisbon today."},
		{Time: day(18, 14), Agent: "a2", Session: "x1", Role: "user", Text: "Our connection pool for the inventory service needs tuning.", Meta: map[string][]string{"tags": {"db"}}},
		{Time: day(18, 15), Agent: "a2", Session: "x1", Role: "assistant", Text: "Start with the p99 checkout latency and the pool wait time."},
		{Time: day(17, 8), Agent: "a3", Session: "z1", Role: "用户", Text: "我们下周三和设计团队开会，讨论新的首页。", Meta: map[string][]string{"tags": {"会议"}}},
		{Time: day(17, 9), Agent: "a3", Session: "z1", Role: "助手", Text: "好的，我已经把会议加到日历里了。"},
		{Time: day(16, 10), Agent: "a1", Session: "s3", Role: "user", Text: "The Kafka consumer lag on orders is growing again."},
		{Time: day(16, 11), Agent: "a1", Session: "s3", Role: "assistant", Text: "Scaling the orders consumer group from 4 to 8 partitions fixed the lag before.", Meta: map[string][]string{"tags": {"kafka", "incident"}}},
		{Time: day(15, 12), Agent: "a1", Session: "s3", Role: "user", Text: "Remember that Alice owns the Kafka cluster upgrade."},
		{Time: day(15, 13), Agent: "a2", Session: "x2", Role: "user", Text: "Please email Bob the quarterly inventory report."},
	}, {
		{Time: day(10, 9), Agent: "a1", Session: "s4", Role: "user", Text: "The connection pool is exhausted again, timeouts on checkout.", Meta: map[string][]string{"tags": {"db", "incident"}, "service": {"checkout"}}},
		{Time: day(10, 10), Agent: "a1", Session: "s4", Role: "assistant", Text: "We decided to raise the pool to 50 and add a circuit breaker.", Meta: map[string][]string{"tags": {"db", "decision"}, "service": {"checkout"}}},
		{Time: day(9, 9), Agent: "a3", Session: "z2", Role: "用户", Text: "昨天我们讨论了数据库连接池的配置。", Meta: map[string][]string{"tags": {"数据库"}}},
		{Time: day(9, 10), Agent: "a3", Session: "z2", Role: "助手", Text: "是的，连接池大小改成了五十。", Meta: map[string][]string{"tags": {"数据库", "决定"}}},
		{Time: day(8, 16), Agent: "a1", Session: "s5", Role: "user", Text: "Remind me to email Alice about the Postgres upgrade.", Meta: map[string][]string{"tags": {"todo"}}},
		{Time: day(8, 17), Agent: "a1", Session: "s5", Role: "tool", Text: `{"reminder": "email Alice", "status": "scheduled"}`},
		{Time: day(7, 11), Agent: "a2", Session: "x2", Role: "assistant", Text: "The quarterly inventory report was sent to Bob."},
		{Time: day(6, 12), Agent: "a3", Session: "z3", Role: "用户", Text: "请提醒我明天给张伟打电话，关于预算的问题。", Meta: map[string][]string{"tags": {"提醒"}}},
	}, {
		{Time: day(2, 15), Agent: "a1", Session: "s6", Role: "user", Text: "Postgres upgrade to version 17 is scheduled for Friday night.", Meta: map[string][]string{"tags": {"db", "decision"}}},
		{Time: day(2, 16), Agent: "a1", Session: "s6", Role: "assistant", Text: "Noted: the Postgres 17 upgrade is on Friday; I will warn the billing-api team."},
		{Time: day(1, 9), Agent: "a3", Session: "z3", Role: "助手", Text: "已经提醒：明天给张伟打电话讨论预算。"},
		{Time: day(1, 10), Agent: "a2", Session: "x3", Role: "user", Text: "The inventory service connection pool timeouts are back."},
		{Agent: "a1", Session: "s7", Role: "user", Text: "What did we decide about the connection pool yesterday?"},
		{Agent: "a1", Session: "s7", Role: "assistant", Text: "You raised the checkout pool to 50 and added a circuit breaker."},
	}}
}

// storeQueries are the recalls of the golden file. The first lazy one is
// the recall whose vectors the stored embedding cache holds.
func storeQueries() []Query {
	day := func(d int) time.Time { return storeClock.AddDate(0, 0, -d) }
	return []Query{
		{Text: "connection pool size", Agent: "a1"},
		{Text: "connection pool size", Agent: "a1", Mode: ModeSparse},
		{Text: "kafka lag", Agent: "a1", Mode: ModeSparse, K: 3},
		{Text: "连接池", Agent: "a3", Mode: ModeSparse},
		{Text: "连接池配置", Agent: "a3"},
		{Text: "pool", Agents: []string{"a1", "a2"}, Mode: ModeSparse, Where: map[string][]string{"tags": {"db"}}, Not: map[string][]string{"tags": {"incident"}}},
		{Text: "upgrade", Agent: "a1", Mode: ModeSparse, Since: day(9), Until: day(0)},
		{Text: "what did we decide", Agent: "a1", CurrentSession: "s7", Mode: ModeSparse},
		{Text: "inventory report", Agent: "a2", Sessions: []string{"x2"}},
		{Text: "email Alice", Agent: "a1", Roles: []string{"user"}, Mode: ModeSparse},
		{Text: "提醒 打电话", Agent: "a3", Mode: ModeDense},
		{Text: "what happened last week", Agent: "a1", Mode: ModeSparse, ParseTime: true},
	}
}

// storeAnswer is one line of the golden file: a recall's ranked ids and
// scores, or a Get's record.
type storeAnswer struct {
	Name   string   `json:"name"`
	IDs    []uint64 `json:"ids,omitempty"`
	Scores []string `json:"scores,omitempty"` // %.4f: robust to the last bits of a SIMD sum
	Record *Record  `json:"record,omitempty"`
	Err    string   `json:"err,omitempty"`
}

// storeAnswers runs the golden recalls and Gets on db.
func storeAnswers(t *testing.T, db *DB) []storeAnswer {
	t.Helper()
	ctx := context.Background()
	var out []storeAnswer
	for i, q := range storeQueries() {
		q.Now = storeClock
		res, err := db.Recall(ctx, q)
		if err != nil {
			t.Fatalf("recall %d (%+v): %v", i, q, err)
		}
		a := storeAnswer{Name: fmt.Sprintf("recall %d %s %q", i, res.Stats.Mode, q.Text)}
		for _, m := range res.Memories {
			a.IDs = append(a.IDs, m.ID)
			a.Scores = append(a.Scores, fmt.Sprintf("%.4f", m.Score))
		}
		out = append(out, a)
	}
	n := uint64(0)
	for _, b := range storeRecords() {
		n += uint64(len(b))
	}
	for id := uint64(1); id <= n+1; id++ { // n+1: never assigned
		a := storeAnswer{Name: fmt.Sprintf("get %d", id)}
		r, err := db.Get(ctx, id)
		if err != nil {
			a.Err = strings.TrimPrefix(err.Error(), "lazymem: engine: ")
		} else {
			r.Time = r.Time.UTC()
			a.Record = &r
		}
		out = append(out, a)
	}
	return out
}

// copyTree copies the directory tree src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// openCopy opens a copy of the store in dir (testdata is never written).
func openCopy(t *testing.T, dir string, opts Options) *DB {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "store")
	copyTree(t, dir, cp)
	db, err := Open(cp, opts)
	if err != nil {
		t.Fatalf("open a copy of %s: %v", dir, err)
	}
	return db
}

// TestUpgradeStoreV1: today's engine opens a store written by format 1 and
// gives the answers recorded when it was written.
func TestUpgradeStoreV1(t *testing.T) {
	golden, err := os.ReadFile(storeV1Golden)
	if err != nil {
		t.Fatal(err)
	}
	db := openCopy(t, storeV1Dir, storeOptions())
	defer db.Close()
	m := db.Metrics()
	if m.IndexRepaired != "" {
		t.Fatalf("the stored index was set aside as corrupt: %s", m.IndexRepaired)
	}
	// The persisted index segments were read, and only the last batch was
	// re-indexed from the log.
	batches := storeRecords()
	if m.Index.Segments != 2 || m.Index.Rebuilt != uint64(len(batches[2])) {
		t.Errorf("index: %d segments, %d rebuilt from the log; want 2 and %d", m.Index.Segments, m.Index.Rebuilt, len(batches[2]))
	}
	if m.Log.Segments == 0 || m.Log.TailRecords == 0 {
		t.Errorf("log: %d segments, %d tail records; want both", m.Log.Segments, m.Log.TailRecords)
	}
	// The glossary (a query's translations, not the store) came after the
	// answers were recorded: it adds 连接池 to "connection pool size" and
	// so scales the query's own words (expandOwn).
	noGlossary = true
	defer func() { noGlossary = false }()
	// So did the prior on decisions in a question asking only what was
	// decided (recall_decided.go): it scales "what did we decide"'s
	// scores, not its order.
	defer func(b float32) { decisionBoost = b }(decisionBoost)
	decisionBoost = 1
	// So did the half weight of a [current] word beside a topic and the
	// expansion's own stems left out (recall_parse.go).
	defer func(n int, d bool) { currentReps, dropOwnStems = n, d }(currentReps, dropOwnStems)
	currentReps, dropOwnStems = expandOwn, false
	got := storeAnswers(t, db)
	// The first recall's vectors come from the stored embedding cache.
	if c := db.Metrics().Cache; c.DiskHits == 0 {
		t.Errorf("no embedding read from the stored cache (%+v)", c)
	}
	lines := strings.Split(strings.TrimSpace(string(golden)), "\n")
	if len(lines) != len(got) {
		t.Fatalf("golden has %d answers, the store gave %d", len(lines), len(got))
	}
	for i, line := range lines {
		b, err := json.Marshal(got[i])
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != line {
			t.Errorf("answer %d:\n got %s\nwant %s", i, b, line)
		}
	}
}

// TestStoreFormat: a store without a FORMAT marker (written before it
// existed) or with an older one opens and gets this engine's marker (the
// log may write version-4 segments, which a format-1 engine would take
// for damage); a new store writes it; a marker of a newer format or a
// damaged one makes Open fail with ErrFormat, before anything else is
// opened.
func TestStoreFormat(t *testing.T) {
	t.Chdir(t.TempDir())
	mem := vfs.NewMem()
	readMarker := func(dir string) uint32 {
		t.Helper()
		b, err := readFile(mem, mem.PathJoin(dir, formatName))
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeFormat(b)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// An old store: the committed one has no marker.
	if _, err := os.Stat(filepath.Join(pkgDir, storeV1Dir, formatName)); !os.IsNotExist(err) {
		t.Fatalf("%s has a FORMAT marker (%v): it no longer stands for a store written before the marker", storeV1Dir, err)
	}
	db := openCopy(t, filepath.Join(pkgDir, storeV1Dir), storeOptions())
	if v := db.Metrics().StoreFormat; v != formatVersion {
		t.Errorf("store without a marker: format %d after Open, want %d", v, formatVersion)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A new store writes the marker.
	db, err := Open("new", memStoreOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if v := readMarker("new"); v != formatVersion {
		t.Errorf("new store marker: version %d, want %d", v, formatVersion)
	}

	write := func(b []byte) {
		t.Helper()
		if err := writeFileSync(mem, mem.PathJoin("new", formatName), b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"newer", appendFormat(nil, formatVersion+1), fmt.Sprintf("store format %d", formatVersion+1)},
		{"zero", appendFormat(nil, 0), "version 0"},
		{"flipped", func() []byte { b := appendFormat(nil, 1); b[9] ^= 1; return b }(), "checksum"},
		{"magic", append([]byte("LZMSTORX"), appendFormat(nil, 1)[8:]...), "bad magic"},
		{"short", []byte("LZMSTORE"), "bad magic or size"},
	} {
		write(c.b)
		_, err := Open("new", memStoreOptions(mem))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s marker: Open = %v, want ErrFormat mentioning %q", c.name, err, c.want)
		}
	}
	write(appendFormat(nil, 1))
	db, err = Open("new", memStoreOptions(mem))
	if err != nil {
		t.Fatalf("after restoring the marker: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if v := readMarker("new"); v != formatVersion {
		t.Errorf("format-1 marker after Open: version %d, want %d", v, formatVersion)
	}
}

// pkgDir is the package directory, where the test started: tests that
// change the working directory still find testdata through it.
var pkgDir = func() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}()

// TestUpgradeStoreV1Defaults: opened as a user upgrading would open it
// (today's default options, whose analysis differs from the one the store
// was written with), the format-1 store re-indexes itself from its log and
// then answers every recall and Get exactly as a store written from
// scratch with today's code and the same records does.
func TestUpgradeStoreV1Defaults(t *testing.T) {
	opts := Options{Clock: func() time.Time { return storeClock }}
	old := openCopy(t, storeV1Dir, opts)
	defer old.Close()
	n := 0
	for _, b := range storeRecords() {
		n += len(b)
	}
	if m := old.Metrics(); m.Index.Rebuilt != uint64(n) {
		t.Errorf("index rebuilt %d records from the log, want all %d (the analysis changed)", m.Index.Rebuilt, n)
	}
	fresh, err := Open(filepath.Join(t.TempDir(), "fresh"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	ctx := context.Background()
	for i, b := range storeRecords() {
		if i == 0 {
			if _, err := fresh.Append(ctx, b[0]); err != nil {
				t.Fatal(err)
			}
			b = b[1:]
		}
		if _, err := fresh.AppendBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, want := storeAnswers(t, old), storeAnswers(t, fresh)
	if len(got) != len(want) {
		t.Fatalf("%d answers from the upgraded store, %d from a fresh one", len(got), len(want))
	}
	for i := range want {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Errorf("answer %d:\nupgraded %s\n   fresh %s", i, g, w)
		}
	}
}
