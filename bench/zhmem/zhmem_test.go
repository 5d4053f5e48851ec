package zhmem_test

import (
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed/use"
	"github.com/lazymem/lazymem/internal/testenv"
)

var zhStrict = flag.Bool("zhmem.strict", false, "assert the targets (lazy, hash embedder: R@1 >= 0.65, R@5 >= 0.95) instead of today's floors")

func TestLoadTestdata(t *testing.T) {
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) < 400 || len(s.Questions) < 120 {
		t.Fatalf("%d records, %d questions: want at least 400 and 120", len(s.Records), len(s.Questions))
	}
	if s.Agent != "xiaolin" {
		t.Fatalf("agent %q", s.Agent)
	}
	kinds := map[string]int{}
	for _, q := range s.Questions {
		kinds[q.Kind]++
	}
	for _, k := range []string{"lexical", "paraphrase", "update", "multi"} {
		if kinds[k] == 0 {
			t.Errorf("no question of kind %s", k)
		}
	}
	if len(kinds) != 4 {
		t.Errorf("kinds %v: want exactly lexical, paraphrase, update, multi", kinds)
	}
}

const (
	goodChat = `{"agent":"u","session":"d1","role":"user","time":"2026-10-01T20:00:00+08:00","text":"我对虾过敏","meta":{"key":["a"]}}
{"agent":"u","session":"d1","role":"assistant","time":"2026-10-01T20:01:00+08:00","text":"记住了","meta":{"key":["b"]}}
{"agent":"u","session":"d2","role":"user","time":"2026-10-02T20:00:00+08:00","text":"朵朵的钢琴课在周六上午","meta":{"key":["c"]}}
`
	goodQuestions = `{"id":"q1","text":"我对什么过敏？","kind":"lexical","evidence":["a"]}
{"id":"q2","text":"钢琴课是哪天？","kind":"lexical","evidence":["c","a"]}
`
)

func writeSet(t *testing.T, chats, questions string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"chats.jsonl": chats, "questions.jsonl": questions} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, chats, questions, want string
	}{
		{"evidence names no record", goodChat, `{"id":"q1","text":"x","kind":"lexical","evidence":["zz"]}`, `evidence[0]: "zz" names no record`},
		{"evidence listed twice", goodChat, `{"id":"q1","text":"x","kind":"lexical","evidence":["a","a"]}`, `evidence[1]: "a" listed twice`},
		{"no evidence", goodChat, `{"id":"q1","text":"x","kind":"lexical","evidence":[]}`, "evidence: empty"},
		{"no kind", goodChat, `{"id":"q1","text":"x","evidence":["a"]}`, "kind: missing"},
		{"question id twice", goodChat, goodQuestions + `{"id":"q1","text":"x","kind":"lexical","evidence":["a"]}`, `id: "q1" used twice`},
		{"empty question", goodChat, `{"id":"q1","text":" ","kind":"lexical","evidence":["a"]}`, "text: empty"},
		{"unknown field", goodChat, `{"id":"q1","text":"x","kind":"lexical","evidence":["a"],"answer":"y"}`, "unknown field"},
		{"key twice", goodChat + `{"agent":"u","session":"d2","role":"user","time":"2026-10-02T20:00:00+08:00","text":"x","meta":{"key":["a"]}}`, goodQuestions, `meta.key: "a" used twice`},
		{"no key", `{"agent":"u","session":"d1","role":"user","time":"2026-10-01T20:00:00+08:00","text":"x"}`, goodQuestions, "meta.key: want one"},
		{"two agents", goodChat + `{"agent":"v","session":"d2","role":"user","time":"2026-10-02T20:00:00+08:00","text":"x","meta":{"key":["d"]}}`, goodQuestions, `agent: "v", the set's agent is "u"`},
		{"no time", `{"agent":"u","role":"user","text":"x","meta":{"key":["a"]}}`, goodQuestions, "time: missing"},
		{"bad json", goodChat + "{", goodQuestions, "chats.jsonl:4"},
		{"no questions", goodChat, "\n", "no questions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zhmem.Load(writeSet(t, tc.chats, tc.questions))
			if !errors.Is(err, zhmem.ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrFormat containing %q", err, tc.want)
			}
		})
	}
	if _, err := zhmem.Load(t.TempDir()); !errors.Is(err, zhmem.ErrFormat) {
		t.Fatalf("empty dir: err = %v, want ErrFormat", err)
	}
}

// TestEvaluateMetric checks R@k on a set small enough to know the ranking:
// q1 finds its only evidence first; q2 finds c but not a (no word of q2 is
// in a).
func TestEvaluateMetric(t *testing.T) {
	s, err := zhmem.Load(writeSet(t, goodChat, goodQuestions))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := zhmem.Evaluate(context.Background(), s, zhmem.Config{Mode: engine.ModeSparse, Ks: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Ranks["q1"]; len(got) != 1 || got[0] != 1 {
		t.Errorf("q1 ranks %v, want [1]", got)
	}
	if got := rep.Ranks["q2"]; len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Errorf("q2 ranks %v, want [1 0]", got)
	}
	// R@1 = (1 + 1/2) / 2.
	if rep.Recall[1] != 0.75 || rep.Recall[2] != 0.75 {
		t.Errorf("recall %v, want 0.75 at 1 and 2", rep.Recall)
	}
	if rep.Embedded != 0 || rep.Embedder != "" {
		t.Errorf("sparse run embedded %d with %q", rep.Embedded, rep.Embedder)
	}
	if _, err := zhmem.Evaluate(context.Background(), s, zhmem.Config{Ks: []int{0}}); !errors.Is(err, zhmem.ErrConfig) {
		t.Errorf("ks 0: err = %v, want ErrConfig", err)
	}
	if _, err := zhmem.Evaluate(context.Background(), s, zhmem.Config{Mode: "eager"}); !errors.Is(err, zhmem.ErrConfig) {
		t.Errorf("mode eager: err = %v, want ErrConfig", err)
	}
	for _, c := range []zhmem.Config{{DenseWeight: -0.1}, {DenseWeight: 1.5}, {Candidates: -1}, {Candidates: engine.MaxCandidates + 1}} {
		if _, err := zhmem.Evaluate(context.Background(), s, c); !errors.Is(err, zhmem.ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", c, err)
		}
	}
}

// zhFloors are today's R@1, R@5, R@10 per run rounded down to two
// decimals: a run falling below is a regression; raise them when a change
// lifts a run. Measured on 2026-12-01 (145 questions): sparse
// 0.259/0.517/0.607, lazy with hash-v2-d384 0.293/0.510/0.653, lazy with
// use-lite-v1 0.238/0.486/0.600 (English-only model: below sparse at R@1).
// Raised after the engine's query understanding (lexicon, pleasantries,
// fallback pass, recency, questions in the history x0.85, everyday-life
// concepts in the lexicon, Chinese question words out of the BM25 text):
// sparse 0.300/0.600/0.700, lazy hash 0.345/0.634/0.732. Raised after
// hash-v3 (Chinese function characters down-weighted) and CJK unigrams in
// the index: sparse 0.345/0.652/0.754, lazy hash-v3 0.390/0.679/0.775.
// Raised after the named-date prior and the session-neighbour rule in
// fusion: sparse 0.345/0.714/0.786, lazy hash-v3 0.390/0.738/0.810, lazy
// use-lite 0.352/0.731/0.793; the lexicon's budget concept split from
// cost then took one question (z-082) out of the top 5: sparse
// 0.345/0.707/0.786, lazy hash 0.390/0.731/0.810, lazy use-lite
// 0.352/0.724/0.793. Raised after everyday-life concepts in the lexicon
// (pain, injury, illness and treatment, resigning, departing and returning,
// the Spring Festival, driving, weather, savings, investing, insurance,
// ...): sparse 0.345/0.745/0.821, lazy hash 0.407/0.759/0.834, lazy
// use-lite 0.359/0.748/0.814. Raised after the when-question rule (a
// record stating a time x1.5): sparse 0.366/0.752/0.821, lazy hash
// 0.414/0.772/0.834, lazy use-lite 0.379/0.755/0.814. Raised after the
// assistant-turn rules, rule 3 narrowed to a bare prompt, the assistant as
// the speaker of "你建议…" (docs/benchmarks/zh-sets.md): sparse
// 0.462/0.783/0.841, lazy hash 0.500/0.810/0.841, lazy use-lite
// 0.469/0.783/0.834. Raised after the slot rules (engine/recall_slot.go:
// the asked value's type, supersession by slot): sparse 0.483/0.790/0.855,
// lazy hash 0.514/0.810/0.855, lazy use-lite 0.490/0.790/0.848.
// The targets are R@1 >= 0.65 and R@5 >= 0.95 (-zhmem.strict).
//
// Lazy hash R@1 lowered 0.51 -> 0.50 on 2026-12-07 (19257b0: a one-word
// [current] term beside a topic weighs half; 0.521 -> 0.507, two questions
// from rank 1 to 2 and "我现在体重多少？" out of the top 10, whose answer
// says 现在 but not 体重; the 36 scenario sets' hit@5 +2.1).
var zhFloors = map[string][3]float64{
	"sparse":    {0.48, 0.78, 0.85},
	"lazy/hash": {0.50, 0.81, 0.85},
	"lazy/use":  {0.48, 0.78, 0.84},
}

// zhFloors2 are the floors of the second set (testdata/second), the same
// way: measured on 2026-12-02 (174 questions) sparse 0.452/0.808/0.860,
// lazy hash 0.503/0.826/0.860, lazy use-lite 0.463/0.808/0.849; after
// the earlier-state rule sparse 0.452/0.820/0.860; after the slot rules
// sparse 0.498/0.837/0.874, lazy hash 0.524/0.843/0.879, lazy use-lite
// 0.492/0.826/0.868.
//
// Sparse R@5 lowered 0.84 -> 0.83 on 2026-12-06 (e63fb67, supersession
// reversed in a question about the earlier state: 0.843 -> 0.837, a
// paraphrase question's second evidence turn out of the top 5; the same
// rule lifts newer-en, newer-zh and newer2-zh at R@1).
var zhFloors2 = map[string][3]float64{
	"sparse":    {0.50, 0.83, 0.87},
	"lazy/hash": {0.53, 0.84, 0.87},
	"lazy/use":  {0.49, 0.82, 0.86},
}

// zhFloors3 are the floors of the third set (testdata/third, written
// before measuring), the same way: measured on 2026-12-02 (169
// questions) at the rules it was written against, sparse
// 0.458/0.797/0.854, lazy hash 0.475/0.797/0.878, lazy use-lite
// 0.440/0.803/0.860; after the alias expansion and the earlier-state
// rule (docs/benchmarks/zh-sets.md) sparse 0.458/0.797/0.854, lazy hash
// 0.487/0.797/0.884, lazy use-lite 0.446/0.809/0.860; after the slot
// rules sparse 0.471/0.799/0.860, lazy hash 0.489/0.801/0.884, lazy
// use-lite 0.465/0.811/0.872.
var zhFloors3 = map[string][3]float64{
	"sparse":    {0.47, 0.81, 0.86},
	"lazy/hash": {0.48, 0.81, 0.88},
	"lazy/use":  {0.46, 0.81, 0.87},
}

// zhFloorsNewerZh and zhFloorsNewerEn are the floors of the supersession
// sets (testdata/newer-zh and newer-en, written before measuring: current
// state, earlier state, unchanged controls), the same way: measured on
// 2026-12-02 at the rules they were written against (newer-zh 51
// questions: sparse 0.216/0.686/0.882, lazy hash 0.294/0.784/0.922, lazy
// use-lite 0.196/0.745/0.863; newer-en 45: sparse 0.244/0.733/0.867, lazy
// hash 0.356/0.756/0.867, lazy use-lite 0.289/0.733/0.889), then after the
// first person of a named user and the settling turns
// (engine/recall_newer.go; docs/benchmarks/zh-sets.md): newer-zh sparse
// 0.255/0.686/0.902, lazy hash 0.333/0.804/0.941, lazy use-lite
// 0.216/0.725/0.882; newer-en sparse 0.289/0.733/0.889, lazy hash
// 0.356/0.756/0.889, lazy use-lite 0.311/0.756/0.889; after the slot
// rules (engine/recall_slot.go) newer-zh sparse 0.275/0.765/0.922, lazy
// hash 0.353/0.824/0.941, lazy use-lite 0.235/0.784/0.922; newer-en sparse
// 0.333/0.756/0.889, lazy hash 0.444/0.778/0.889, lazy use-lite
// 0.400/0.778/0.889.
//
// zhFloorsNewer2Zh and zhFloorsNewer2En are the floors of the second pair
// (testdata/newer2-zh and newer2-en, written before the slot rules and
// before measuring): at the rules they were written against (main
// 432acce) newer2-zh sparse 0.449/0.755/0.939, lazy hash
// 0.490/0.796/0.939, lazy use-lite 0.408/0.776/0.918; newer2-en sparse
// 0.273/0.705/0.818, lazy hash 0.341/0.750/0.886, lazy use-lite
// 0.318/0.818/0.909; after the slot rules newer2-zh sparse
// 0.490/0.816/0.939, lazy hash 0.531/0.837/0.939, lazy use-lite
// 0.469/0.816/0.918; newer2-en sparse 0.318/0.795/0.841, lazy hash
// 0.432/0.773/0.864, lazy use-lite 0.386/0.864/0.909.
//
// zhFloorsFourth are the floors of the fourth set (testdata/fourth,
// written and committed before any retrieval ran on it), measured at the
// rules it was written against (main a608392): sparse 0.472/0.725/0.824,
// lazy hash 0.500/0.725/0.838, lazy use-lite 0.472/0.704/0.845.
//
// The sparse and lazy-hash floors of the second, third, fourth,
// newer-zh and the newer2 sets were raised on 2026-12-06 to what they
// measure at 84f74f1 (the lexicon's 169 concepts of that session:
// docs/benchmarks/scenarios.md); the use-lite floors stay.
var (
	zhFloorsFourth = map[string][3]float64{
		"sparse":    {0.47, 0.72, 0.83},
		"lazy/hash": {0.50, 0.72, 0.83},
		// R@10 0.845 -> 0.831 on 2026-12-06 (e63fb67/c00ea49: a fact
		// question's evidence from 10 to 11; R@1/5 .472/.718 ->
		// .486/.732, the earlier-state questions .4/.8 -> .6/1).
		"lazy/use": {0.47, 0.70, 0.83},
	}
	zhFloorsNewerZh = map[string][3]float64{
		"sparse":    {0.31, 0.78, 0.92},
		"lazy/hash": {0.37, 0.82, 0.94},
		"lazy/use":  {0.23, 0.78, 0.92},
	}
	zhFloorsNewerEn = map[string][3]float64{
		"sparse":    {0.33, 0.75, 0.88},
		"lazy/hash": {0.44, 0.77, 0.88},
		// R@10 0.889 -> 0.867 on 2026-12-07 (19257b0, the same change:
		// one evidence turn from 10 to 11; R@1/5 unchanged).
		"lazy/use": {0.40, 0.77, 0.86},
	}
	zhFloorsNewer2Zh = map[string][3]float64{
		"sparse":    {0.51, 0.87, 0.95},
		"lazy/hash": {0.53, 0.89, 0.93},
		"lazy/use":  {0.46, 0.81, 0.91},
	}
	zhFloorsNewer2En = map[string][3]float64{
		"sparse":    {0.31, 0.79, 0.84},
		"lazy/hash": {0.45, 0.77, 0.86},
		"lazy/use":  {0.38, 0.86, 0.90},
	}
)

// TestZhMem evaluates the Chinese set: sparse, lazy with the hash embedder
// and, when the model files are present, lazy with USE-lite (an English
// model: see the package comment). It logs the figures and asserts the
// floors, or the targets under -zhmem.strict.
//
//	go test -run TestZhMem -v ./bench/zhmem/
func TestZhMem(t *testing.T) {
	for _, set := range []struct {
		dir    string
		floors map[string][3]float64
	}{{"testdata", zhFloors}, {filepath.Join("testdata", "second"), zhFloors2}, {filepath.Join("testdata", "third"), zhFloors3},
		{filepath.Join("testdata", "newer-zh"), zhFloorsNewerZh}, {filepath.Join("testdata", "newer-en"), zhFloorsNewerEn},
		{filepath.Join("testdata", "newer2-zh"), zhFloorsNewer2Zh}, {filepath.Join("testdata", "newer2-en"), zhFloorsNewer2En},
		{filepath.Join("testdata", "fourth"), zhFloorsFourth}} {
		t.Run(filepath.Base(set.dir), func(t *testing.T) { testZhMem(t, set.dir, set.floors) })
	}
}

func testZhMem(t *testing.T, dir string, floors map[string][3]float64) {
	s, err := zhmem.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type run struct {
		name string
		cfg  zhmem.Config
	}
	runs := []run{{"sparse", zhmem.Config{Mode: engine.ModeSparse}}, {"lazy/hash", zhmem.Config{Mode: engine.ModeLazy}}}
	mdir := os.Getenv("LAZYMEM_USE_DIR")
	if mdir == "" {
		mdir = filepath.Join("..", "..", ".cache", "use-lite")
	}
	if _, err := os.Stat(filepath.Join(mdir, "model.json")); err == nil {
		u, err := use.New(mdir, use.Options{})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{"lazy/use", zhmem.Config{Mode: engine.ModeLazy, Embedder: u}})
	} else if testenv.CI() {
		testenv.Missing(t, "USE-lite model in %s (make use-model)", mdir)
	} else {
		t.Logf("lazy/use not run: no USE-lite model in %s (make use-model)", mdir)
	}
	var reps []*zhmem.Report
	for _, r := range runs {
		rep, err := zhmem.Evaluate(ctx, s, r.cfg)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		reps = append(reps, rep)
		got := [3]float64{rep.Recall[1], rep.Recall[5], rep.Recall[10]}
		if *zhStrict {
			if r.name == "lazy/hash" && (got[0] < 0.65 || got[1] < 0.95) {
				t.Errorf("strict: %s R@1 %.3f R@5 %.3f, targets 0.65 and 0.95", r.name, got[0], got[1])
			}
			continue
		}
		f := floors[r.name]
		for i, k := range []int{1, 5, 10} {
			if got[i] < f[i] {
				t.Errorf("%s R@%d %.3f fell below its floor %.2f", r.name, k, got[i], f[i])
			}
		}
		if floor2(got[0]) > f[0] || floor2(got[1]) > f[1] || floor2(got[2]) > f[2] {
			t.Logf("%s is above its floors: raise the floors of %s [%q] to {%.2f, %.2f, %.2f}", r.name, dir, r.name, floor2(got[0]), floor2(got[1]), floor2(got[2]))
		}
	}
	var b strings.Builder
	if err := zhmem.WriteTable(&b, reps...); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

func floor2(x float64) float64 { return math.Floor(x*100+1e-9) / 100 }

// TestLoadSecond checks the out-of-sample set (testdata/second) loads and
// has every kind of question.
func TestLoadSecond(t *testing.T) {
	s, err := zhmem.Load(filepath.Join("testdata", "second"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) < 400 || len(s.Questions) < 150 {
		t.Fatalf("%d records, %d questions: want at least 400 and 150", len(s.Records), len(s.Questions))
	}
	if s.Agent != "zhaolei" {
		t.Fatalf("agent %q", s.Agent)
	}
	kinds := map[string]int{}
	for _, q := range s.Questions {
		kinds[q.Kind]++
	}
	if len(kinds) != 4 || kinds["lexical"] == 0 || kinds["paraphrase"] == 0 || kinds["update"] == 0 || kinds["multi"] == 0 {
		t.Errorf("kinds %v: want lexical, paraphrase, update and multi", kinds)
	}
}

// TestLoadThird checks the second out-of-sample set (testdata/third) loads
// and has every kind of question, alias and earlier-state ones among them.
func TestLoadThird(t *testing.T) {
	s, err := zhmem.Load(filepath.Join("testdata", "third"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) < 300 || len(s.Questions) < 150 {
		t.Fatalf("%d records, %d questions: want at least 300 and 150", len(s.Records), len(s.Questions))
	}
	if s.Agent != "hanmei" {
		t.Fatalf("agent %q", s.Agent)
	}
	kinds, alias, earlier := map[string]int{}, 0, 0
	for _, q := range s.Questions {
		kinds[q.Kind]++
		if strings.Contains(q.Note, "alias:") {
			alias++
		}
		if strings.HasPrefix(q.Note, "earlier") {
			earlier++
		}
	}
	if len(kinds) != 4 || kinds["lexical"] == 0 || kinds["paraphrase"] == 0 || kinds["update"] == 0 || kinds["multi"] == 0 {
		t.Errorf("kinds %v: want lexical, paraphrase, update and multi", kinds)
	}
	if alias == 0 || earlier == 0 {
		t.Errorf("%d alias and %d earlier-state questions: want some of each", alias, earlier)
	}
}

// TestLoadNewer checks the supersession sets (testdata/newer-zh,
// newer-en, newer2-zh and newer2-en) load, hold at least 160 questions
// together, and have the three kinds, current-state questions the most.
func TestLoadNewer(t *testing.T) {
	n := 0
	for _, dir := range []string{"newer-zh", "newer-en", "newer2-zh", "newer2-en"} {
		s, err := zhmem.Load(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, q := range s.Questions {
			kinds[q.Kind]++
		}
		if len(kinds) != 3 || kinds["current"] <= kinds["earlier"] || kinds["current"] <= kinds["control"] || kinds["earlier"] == 0 || kinds["control"] == 0 {
			t.Errorf("%s: kinds %v: want current (the most), earlier and control", dir, kinds)
		}
		n += len(s.Questions)
	}
	if n < 160 {
		t.Errorf("%d questions: want at least 160", n)
	}
}

// TestLoadFourth checks the fourth set (testdata/fourth) loads, holds 60
// to 80 questions over at least 140 turns, and has every kind its README
// lists, each with evidence.
func TestLoadFourth(t *testing.T) {
	s, err := zhmem.Load(filepath.Join("testdata", "fourth"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) < 140 || len(s.Questions) < 60 || len(s.Questions) > 80 {
		t.Errorf("%d records, %d questions: want at least 140 and 60 to 80", len(s.Records), len(s.Questions))
	}
	kinds := map[string]int{}
	for _, q := range s.Questions {
		kinds[q.Kind]++
		if len(q.Evidence) == 0 {
			t.Errorf("%s: no evidence", q.ID)
		}
	}
	for _, k := range []string{"fact", "preference", "plan", "update", "earlier", "who", "when", "paraphrase", "nooverlap", "multi"} {
		if kinds[k] == 0 {
			t.Errorf("no question of kind %s (kinds %v)", k, kinds)
		}
	}
}
