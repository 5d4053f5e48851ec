package meeting

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/lazymem/lazymem/engine/consolidate"
)

func generate(t *testing.T, seed uint64) *Meeting {
	t.Helper()
	m, err := Generate(Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func TestShape(t *testing.T) {
	m := generate(t, 1)
	us := m.Utterances
	if len(us) != DefaultUtterances {
		t.Fatalf("%d utterances, want %d", len(us), DefaultUtterances)
	}
	if !us[0].Time.After(DefaultStart) && !us[0].Time.Equal(DefaultStart) {
		t.Errorf("first utterance at %v, before the start", us[0].Time)
	}
	if end := us[len(us)-1].Time; !end.Equal(DefaultStart.Add(DefaultDuration)) {
		t.Errorf("last utterance at %v, want start + 90 min", end)
	}
	speakers := map[string]int{}
	roles := map[string]bool{}
	zh, en, back, repeats := 0, 0, 0, 0
	for i, u := range us {
		if u.Seq != i {
			t.Fatalf("utterance %d has Seq %d", i, u.Seq)
		}
		if i > 0 && u.Time.Before(us[i-1].Time) {
			t.Fatalf("utterance %d at %v is before the previous one at %v", i, u.Time, us[i-1].Time)
		}
		if u.Text == "" || u.Speaker == "" || u.Role == "" {
			t.Fatalf("utterance %d incomplete: %+v", i, u)
		}
		speakers[u.Speaker]++
		roles[u.Role] = true
		if hasHan(u.Text) {
			zh++
		} else {
			en++
		}
		if isBackChannel(u.Text) {
			back++
		}
		if i > 0 && u.Speaker == us[i-1].Speaker {
			repeats++
		}
	}
	if len(speakers) != len(Speakers) {
		t.Errorf("speakers %v", speakers)
	}
	for _, r := range []string{"host", "pm", "engineer", "finance"} {
		if !roles[r] {
			t.Errorf("no %s spoke", r)
		}
	}
	// Chinese-led with some English; back-channels a large minority;
	// the host speaks most.
	if zhShare := float64(zh) / float64(len(us)); zhShare < 0.6 || zhShare > 0.9 {
		t.Errorf("Chinese share %.2f, want 0.6-0.9 (zh %d, en %d)", zhShare, zh, en)
	}
	if share := float64(back) / float64(len(us)); share < 0.2 || share > 0.45 {
		t.Errorf("back-channel share %.2f, want 0.2-0.45", share)
	}
	for name, c := range speakers {
		if name != "王磊" && c >= speakers["王磊"] {
			t.Errorf("%s speaks %d times, the host %d", name, c, speakers["王磊"])
		}
	}
	if float64(repeats)/float64(len(us)) > 0.1 {
		t.Errorf("%d turns follow the same speaker", repeats)
	}
	if n := len(m.Utterances) - back; n < len(us)/2 {
		t.Errorf("only %d substantive turns", n)
	}
}

func TestKeyMomentsAndQuestions(t *testing.T) {
	m := generate(t, 7)
	order := []string{KeyBudgetRaised, KeyBudgetDetail, KeyLaunchProposal, KeyLaunchDecision, KeyLaunchAgree, KeyOpsRequest,
		KeyOpsAction, KeyPricingAction, KeyDemoPreference, KeyStandupPref, KeyLoadTestAction, KeyLoadTestFailed,
		KeyLaunchRevised, KeyLaunchRevisedAck, KeyBudgetDecision, KeySummary}
	if len(m.Keys) != len(order) {
		t.Fatalf("%d keys, want %d", len(m.Keys), len(order))
	}
	seen := map[string]int{}
	for _, u := range m.Utterances {
		if u.Key != "" {
			seen[u.Key]++
		}
	}
	for i, k := range order {
		seq, ok := m.Keys[k]
		if !ok || seen[k] != 1 || m.Utterances[seq].Key != k {
			t.Fatalf("key %s: seq %d ok %v seen %d", k, seq, ok, seen[k])
		}
		if i > 0 && seq <= m.Keys[order[i-1]] {
			t.Errorf("key %s at %d is not after %s at %d", k, seq, order[i-1], m.Keys[order[i-1]])
		}
	}
	if u := m.Utterances[m.Keys[KeyBudgetRaised]]; u.Speaker != "陈静" || u.Role != "finance" || !strings.Contains(u.Text, "预算") {
		t.Errorf("budget issue raised by %s (%s): %s", u.Speaker, u.Role, u.Text)
	}
	var zh, en, live, post int
	for _, q := range m.Questions {
		if len(q.Evidence) == 0 || q.Answer == "" || q.Text == "" {
			t.Errorf("question %+v incomplete", q)
		}
		for _, k := range q.Evidence {
			seq, ok := m.Keys[k]
			if !ok {
				t.Errorf("question %q cites unknown key %q", q.Text, k)
			}
			if q.Live && k == q.Evidence[0] && seq > q.AskAfter {
				t.Errorf("live question %q asked at %d before its evidence %s at %d", q.Text, q.AskAfter, k, seq)
			}
		}
		if q.Live {
			live++
			if q.AskAfter >= len(m.Utterances) {
				t.Errorf("live question %q asked after the end", q.Text)
			}
		} else {
			post++
		}
		if q.Lang == "zh" {
			zh++
		} else {
			en++
		}
	}
	if live < 4 || post < 6 || zh < 6 || en < 3 {
		t.Errorf("questions: %d live %d post, %d zh %d en", live, post, zh, en)
	}
	texts := map[string]bool{}
	for _, q := range m.Questions {
		texts[q.Text] = true
	}
	for _, want := range []string{"刚才谁提到了预算问题？", "who raised the budget issue just now?", "我们关于产品上线时间达成了什么共识？", "谁负责通知运维？"} {
		if !texts[want] {
			t.Errorf("missing question %q", want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b, c := generate(t, 42), generate(t, 42), generate(t, 43)
	var ba, bb, bc bytes.Buffer
	for _, x := range []struct {
		m *Meeting
		b *bytes.Buffer
	}{{a, &ba}, {b, &bb}, {c, &bc}} {
		if err := x.m.WriteJSONL(x.b); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(ba.Bytes(), bb.Bytes()) || !reflect.DeepEqual(a.Questions, b.Questions) {
		t.Fatal("same seed, different meetings")
	}
	if bytes.Equal(ba.Bytes(), bc.Bytes()) {
		t.Fatal("different seeds, same meeting")
	}
	// Key moments keep their text across seeds.
	for k, seq := range a.Keys {
		if a.Utterances[seq].Text != c.Utterances[c.Keys[k]].Text {
			t.Errorf("key %s text differs across seeds", k)
		}
	}
	if n := bytes.Count(ba.Bytes(), []byte("\n")); n != len(a.Utterances) {
		t.Errorf("JSONL has %d lines", n)
	}
}

func TestStreamStopsOnError(t *testing.T) {
	m, err := Generate(Config{Utterances: 300, Duration: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = m.Stream(func(u Utterance) error {
		if u.Seq != n {
			t.Fatalf("streamed %d at position %d", u.Seq, n)
		}
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("err %v after %d", err, n)
	}
	n = 0
	for u := range m.All() {
		if u.Seq != n {
			t.Fatalf("All yielded %d at position %d", u.Seq, n)
		}
		if n++; n == 5 {
			break
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Utterances: 10}, "Utterances"},
		{Config{Duration: time.Second}, "Duration"},
		{Config{Utterances: 100000, Duration: time.Minute}, "too short"},
	} {
		if _, err := Generate(tc.c); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate(%+v): %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestKeyMomentsConsolidate feeds the key moments, with their neighbours,
// to the rule consolidator: the launch decision and its revision come out
// as decisions on one topic, linked by supersession, and 赵强's ops task
// has its due time resolved to Monday 2026-12-07 14:00.
func TestKeyMomentsConsolidate(t *testing.T) {
	m := generate(t, 3)
	turn := func(u Utterance) consolidate.Turn {
		return consolidate.Turn{ID: uint64(u.Seq + 1), Time: u.Time, Speaker: u.Speaker, Role: u.Role, Text: u.Text}
	}
	in := consolidate.Input{Agent: "meeting"}
	keys := make([]string, 0, len(m.Keys))
	for k := range m.Keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return m.Keys[a] - m.Keys[b] })
	for _, k := range keys {
		seq := m.Keys[k]
		s := consolidate.Selected{Turn: turn(m.Utterances[seq])}
		if seq > 0 {
			s.Before = []consolidate.Turn{turn(m.Utterances[seq-1])}
		}
		in.Records = append(in.Records, s)
	}
	c, err := consolidate.NewRules(consolidate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	units, err := c.Consolidate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range units {
		units[i].ID = uint64(i + 1)
	}
	if _, err := consolidate.Link(nil, units); err != nil {
		t.Fatal(err)
	}
	var decided, revised *consolidate.Unit
	var ops *consolidate.ActionItem
	prefs := 0
	for i := range units {
		u := &units[i]
		t.Logf("%-11s live=%-5v topic=%q content=%q %v", u.Type, u.Live(), u.Topic, u.Content, u.ActionItems)
		switch {
		case u.Type == consolidate.TypeDecision && u.SourceIDs[0] == uint64(m.Keys[KeyLaunchDecision]+1):
			decided = u
		case u.Type == consolidate.TypeDecision && u.SourceIDs[0] == uint64(m.Keys[KeyLaunchRevised]+1):
			revised = u
		case u.Type == consolidate.TypeActionItem && u.SourceIDs[0] == uint64(m.Keys[KeyOpsAction]+1):
			ops = &u.ActionItems[0]
		case u.Type == consolidate.TypePreference:
			prefs++
		}
	}
	if decided == nil || revised == nil {
		t.Fatal("launch decision or its revision not extracted")
	}
	if decided.SupersededBy != revised.ID || !revised.Live() {
		t.Errorf("launch decision superseded by %d, want %d", decided.SupersededBy, revised.ID)
	}
	if ops == nil || ops.Owner != "赵强" || !ops.Due.Equal(time.Date(2026, 12, 7, 14, 0, 0, 0, Beijing)) {
		t.Errorf("ops action item %+v", ops)
	}
	if prefs != 2 {
		t.Errorf("%d preferences, want 2", prefs)
	}
}

// TestValueSelection scores every utterance with the default value options
// and logs how many key moments and filler turns reach the threshold. The
// decisions and action items must; chatter must mostly not.
func TestValueSelection(t *testing.T) {
	m := generate(t, 1)
	var o consolidate.Options
	o.EnsureDefaults()
	keys, filler := 0, 0
	var missed []string
	for _, u := range m.Utterances {
		above := o.Value(u.Text, u.Role) >= o.Threshold
		switch {
		case u.Key != "" && above:
			keys++
		case u.Key != "":
			missed = append(missed, u.Key)
		case above:
			filler++
		}
	}
	t.Logf("selected %d of %d key moments and %d of %d filler turns; missed %v",
		keys, len(m.Keys), filler, len(m.Utterances)-len(m.Keys), missed)
	for _, k := range []string{KeyLaunchDecision, KeyLaunchRevised, KeyOpsAction, KeyPricingAction, KeyLoadTestAction, KeyBudgetDecision, KeyDemoPreference} {
		if slices.Contains(missed, k) {
			t.Errorf("key moment %s not selected", k)
		}
	}
	if share := float64(filler) / float64(len(m.Utterances)); share > 0.05 {
		t.Errorf("%.1f%% of filler selected", 100*share)
	}
}

// TestWholeMeetingConsolidates runs the offline pipeline over all 5,000
// utterances: select by value (with two turns of context each side),
// consolidate by rule, link. The core memory that comes out is small, its
// live launch decision is the revised date, and 赵强 owns the ops task.
func TestWholeMeetingConsolidates(t *testing.T) {
	m := generate(t, 1)
	turns := make([]consolidate.Turn, len(m.Utterances))
	for i, u := range m.Utterances {
		turns[i] = consolidate.Turn{ID: uint64(u.Seq + 1), Time: u.Time, Speaker: u.Speaker, Role: u.Role, Text: u.Text}
	}
	var o consolidate.Options
	o.EnsureDefaults()
	in := o.Select("meeting", turns)
	c, err := consolidate.NewRules(o)
	if err != nil {
		t.Fatal(err)
	}
	units, err := c.Consolidate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range units {
		units[i].ID = uint64(i + 1)
	}
	if _, err := consolidate.Link(nil, units); err != nil {
		t.Fatal(err)
	}
	live, byType := 0, map[consolidate.Type]int{}
	var launch []string
	opsOwner := ""
	for _, u := range units {
		if !u.Live() {
			continue
		}
		live++
		byType[u.Type]++
		if u.Type == consolidate.TypeDecision && strings.Contains(u.Content, "上线时间") {
			launch = append(launch, u.Content)
		}
		for _, a := range u.ActionItems {
			if strings.Contains(a.Task, "通知运维") && opsOwner == "" {
				opsOwner = a.Owner
			}
		}
	}
	for _, u := range units {
		if u.Live() {
			t.Logf("live %s %q %v", u.Type, u.Content, u.ActionItems)
		}
	}
	t.Logf("%d utterances -> %d selected -> %d units, %d live %v", len(turns), len(in.Records), len(units), live, byType)
	if len(launch) != 1 || !strings.Contains(launch[0], "十二月二十二号") {
		t.Errorf("live launch decisions %q, want the revised one only", launch)
	}
	if opsOwner != "赵强" {
		t.Errorf("ops task owner %q", opsOwner)
	}
	if byType[consolidate.TypePreference] != 2 {
		t.Errorf("%d live preferences, want 2", byType[consolidate.TypePreference])
	}
	// The script's four: ops, the pricing page, the load-test report and
	// the closing summary; not the filler's "I'll drop the link in the
	// chat", a task done while it is said.
	if byType[consolidate.TypeActionItem] != 4 {
		t.Errorf("%d live action items, want 4", byType[consolidate.TypeActionItem])
	}
}
