package consolidate

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Signals are the rule signals of one record: what makes it worth
// consolidating. Options.Signals computes them; Score folds them into one
// value.
type Signals struct {
	// Types are the labels Label finds in the text.
	Types []Type
	// ActionWords counts the distinct action words in the text ("will",
	// "assigned", "owner", "deadline", "负责", "待办", "跟进", "截止").
	ActionWords int
	// Role is the speaker's role as given, and RoleValue its value in
	// Options.Roles (0 for a role not in the map).
	Role      string
	RoleValue float64
	// BackReference is set when the text points back at something said
	// before ("as we said", "as discussed", "就像刚才说的", "之前提到").
	BackReference bool
	// Deliverables are the URLs, commit hashes and PR, issue, task or ticket
	// ids in the text, in order of appearance.
	Deliverables []string
}

// Has reports whether the signals carry label t.
func (s *Signals) Has(t Type) bool { return slices.Contains(s.Types, t) }

// Weights weigh each signal in Score. A zero field takes its default; a
// negative one turns the signal off. Each must be at most 1.
type Weights struct {
	// Decision weighs a decision label. Default 0.6.
	Decision float64
	// ActionItem weighs an action item label. Default 0.6.
	ActionItem float64
	// Preference weighs a preference label. Default 0.5.
	Preference float64
	// Outcome weighs an outcome label. Default 0.4.
	Outcome float64
	// Fact weighs a fact label (a number or a date, nothing stronger).
	// Default 0.15: most numbers in chat are not worth keeping.
	Fact float64
	// ActionWord weighs each distinct action word, up to three.
	// Default 0.1.
	ActionWord float64
	// Role weighs the speaker's role value (Options.Roles). Default 0.3.
	Role float64
	// BackReference weighs a back-reference: a turn that points back is
	// restating something that mattered. Default 0.3.
	BackReference float64
	// Deliverable weighs the presence of a URL, commit hash or
	// PR/issue/task id. Default 0.4.
	Deliverable float64
}

// Default weights (see Weights).
const (
	DefaultWeightDecision      = 0.6
	DefaultWeightActionItem    = 0.6
	DefaultWeightPreference    = 0.5
	DefaultWeightOutcome       = 0.4
	DefaultWeightFact          = 0.15
	DefaultWeightActionWord    = 0.1
	DefaultWeightRole          = 0.3
	DefaultWeightBackReference = 0.3
	DefaultWeightDeliverable   = 0.4
	// DefaultThreshold is Options.Threshold's default: a decision or an
	// action item alone (0.6) passes, a bare fact (0.15) or chit-chat (0)
	// does not, a preference from the host (1-0.5*0.7 = 0.65) does.
	DefaultThreshold = 0.5
	// maxActionWords caps how many action words count.
	maxActionWords = 3
)

// DefaultRoles is Options.Roles' default: the value of a speaker role in
// [0, 1], keys lowercase. The host and the PM steer a meeting, so what they
// say is more often a decision.
var DefaultRoles = map[string]float64{
	"host": 1, "chair": 1, "主持人": 1, "owner": 0.9,
	"pm": 0.8, "product manager": 0.8, "产品经理": 0.8, "lead": 0.8, "manager": 0.8, "经理": 0.8,
	"finance": 0.6, "财务": 0.6, "engineer": 0.5, "工程师": 0.5, "designer": 0.5, "设计师": 0.5,
	"user": 0.5, "guest": 0.3, "assistant": 0.2,
}

// Options configures value signals and the rule-based consolidator.
type Options struct {
	// Weights weigh the signals in Score; zero fields take their defaults.
	Weights Weights
	// Roles maps a lowercase speaker role to its value in [0, 1].
	// Default DefaultRoles.
	Roles map[string]float64
	// Threshold is the value score at or above which a record is worth
	// consolidating, in (0, 1]. Default DefaultThreshold (0.5).
	Threshold float64
	// ContextTurns is how many turns of the same session on each side of
	// a selected record the caller puts in Selected.Before and After when
	// it builds an Input. Rules reads the turn just before (an acceptance
	// answers it, an agreement borrows its topic); the LLM consolidator
	// sends them all as context. Default 2; negative means none.
	ContextTurns int
}

// DefaultContextTurns is Options.ContextTurns' default.
const DefaultContextTurns = 2

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	w := &o.Weights
	for _, f := range []struct {
		p *float64
		d float64
	}{
		{&w.Decision, DefaultWeightDecision}, {&w.ActionItem, DefaultWeightActionItem},
		{&w.Preference, DefaultWeightPreference}, {&w.Outcome, DefaultWeightOutcome},
		{&w.Fact, DefaultWeightFact}, {&w.ActionWord, DefaultWeightActionWord},
		{&w.Role, DefaultWeightRole}, {&w.BackReference, DefaultWeightBackReference},
		{&w.Deliverable, DefaultWeightDeliverable},
	} {
		if *f.p == 0 {
			*f.p = f.d
		}
	}
	if o.Roles == nil {
		o.Roles = DefaultRoles
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.ContextTurns == 0 {
		o.ContextTurns = DefaultContextTurns
	}
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	w := o.Weights
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"Decision", w.Decision}, {"ActionItem", w.ActionItem}, {"Preference", w.Preference},
		{"Outcome", w.Outcome}, {"Fact", w.Fact}, {"ActionWord", w.ActionWord}, {"Role", w.Role},
		{"BackReference", w.BackReference}, {"Deliverable", w.Deliverable},
	} {
		if math.IsNaN(f.v) || f.v > 1 {
			return fmt.Errorf("%w: Options.Weights.%s = %v, want at most 1 (negative turns it off)", ErrOptions, f.name, f.v)
		}
	}
	for role, v := range o.Roles {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("%w: Options.Roles[%q] = %v, want a value in [0, 1]", ErrOptions, role, v)
		}
		if role != strings.ToLower(role) {
			return fmt.Errorf("%w: Options.Roles key %q is not lowercase", ErrOptions, role)
		}
	}
	if math.IsNaN(o.Threshold) || o.Threshold <= 0 || o.Threshold > 1 {
		return fmt.Errorf("%w: Options.Threshold = %v, want a value in (0, 1]", ErrOptions, o.Threshold)
	}
	return nil
}

var (
	actionWordRe  = regexp.MustCompile(`\b(?:will|shall|must|assigned|assign|owner|owns|own|responsible|todo|action items?|follow(?:s|ing)? up|deadline|due|deliver|by (?:monday|tuesday|wednesday|thursday|friday|tomorrow|tonight|eod|end of)|next step)\b|负责|待办|跟进|截止|交付|安排|落实|之前|前完成|交给`)
	backRefRe     = regexp.MustCompile(`\b(?:as (?:we|i|you) (?:said|discussed|mentioned|agreed)|as (?:discussed|mentioned|agreed)(?: earlier| before)?|like (?:i|we) said|going back to|back to what|we agreed earlier|earlier we said|as per our)\b|就像刚才说的|刚才说的|刚才提到|刚才讲的|之前说过|之前提到|前面说的|前面提到|如前所述|回到刚才|上次说的|上次提到|按刚才说的`)
	deliverableRe = regexp.MustCompile(`https?://[^\s，。)>\]"']+|(?i:\b(?:PR|MR|pull request|merge request|issue|task|ticket|bug|工单|需求)\s*#?\s*\d+\b)|(?:^|[\s(])#\d+\b|\b[A-Z][A-Z0-9]{1,9}-\d+\b|\b[0-9a-f]{7,40}\b`)
)

// Signals computes the rule signals of text said by a speaker in role.
// Options must have their defaults (EnsureDefaults).
func (o *Options) Signals(text, role string) Signals {
	var s Signals
	for _, t := range Label(text) {
		s.Types = append(s.Types, t.Type)
	}
	seen := map[string]bool{}
	low := asciiLower(text)
	if !gate(low, actionWordGate) {
		low = ""
	}
	for _, m := range actionWordRe.FindAllString(low, -1) {
		if !seen[m] {
			seen[m] = true
			s.ActionWords++
		}
	}
	s.Role = role
	s.RoleValue = o.Roles[strings.ToLower(strings.TrimSpace(role))]
	low = asciiLower(text)
	s.BackReference = gate(low, backRefGate) && backRefRe.MatchString(low)
	if !mayHoldDeliverable(text, low) {
		return s
	}
	for _, m := range deliverableRe.FindAllString(text, -1) {
		m = strings.TrimSpace(strings.TrimLeft(m, " ("))
		m = strings.TrimRight(m, ".,;:!?")
		if isHexOnly(m) && !hasDigitAndLetter(m) {
			continue // "deadbeef" or "1234567" alone is not a commit hash
		}
		s.Deliverables = append(s.Deliverables, m)
	}
	return s
}

// Gates for the signal patterns (see gate in label.go): a literal every
// match must contain.
var (
	actionWordGate = []string{"will", "shall", "must", "assign", "own", "responsib", "todo", "action", "follow", "deadline",
		"due", "deliver", "by ", "next step", "负责", "待办", "跟进", "截止", "交付", "安排", "落实", "之前", "前完成", "交给"}
	backRefGate = []string{"as ", "like ", "back to", "earlier", "per our", "刚才", "之前", "前面", "如前", "回到", "上次"}
	idGate      = []string{"http", "#", "pr", "mr", "request", "issue", "task", "ticket", "bug", "工单", "需求"}
)

// mayHoldDeliverable gates deliverableRe: a URL or id word, a '#', a
// dash before a digit (OPS-118), or a run of seven hex digits.
func mayHoldDeliverable(text, low string) bool {
	if gate(low, idGate) || strings.Contains(text, "-") && strings.ContainsAny(text, "0123456789") {
		return true
	}
	run := 0
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
			if run++; run >= 7 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func isHexOnly(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdef")
}

// Score folds signals into one value in [0, 1] as a noisy-OR: each present
// signal i with weight w_i and strength x_i in [0, 1] is an independent
// chance that the record matters, and
//
//	Score = 1 - Π (1 - w_i·x_i)
//
// Strength is 1 for a present label, back-reference or deliverable, the
// role value for the role, and min(ActionWords, 3)/3 for action words. So
// one strong signal decides alone (a decision scores 0.6), weak ones add
// up without ever passing 1, and a record with no signal scores 0.
// Negative weights count as 0; zero weights are not defaulted here
// (Options.EnsureDefaults does that).
func Score(s Signals, w Weights) float64 {
	keep := 1.0
	add := func(weight, x float64) {
		if weight > 0 && x > 0 {
			keep *= 1 - min(weight, 1)*min(x, 1)
		}
	}
	for _, t := range Types {
		if !s.Has(t) {
			continue
		}
		switch t {
		case TypeDecision:
			add(w.Decision, 1)
		case TypeActionItem:
			add(w.ActionItem, 1)
		case TypePreference:
			add(w.Preference, 1)
		case TypeOutcome:
			add(w.Outcome, 1)
		case TypeFact:
			add(w.Fact, 1)
		}
	}
	add(w.ActionWord, float64(min(s.ActionWords, maxActionWords))/maxActionWords)
	add(w.Role, s.RoleValue)
	if s.BackReference {
		add(w.BackReference, 1)
	}
	if len(s.Deliverables) > 0 {
		add(w.Deliverable, 1)
	}
	return 1 - keep
}

// Value is Score of text's signals under o's weights: the one number a
// caller compares with o.Threshold.
func (o *Options) Value(text, role string) float64 {
	return Score(o.Signals(text, role), o.Weights)
}
