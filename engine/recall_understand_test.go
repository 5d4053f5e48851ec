package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/testembed"
)

// understandDB opens a store holding a small bilingual history; with emb
// (a concept test double: an English question and a Chinese record about
// the same thing have a high cosine and no word in common, what a
// multilingual model gives) as its embedder, or the default one when nil.
func understandDB(t *testing.T, emb testembed.Concepts) (*engine.DB, time.Time) {
	t.Helper()
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	opts := engine.Options{Clock: func() time.Time { return now }}
	if emb != nil {
		opts.Embedder = emb
	}
	db, err := engine.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return now.Add(time.Duration(m-120) * time.Minute) }
	recs := []engine.Record{
		{Time: at(0), Agent: "a", Session: "m1", Role: "陈静", Text: "今天讨论预算和上线时间。"},
		{Time: at(5), Agent: "a", Session: "m1", Role: "王芳", Text: "第一季度的财务预算总额是一百二十万。"},
		{Time: at(6), Agent: "a", Session: "m1", Role: "陈静", Text: "好的，没问题。"},
		{Time: at(20), Agent: "a", Session: "m1", Role: "张伟", Text: "我来负责通知运维，今天下班前发给运维组。"},
		{Time: at(21), Agent: "a", Session: "m1", Role: "陈静", Text: "好的，谢谢。"},
		{Time: at(40), Agent: "a", Session: "m1", Role: "李明", Text: "上线时间推迟到十二月十五日。"},
		{Time: at(41), Agent: "a", Session: "m1", Role: "王芳", Text: "同意。"},
		{Time: at(60), Agent: "a", Session: "m1", Role: "王芳", Text: "服务器采购需要这周走完审批。"},
		{Time: at(61), Agent: "a", Session: "m1", Role: "陈静", Text: "嗯嗯，好的。"},
		{Time: at(118), Agent: "a", Session: "c1", Role: "user", Text: "Please book the big room for the rehearsal."},
		{Time: at(119), Agent: "a", Session: "c1", Role: "assistant", Text: "Booked."},
		{Time: at(119), Agent: "a", Session: "c1", Role: "user", Text: "Thanks!"},
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return db, now
}

func topTexts(res *engine.Result, n int) []string {
	var out []string
	for i, m := range res.Memories {
		if i == n {
			break
		}
		out = append(out, m.Text)
	}
	return out
}

// An English question about a Chinese meeting shares no word with it: BM25
// finds nothing (the lexicon's Chinese terms are turned off here: see
// TestCrossLingualLexicon), the fallback pass hands the window's latest
// records to a multilingual embedder, which finds the answer.
func TestCrossLingualWithMultilingualEmbedder(t *testing.T) {
	emb := testembed.Concepts{
		{"ops", "运维"}, {"notify", "通知"}, {"budget", "预算"}, {"launch", "上线"}, {"postpone", "推迟"}, {"server", "服务器"},
	}
	db, now := understandDB(t, emb)
	defer db.Close()
	ctx := context.Background()
	for q, want := range map[string]string{
		"who is responsible for notifying ops?": "我来负责通知运维",
		"was the launch postponed?":             "上线时间推迟",
		"what is the budget?":                   "财务预算总额",
	} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: q, K: 3, Now: now, Explain: true, NoExpansion: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || !strings.Contains(res.Memories[0].Text, want) {
			t.Errorf("%q: top %q, want %q first (stats %+v)", q, topTexts(res, 3), want, res.Stats)
		}
		if res.Stats.Fallback == 0 || !slices.Contains(res.Memories[0].Reasons, "fallback") {
			t.Errorf("%q: answer not from the fallback pass: %d, %v", q, res.Stats.Fallback, res.Memories[0].Reasons)
		}
	}
}

// With the lexical hash embedder, an English question finds a Chinese
// record through the lexicon: its concepts' Chinese terms are searched at a
// quarter of the weight of the question's own words.
func TestCrossLingualLexicon(t *testing.T) {
	db, now := understandDB(t, nil)
	defer db.Close()
	ctx := context.Background()
	for q, want := range map[string]string{
		"who is responsible for notifying ops?": "我来负责通知运维",
		"when is the launch?":                   "上线时间",
	} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: q, K: 3, Now: now, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || !strings.Contains(res.Memories[0].Text, want) {
			t.Errorf("%q: top %q, want %q first (stats %+v)", q, topTexts(res, 3), want, res.Stats)
			continue
		}
		if !strings.HasPrefix(res.Memories[0].Reasons[0], "bm25") {
			t.Errorf("%q: answer not a BM25 hit: %v", q, res.Memories[0].Reasons)
		}
		// Off, the question shares no word with the record.
		res, err = db.Recall(ctx, engine.Query{Agent: "a", Text: q, K: 3, Now: now, Explain: true, NoExpansion: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Hits != 0 {
			t.Errorf("%q without expansion: %d BM25 hits, want 0", q, res.Stats.Hits)
		}
	}
}

func TestSpeakerQuestion(t *testing.T) {
	db, now := understandDB(t, nil)
	defer db.Close()
	ctx := context.Background()
	for _, text := range []string{"what did 王芳 say?", "王芳说了什么", "王芳提到了什么？"} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: text, K: 3, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: nothing", text)
		}
		for _, m := range res.Memories {
			if m.Role != "王芳" {
				t.Errorf("%q: %s: %q, want only 王芳's records", text, m.Role, m.Text)
			}
		}
		if res.Memories[0].Text == "同意。" {
			t.Errorf("%q: the acknowledgement ranks first: %q", text, topTexts(res, 3))
		}
	}
	// A named speaker with something else to search is a boost, not a filter.
	res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "王芳 上线", K: 5, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Memories, func(m engine.Memory) bool { return m.Role != "王芳" }) {
		t.Errorf("speaker with content narrowed the filter: %q", topTexts(res, 5))
	}
}

// A speaker question whose speaker said nothing that passes the filters
// is not narrowed to nothing: "我" names the user, who was silent in the
// meeting the question's session names ("my husband" is someone else).
func TestSpeakerSilentInWindow(t *testing.T) {
	db, now := understandDB(t, nil)
	defer db.Close()
	for _, text := range []string{"我老公今天会上说了些啥？", "what did I say?"} {
		res, err := db.Recall(context.Background(), engine.Query{Agent: "a", Sessions: []string{"m1"}, Text: text, K: 3, Now: now, Explain: true, ParseTime: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: empty although the meeting's records pass the filters (notes %q)", text, res.Stats.Notes)
		}
		if !slices.ContainsFunc(res.Stats.Notes, func(n string) bool { return strings.Contains(n, "not narrowed") }) {
			t.Errorf("%q: notes %q do not say the speaker narrowed nothing", text, res.Stats.Notes)
		}
	}
}

func TestNeverEmptyAndLowInformation(t *testing.T) {
	db, now := understandDB(t, nil)
	defer db.Close()
	ctx := context.Background()
	for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse} {
		for _, text := range []string{"xyzzy plugh", "anything new?", "有什么新进展吗？"} {
			res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: text, K: 3, Now: now, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) == 0 {
				t.Errorf("%s %q: empty although records pass the filters", mode, text)
			}
		}
	}
	// The short replies inherit the words of the turn they answer; they
	// never outrank it.
	for q, c := range map[string][2]string{
		"财务预算":   {"第一季度的财务预算总额是一百二十万。", "好的，没问题。"},
		"通知运维":   {"我来负责通知运维，今天下班前发给运维组。", "好的，谢谢。"},
		"采购审批":   {"服务器采购需要这周走完审批。", "嗯嗯，好的。"},
		"推迟到十五日": {"上线时间推迟到十二月十五日。", "同意。"},
	} {
		for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse} {
			res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: q, K: 12, Now: now, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			texts := topTexts(res, 12)
			statement, reply := slices.Index(texts, c[0]), slices.Index(texts, c[1])
			if statement != 0 || (reply >= 0 && reply < statement) {
				t.Errorf("%s %q: %q: the statement at %d, the reply at %d", mode, q, texts, statement, reply)
			}
		}
	}
	// A fallback pass with the hash embedder says what it can do.
	res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "xyzzy plugh", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Stats.Notes, func(n string) bool { return strings.Contains(n, "lexical embedder") }) {
		t.Errorf("notes %q do not say the embedder is lexical", res.Stats.Notes)
	}
}

func TestSupersession(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	old, newer := "Decision: the launch date is December 8.", "Decision: the launch date moves to December 15, replacing December 8."
	if _, err := db.AppendBatch(ctx, []engine.Record{
		{Time: now.AddDate(0, 0, -14), Agent: "a", Session: "s1", Role: "assistant", Text: old},
		{Time: now.AddDate(0, 0, -14).Add(time.Minute), Agent: "a", Session: "s1", Role: "user", Text: "Great, the launch date is December 8 then, decision made."},
		{Time: now.Add(-time.Hour), Agent: "a", Session: "s2", Role: "assistant", Text: newer},
		{Time: now.Add(-time.Hour), Agent: "a", Session: "s2", Role: "user", Text: "Lunch was great today."},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "what did we decide about the launch date?", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Text != newer {
		t.Errorf("current decision: top %q, want the newer one", topTexts(res, 3))
	}
	// Asked about the earlier time, the earlier decision stays first.
	res, err = db.Recall(ctx, engine.Query{Agent: "a", Text: "what did we decide about the launch date two weeks ago?", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Text == newer {
		t.Errorf("earlier decision: top %q", topTexts(res, 3))
	}
}

// TestFeedback: pseudo-relevance feedback adds the top hits' words to an
// English query ("rehearsal" from the turn that books the room); it is off
// by default; a Chinese query gets no CJK n-grams as feedback terms (not
// words: see feedback).
func TestFeedback(t *testing.T) {
	db, now := understandDB(t, nil)
	defer db.Close()
	ctx := context.Background()
	hasNote := func(res *engine.Result) bool {
		return slices.ContainsFunc(res.Stats.Notes, func(n string) bool { return strings.HasPrefix(n, "feedback terms: ") })
	}
	off, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "which room is booked?", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if hasNote(off) {
		t.Errorf("default: feedback ran: %q", off.Stats.Notes)
	}
	fb, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "which room is booked?", K: 3, Now: now, FeedbackDocs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb.Stats.Text) <= len(off.Stats.Text) || !hasNote(fb) {
		t.Errorf("feedback did not extend the query: %q, notes %q", fb.Stats.Text, fb.Stats.Notes)
	}
	if !strings.Contains(fb.Stats.Text, "rehears") {
		t.Errorf("feedback text %q lacks the top hit's terms", fb.Stats.Text)
	}
	zh, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "服务器采购", K: 3, Now: now, FeedbackDocs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if hasNote(zh) || strings.Contains(zh.Stats.Text, "审批") {
		t.Errorf("Chinese query: CJK n-grams as feedback terms: %q, notes %q", zh.Stats.Text, zh.Stats.Notes)
	}
	if _, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "x", FeedbackDocs: engine.MaxFeedbackDocs + 1}); err == nil || !strings.Contains(err.Error(), "query.feedback_docs") {
		t.Errorf("feedback_docs out of range: %v", err)
	}
}

// TestSpeakerTwoWordName: a speaker whose name is two Latin words ("Zhou
// Hang", as pinyin names and first-last names are written) is found as
// typed or in lower case, and a question about what they said keeps to
// their records, the words of the name out of the searched text.
func TestSpeakerTwoWordName(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var recs []engine.Record
	for i, r := range [][2]string{
		{"Maya", "Morning all, quick standup."},
		{"Maya", "We're moving the beta to January 8."},
		{"Zhou Hang", "We'll raise beta pricing to 12 dollars a month."},
		{"Maya", "ok"},
		{"Leo", "Hang on, the pricing page is not ready."},
	} {
		recs = append(recs, engine.Record{Time: at.Add(time.Duration(i) * time.Minute), Agent: "a", Session: "standup", Role: r[0], Text: r[1]})
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"what did Zhou Hang say?", "what did zhou hang say in the standup?"} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: text, K: 3, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Stats.Speakers, []string{"Zhou Hang"}) {
			t.Errorf("%q: speakers %q, want [Zhou Hang]", text, res.Stats.Speakers)
		}
		if len(res.Memories) == 0 || res.Memories[0].Role != "Zhou Hang" {
			t.Errorf("%q: %q, want Zhou Hang's record first", text, topTexts(res, 3))
		}
		for _, m := range res.Memories {
			if m.Role != "Zhou Hang" {
				t.Errorf("%q: %s: %q, want only Zhou Hang's records", text, m.Role, m.Text)
			}
		}
	}
}
