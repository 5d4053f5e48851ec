package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

func generate(t testing.TB, cfg Config) []Record {
	t.Helper()
	g := New(cfg)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	var out []Record
	var r Record
	for g.Next(&r) {
		out = append(out, r)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, Records: 5000, Agents: 20, Sessions: 10}
	a, b := generate(t, cfg), generate(t, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed produced different records")
	}
	qa, qb := New(cfg).Queries(100), New(cfg).Queries(100)
	if len(qa) == 0 || !reflect.DeepEqual(qa, qb) {
		t.Fatalf("same seed produced different queries (%d, %d)", len(qa), len(qb))
	}
	ka, kb := KeywordQueries(cfg, 50, 7), KeywordQueries(cfg, 50, 7)
	if !reflect.DeepEqual(ka, kb) {
		t.Fatal("same seed produced different keyword queries")
	}

	cfg2 := cfg
	cfg2.Seed = 43
	c := generate(t, cfg2)
	same := 0
	for i := range a {
		if a[i].Text == c[i].Text {
			same++
		}
	}
	if same > len(a)/100 {
		t.Fatalf("seeds 42 and 43 share %d of %d texts", same, len(a))
	}
	if reflect.DeepEqual(qa, New(cfg2).Queries(100)) {
		t.Fatal("different seeds produced the same queries")
	}
	if reflect.DeepEqual(ka, KeywordQueries(cfg, 50, 8)) {
		t.Fatal("different seeds produced the same keyword queries")
	}
}

// Queries must not depend on when they are asked, nor shift the records.
func TestQueriesAnytime(t *testing.T) {
	cfg := Config{Seed: 3, Records: 3000}
	g := New(cfg)
	before := g.Queries(50)
	var r Record
	var texts []string
	for g.Next(&r) {
		texts = append(texts, r.Text)
	}
	if after := g.Queries(50); !reflect.DeepEqual(before, after) {
		t.Fatal("Queries changed after generation")
	}
	ref := generate(t, cfg)
	for i := range ref {
		if ref[i].Text != texts[i] {
			t.Fatalf("record %d differs when Queries is called first", i)
		}
	}
}

func TestShape(t *testing.T) {
	cfg := Config{Seed: 1, Records: 20000}
	recs := generate(t, cfg)
	if len(recs) != cfg.Records {
		t.Fatalf("got %d records, want %d", len(recs), cfg.Records)
	}
	cfg.EnsureDefaults()
	end := cfg.Start.Add(cfg.Span)
	agents := map[string]bool{}
	sessions := map[string]bool{}
	roles := map[string]int{}
	cjk := 0
	var prev time.Time
	for i, r := range recs {
		if r.Time.Before(cfg.Start) || !r.Time.Before(end) {
			t.Fatalf("record %d time %v outside [%v, %v)", i, r.Time, cfg.Start, end)
		}
		if r.Time.Before(prev) {
			t.Fatalf("record %d time %v before previous %v", i, r.Time, prev)
		}
		prev = r.Time
		if r.Text == "" || r.Agent == "" || r.Session == "" {
			t.Fatalf("record %d has empty fields: %+v", i, r)
		}
		if !strings.HasPrefix(r.Session, r.Agent+"-s") {
			t.Fatalf("record %d: session %q not of agent %q", i, r.Session, r.Agent)
		}
		agents[r.Agent] = true
		sessions[r.Session] = true
		roles[r.Role]++
		for _, k := range []string{"tags", "intent", "task_type"} {
			if len(r.Meta[k]) == 0 {
				t.Fatalf("record %d lacks meta %q: %v", i, k, r.Meta)
			}
		}
		for _, e := range r.Meta["entities"] {
			if !strings.Contains(r.Text, e) {
				t.Fatalf("record %d: entity %q not in text %q", i, e, r.Text)
			}
		}
		for _, c := range r.Text {
			if unicode.Is(unicode.Han, c) {
				cjk++
				break
			}
		}
	}
	if len(agents) != DefaultAgents {
		t.Errorf("%d agents, want %d", len(agents), DefaultAgents)
	}
	if len(sessions) < DefaultAgents*DefaultSessions*9/10 {
		t.Errorf("only %d sessions", len(sessions))
	}
	if len(roles) != 3 || roles[RoleUser] < len(recs)/4 || roles[RoleAssistant] < len(recs)/4 || roles[RoleTool] < len(recs)/20 {
		t.Errorf("role mix %v", roles)
	}
	if f := float64(cjk) / float64(len(recs)); f < 0.01 || f > 0.06 {
		t.Errorf("CJK fraction %.3f, want about 0.03 of user+assistant turns", f)
	}
}

// TestPlantedLabels checks the labels by construction: every relevant record
// states the answer, and no other record of the agent states the fact (its
// marker, subject and value together).
//
// LAZYMEM_WORKLOAD_N sets the corpus size (default 50000).
func TestPlantedLabels(t *testing.T) {
	cfg := Config{Seed: 9, Records: 50000, Agents: 20}
	if v := os.Getenv("LAZYMEM_WORKLOAD_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("LAZYMEM_WORKLOAD_N=%q: want an integer >= 1000", v)
		}
		cfg = Config{Seed: 9, Records: n}
	}
	recs := generate(t, cfg)
	g := New(cfg)
	qs := g.Queries(3 * g.Facts())
	if len(qs) < 1000 {
		t.Fatalf("only %d queries", len(qs))
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if len(q.Relevant) == 0 || q.Answer == "" {
			t.Fatalf("query without label: %+v", q)
		}
		fk := kindByName(q.Fact)
		if fk == nil {
			t.Fatalf("unknown fact family %q", q.Fact)
		}
		for _, o := range q.Relevant {
			r := recs[o]
			if r.Agent != q.Agent {
				t.Fatalf("query %q of %s: relevant record %d belongs to %s", q.Text, q.Agent, o, r.Agent)
			}
			if !strings.Contains(r.Text, q.Answer) || !strings.Contains(r.Text, fk.marker) {
				t.Fatalf("query %q: relevant record %d %q lacks answer %q or marker %q", q.Text, o, r.Text, q.Answer, fk.marker)
			}
			if !q.Since.IsZero() && (r.Time.Before(q.Since) || !r.Time.Before(q.Until)) {
				t.Fatalf("query %q: relevant record %d at %v outside [%v, %v)", q.Text, o, r.Time, q.Since, q.Until)
			}
		}
		if q.Kind == "paraphrase" && strings.Contains(strings.ToLower(q.Text), fk.marker) {
			t.Fatalf("paraphrase %q contains the marker %q", q.Text, fk.marker)
		}
	}
	for _, k := range []string{"planted", "paraphrase", "temporal"} {
		if kinds[k] < len(qs)/4 {
			t.Errorf("kind %s: %d of %d queries", k, kinds[k], len(qs))
		}
	}

	// Hard negatives: fact questions asked in chat, without the answer.
	asked := 0
	for _, r := range recs {
		for _, k := range factKinds {
			for _, q := range k.questions {
				pre, _, _ := strings.Cut(q, "{")
				if len(pre) > 8 && strings.Contains(r.Text, pre) {
					asked++
				}
			}
		}
	}
	if asked < len(recs)/1000 {
		t.Errorf("only %d records ask a fact question", asked)
	}
	found := checkComplete(t, g, recs)
	for _, q := range qs {
		if got := found[q.Relevant[0]]; !slices.Equal(got, q.Relevant) {
			t.Fatalf("query %q: Relevant %v, but the records stating its fact are %v", q.Text, q.Relevant, got)
		}
	}
}

// checkComplete scans every record for any fact statement (marker, subject
// and value of a planted fact of the record's agent) and fails if it is not
// labelled. One pass over the corpus, so it scales to 1M records. It
// returns, for each fact's ordinal, the ordinals of the records stating it.
func checkComplete(t *testing.T, g *Generator, recs []Record) map[int][]int {
	t.Helper()
	type akey struct {
		agent string
		kind  *factKind
	}
	facts := map[akey][]*fact{}
	labelled := map[int]bool{}
	for i := range g.facts {
		f := &g.facts[i]
		k := akey{g.agents[f.agent].id, f.kind}
		facts[k] = append(facts[k], f)
		labelled[f.ordinal] = true
		if f.echo >= 0 {
			labelled[f.echo] = true
		}
	}
	statements := 0
	found := map[int][]int{}
	for o, r := range recs {
		for _, k := range factKinds {
			if !strings.Contains(r.Text, k.marker) {
				continue
			}
			for _, f := range facts[akey{r.Agent, k}] {
				if statesFact(r.Text, k.marker, f.subject, f.value) {
					statements++
					found[f.ordinal] = append(found[f.ordinal], o)
					if o != f.ordinal && o != f.echo {
						t.Fatalf("record %d %q states the %s fact of ordinal %d but is not labelled with it", o, r.Text, k.name, f.ordinal)
					}
				}
			}
		}
	}
	if statements < len(labelled) {
		t.Fatalf("found %d fact statements, want at least the %d labelled records", statements, len(labelled))
	}
	t.Logf("%d records, %d facts, %d labelled records, %d statements found, all labelled", len(recs), len(g.facts), len(labelled), statements)
	return found
}

// statesFact reports whether one sentence of text holds the marker, the
// subject and the value together. A fact is stated in one sentence; the
// three spread over different sentences ("The Beacon launch is ... The
// default for Umbra moved to May 16.") state nothing about Umbra's launch.
func statesFact(text, marker, subject, value string) bool {
	for len(text) > 0 {
		end := len(text)
		for _, sep := range []string{". ", "! ", "? ", "\n", "。", "！", "？"} {
			if i := strings.Index(text, sep); i >= 0 && i+len(sep) < end {
				end = i + len(sep)
			}
		}
		s := text[:end]
		if strings.Contains(s, marker) && strings.Contains(s, subject) && strings.Contains(s, value) {
			return true
		}
		text = text[end:]
	}
	return false
}

func kindByName(name string) *factKind {
	for _, k := range factKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

func TestTemplatesCompile(t *testing.T) {
	all := [][]string{greetingTmpl, userQuestionTmpl, userRequestTmpl, userInformTmpl, chitchatTmpl,
		assistantAnswerTmpl, assistantPlanTmpl, assistantDecisionTmpl, assistantFollowupTmpl, toolTmpl, zhTmpl}
	for _, k := range factKinds {
		all = append(all, k.statements, k.echoes, k.questions, k.paraphrase)
		for _, s := range append(append([]string{}, k.statements...), k.echoes...) {
			if !strings.Contains(s, k.marker) {
				t.Errorf("%s: statement %q lacks marker %q", k.name, s, k.marker)
			}
		}
	}
	for _, ss := range all {
		for _, s := range ss {
			for _, p := range compile(s) {
				if p.slot != slotLit {
					continue
				}
				// A '{' followed by a letter and a '}' is a mistyped slot.
				if i := strings.IndexByte(p.lit, '{'); i >= 0 && i+1 < len(p.lit) && p.lit[i+1] != '"' {
					t.Errorf("template %q: unknown slot near %q", s, p.lit[i:])
				}
			}
		}
	}
	// Filler templates must not state facts: no fact marker may appear in them.
	filler := [][]string{greetingTmpl, userQuestionTmpl, userRequestTmpl, userInformTmpl, chitchatTmpl,
		assistantAnswerTmpl, assistantPlanTmpl, assistantDecisionTmpl, assistantFollowupTmpl, toolTmpl}
	for _, ss := range filler {
		for _, s := range ss {
			for _, k := range factKinds {
				if k.marker != "database" && k.marker != "budget" && strings.Contains(s, k.marker) {
					t.Errorf("filler %q contains fact marker %q", s, k.marker)
				}
			}
		}
	}
}

func TestKeywordQueries(t *testing.T) {
	cfg := Config{Records: 1000}
	qs := KeywordQueries(cfg, 500, 1)
	if len(qs) != 500 {
		t.Fatalf("got %d queries", len(qs))
	}
	cfg.EnsureDefaults()
	end := cfg.Start.Add(cfg.Span)
	agents := map[string]bool{}
	for i := range cfg.Agents {
		agents[AgentID(i, cfg.Agents)] = true
	}
	for _, q := range qs {
		n := len(strings.Fields(q.Text))
		if n < 2 || n > 4 {
			t.Fatalf("query %q has %d terms", q.Text, n)
		}
		if !agents[q.Agent] {
			t.Fatalf("query agent %q unknown", q.Agent)
		}
		if q.Until.Sub(q.Since) != 7*24*time.Hour || q.Since.Before(cfg.Start) || q.Until.After(end) {
			t.Fatalf("query window [%v, %v) not a week inside the span", q.Since, q.Until)
		}
		if q.Kind != "keyword" {
			t.Fatalf("kind %q", q.Kind)
		}
	}
	if KeywordQueries(Config{Agents: -1}, 5, 1) != nil {
		t.Fatal("invalid config gave queries")
	}
}

// Keyword query terms must occur in a generated corpus, or the benchmark
// measures empty posting lists.
func TestKeywordTermsOccur(t *testing.T) {
	cfg := Config{Seed: 5, Records: 50000}
	if testing.Short() {
		cfg.Records = 20000
	}
	words := map[string]bool{}
	for _, r := range generate(t, cfg) {
		for _, w := range strings.FieldsFunc(r.Text, func(c rune) bool {
			return !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '.' || c == '-')
		}) {
			words[strings.Trim(w, ".-")] = true
		}
	}
	missing, total := 0, 0
	for _, q := range KeywordQueries(cfg, 300, 2) {
		for _, w := range strings.Fields(q.Text) {
			total++
			if !words[w] {
				missing++
			}
		}
	}
	// Long-tail identifiers may be unseen in a small corpus; the common
	// terms must all be there.
	if missing > total/10 {
		t.Fatalf("%d of %d keyword terms never occur in %d records", missing, total, cfg.Records)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Records: -1}, {Agents: -2}, {Sessions: -1}, {Span: -time.Hour}, {FactRate: 0.9}, {ZipfS: 0.5}, {CJKRate: 2},
	} {
		g := New(cfg)
		if !errors.Is(g.Err(), ErrInvalidConfig) {
			t.Errorf("config %+v: err %v", cfg, g.Err())
		}
		var r Record
		if g.Next(&r) || g.Queries(10) != nil {
			t.Errorf("invalid config %+v generated output", cfg)
		}
	}
}

func TestEdgeSizes(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100} {
		recs := generate(t, Config{Seed: int64(n), Records: n})
		if len(recs) != n {
			t.Fatalf("Records %d: got %d", n, len(recs))
		}
		g := New(Config{Seed: int64(n), Records: n})
		for _, q := range g.Queries(10) {
			for _, o := range q.Relevant {
				if o < 0 || o >= n {
					t.Fatalf("Records %d: relevant ordinal %d", n, o)
				}
			}
		}
	}
	// Many sessions, few records; and a tiny span.
	generate(t, Config{Seed: 1, Records: 50, Agents: 1000, Sessions: 100})
	recs := generate(t, Config{Seed: 1, Records: 1000, Span: time.Minute})
	for i := 1; i < len(recs); i++ {
		if recs[i].Time.Before(recs[i-1].Time) {
			t.Fatal("time went backwards with a one-minute span")
		}
	}
}

// The alias sampler must follow the Zipf law it claims.
func TestZipfAlias(t *testing.T) {
	const n, draws = 50, 2_000_000
	z := newZipfQ(rand.New(rand.NewPCG(1, 2)), 1.1, 2.7, n)
	counts := make([]int, n)
	for range draws {
		counts[z.next()]++
	}
	var sum float64
	for k := range n {
		sum += math.Pow(float64(k+1)+2.7, -1.1)
	}
	for k := range n {
		want := draws * math.Pow(float64(k+1)+2.7, -1.1) / sum
		if d := math.Abs(float64(counts[k]) - want); d > 5*math.Sqrt(want)+1 {
			t.Errorf("rank %d: %d draws, want %.0f", k, counts[k], want)
		}
	}
}

func TestArticles(t *testing.T) {
	for w, want := range map[string]bool{
		"issue": true, "user": false, "usage": false, "unusual": true, "update": true,
		"unique": false, "hour": true, "error": true, "outage": true, "time": false, "upload": true,
	} {
		if got := string(appendWord([]byte("a "), w)); got != map[bool]string{true: "an ", false: "a "}[want]+w {
			t.Errorf("article before %q: %q", w, got)
		}
	}
	if got := string(appendWord([]byte("data "), "issue")); got != "data issue" {
		t.Errorf("a word ending in 'a' lost its space: %q", got)
	}
}

func TestStatesFact(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Thanks! The Beacon launch is scheduled for February 4. The default for Umbra moved to May 16.", false},
		{"Thanks! The Umbra launch is scheduled for May 16. Bye.", true},
		{"The Umbra launch is scheduled for May 16.", true},
		{"Umbra? The launch moved. It is May 16 now.", false},
	} {
		if got := statesFact(c.text, "launch", "Umbra", "May 16"); got != c.want {
			t.Errorf("statesFact(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// Paraphrases must not share a content word with the fact's statements and
// echoes (only the subject and function words), and must not contain a word
// of a possible value: their wording differs from the record by
// construction, so a lexical match on them is luck, not the fact's words.
func TestParaphraseWording(t *testing.T) {
	function := map[string]bool{}
	for _, w := range strings.Fields("a an the on we to for of in is was it at are until its all out about") {
		function[w] = true
	}
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !unicode.IsLetter(c) && c != '{' && c != '}' })
	}
	for _, k := range factKinds {
		st := map[string]bool{}
		for _, s := range append(append([]string{}, k.statements...), k.echoes...) {
			for _, w := range words(s) {
				st[w] = true
			}
		}
		for _, w := range words(strings.Join(k.paraphrase, " ")) {
			if st[w] && !function[w] && w != "{subj}" {
				t.Errorf("%s: a paraphrase shares %q with the statements", k.name, w)
			}
			if w == "seconds" || w == "version" {
				t.Errorf("%s: a paraphrase contains value word %q", k.name, w)
			}
		}
	}
}
