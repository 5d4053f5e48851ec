package consolidate

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestLabelTable(t *testing.T) {
	for _, tc := range []struct {
		text    string
		want    []Type
		content string // content of the first tag, when set
		owner   string
	}{
		{"We decided to use gRPC for the internal APIs.", []Type{TypeDecision}, "use gRPC for the internal APIs", ""},
		{"Agreed: the freeze starts on the 10th.", []Type{TypeDecision}, "the freeze starts on the 10th", ""},
		{"Let's go with the blue logo.", []Type{TypeDecision}, "the blue logo", ""},
		{"Agreed, that was rough.", nil, "", ""},
		{"We haven't decided yet.", nil, "", ""},
		{"If we decide to move, who pays?", nil, "", ""},
		{"Did we agree on the budget", nil, "", ""},
		{"我们决定下周发布。", []Type{TypeDecision}, "下周发布", ""},
		{"大家同意采用新的流程。", []Type{TypeDecision}, "采用新的流程", ""},
		{"我不同意。", nil, "", ""},
		{"上线时间确定了吗？", nil, "", ""},
		{"Alice will write the spec.", []Type{TypeActionItem}, "write the spec", "Alice"},
		{"I'll send the invite.", []Type{TypeActionItem}, "send the invite", OwnerSpeaker},
		{"We will see.", nil, "", ""},
		{"It will rain.", nil, "", ""},
		{"Assigned to Bob: rotate the keys.", []Type{TypeActionItem}, "rotate the keys", "Bob"},
		{"Dave is responsible for the rollout.", []Type{TypeActionItem}, "the rollout", "Dave"},
		{"李娜负责通知运维。", []Type{TypeActionItem}, "通知运维", "李娜"},
		{"这个我来负责。周五前交。", nil, "", ""},
		{"待办：王强跟进发票。", []Type{TypeActionItem}, "跟进发票", "王强"},
		{"交给陈晨，明天给方案。", []Type{TypeActionItem}, "给方案", "陈晨"},
		{"周敏明天上午把合同发出去。", []Type{TypeActionItem, TypeFact}[:1], "把合同发出去", "周敏"},
		{"I prefer tea to coffee.", []Type{TypePreference}, "tea to coffee", ""},
		{"My favourite editor is Vim.", []Type{TypePreference}, "Vim", ""},
		{"I don't prefer either.", nil, "", ""},
		{"Which do you prefer?", nil, "", ""},
		{"我更喜欢飞书。", []Type{TypePreference}, "飞书", ""},
		{"我不喜欢这个颜色。", nil, "", ""},
		{"我偏好周一开会。", []Type{TypePreference}, "周一开会", ""},
		{"The fix is merged.", []Type{TypeOutcome}, "The fix is merged", ""},
		{"We shipped v2 yesterday.", []Type{TypeOutcome}, "", ""},
		{"支付功能上线了。", []Type{TypeOutcome}, "", ""},
		{"还没完成。", nil, "", ""},
		{"Revenue was 3.2 million in Q3.", []Type{TypeFact}, "", ""},
		{"会议定在12月5日。", []Type{TypeDecision}, "", ""},
		{"预算是五十万。", []Type{TypeFact}, "", ""},
		{"OK thanks", nil, "", ""},
		{"就像刚才说的，上线时间推迟到十二月二十二号。", []Type{TypeDecision}, "上线时间推迟到十二月二十二号", ""},
		{"As we said, the launch moved to March 10.", []Type{TypeDecision}, "the launch moved to March 10", ""},
		{"上线时间会不会推迟到下周？", nil, "", ""},
	} {
		tags := Label(tc.text)
		var got []Type
		for _, g := range tags {
			got = append(got, g.Type)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Label(%q) = %v, want %v", tc.text, got, tc.want)
			continue
		}
		if len(tags) > 0 && tc.content != "" && tags[0].Content != tc.content {
			t.Errorf("Label(%q) content %q, want %q", tc.text, tags[0].Content, tc.content)
		}
		if len(tags) > 0 && tags[0].Owner != tc.owner {
			t.Errorf("Label(%q) owner %q, want %q", tc.text, tags[0].Owner, tc.owner)
		}
	}
}

func defaults(t *testing.T) Options {
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSignalsTable(t *testing.T) {
	o := defaults(t)
	for _, tc := range []struct {
		name, text, role string
		check            func(s Signals) bool
	}{
		{"action words en", "Owner: Bob, deadline Friday, he will follow up", "", func(s Signals) bool { return s.ActionWords == 4 }},
		{"action words zh", "张伟负责，周五之前跟进", "", func(s Signals) bool { return s.ActionWords == 3 }},
		{"no action words", "nice weather today", "", func(s Signals) bool { return s.ActionWords == 0 }},
		{"role host", "ok", "Host", func(s Signals) bool { return s.RoleValue == 1 && s.Role == "Host" }},
		{"role pm zh", "好", "产品经理", func(s Signals) bool { return s.RoleValue == 0.8 }},
		{"role unknown", "ok", "visitor", func(s Signals) bool { return s.RoleValue == 0 }},
		{"back reference en", "As we said, the cap is 15%", "", func(s Signals) bool { return s.BackReference }},
		{"back reference zh", "就像刚才说的，预算不能超", "", func(s Signals) bool { return s.BackReference }},
		{"no back reference", "we said hello", "", func(s Signals) bool { return !s.BackReference }},
		{"url", "see https://example.com/doc/1, thanks", "", func(s Signals) bool {
			return reflect.DeepEqual(s.Deliverables, []string{"https://example.com/doc/1"})
		}},
		{"commit", "fixed in 3f9a2c1d", "", func(s Signals) bool { return reflect.DeepEqual(s.Deliverables, []string{"3f9a2c1d"}) }},
		{"hex word is not a commit", "the deadbeef value 1234567", "", func(s Signals) bool { return len(s.Deliverables) == 0 }},
		{"pr and issue", "PR #42 closes issue 7 and OPS-118", "", func(s Signals) bool {
			return reflect.DeepEqual(s.Deliverables, []string{"PR #42", "issue 7", "OPS-118"})
		}},
		{"hash id", "see #88", "", func(s Signals) bool { return reflect.DeepEqual(s.Deliverables, []string{"#88"}) }},
		{"labels", "We decided to ship. Alice will write the notes.", "", func(s Signals) bool {
			return s.Has(TypeDecision) && s.Has(TypeActionItem) && !s.Has(TypePreference)
		}},
	} {
		s := o.Signals(tc.text, tc.role)
		if !tc.check(s) {
			t.Errorf("%s: Signals(%q, %q) = %+v", tc.name, tc.text, tc.role, s)
		}
	}
}

func TestScore(t *testing.T) {
	o := defaults(t)
	w := o.Weights
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, tc := range []struct {
		name string
		s    Signals
		w    Weights
		want float64
	}{
		{"nothing", Signals{}, w, 0},
		{"decision", Signals{Types: []Type{TypeDecision}}, w, 0.6},
		{"action item", Signals{Types: []Type{TypeActionItem}}, w, 0.6},
		{"preference", Signals{Types: []Type{TypePreference}}, w, 0.5},
		{"outcome", Signals{Types: []Type{TypeOutcome}}, w, 0.4},
		{"fact", Signals{Types: []Type{TypeFact}}, w, 0.15},
		{"one action word", Signals{ActionWords: 1}, w, 0.1 / 3},
		{"action words cap at three", Signals{ActionWords: 9}, w, 0.1},
		{"host", Signals{RoleValue: 1}, w, 0.3},
		{"back reference", Signals{BackReference: true}, w, 0.3},
		{"deliverable", Signals{Deliverables: []string{"#1"}}, w, 0.4},
		{"preference by host", Signals{Types: []Type{TypePreference}, RoleValue: 1}, w, 1 - 0.5*0.7},
		{"decision and action item", Signals{Types: []Type{TypeDecision, TypeActionItem}}, w, 1 - 0.4*0.4},
		{"negative weight turns off", Signals{Types: []Type{TypeDecision}}, Weights{Decision: -1}, 0},
		{"everything", Signals{Types: Types, ActionWords: 3, RoleValue: 1, BackReference: true, Deliverables: []string{"x"}}, w,
			1 - 0.4*0.4*0.5*0.6*0.85*0.9*0.7*0.7*0.6},
	} {
		if got := Score(tc.s, tc.w); !near(got, tc.want) || got < 0 || got > 1 {
			t.Errorf("%s: Score = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The threshold separates chit-chat and bare facts from decisions.
	if v := o.Value("嗯嗯，好的", "engineer"); v >= o.Threshold {
		t.Errorf("back-channel by an engineer scores %v >= threshold", v)
	}
	if v := o.Value("我们决定十二月十五号上线", "engineer"); v < o.Threshold {
		t.Errorf("a decision scores %v < threshold", v)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Weights: Weights{Decision: 2}}, "Weights.Decision"},
		{Options{Weights: Weights{Deliverable: math.NaN()}}, "Weights.Deliverable"},
		{Options{Roles: map[string]float64{"host": 1.5}}, `Roles["host"]`},
		{Options{Roles: map[string]float64{"Host": 1}}, "not lowercase"},
		{Options{Threshold: 1.1}, "Threshold"},
	} {
		tc.o.EnsureDefaults()
		err := tc.o.Validate()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
}
