package consolidate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// Consolidator turns selected records into units. Implementations are safe
// for concurrent use and return either every unit or an error, never a
// partial result.
type Consolidator interface {
	Consolidate(ctx context.Context, in Input) ([]Unit, error)
}

// Turn is one raw record as a consolidator sees it.
type Turn struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	Speaker string    `json:"speaker"`
	Role    string    `json:"role,omitempty"`
	Text    string    `json:"text"`
}

// Selected is a high-value record with the turns around it, in time order:
// Before ends with the turn just before, After starts with the turn just
// after.
type Selected struct {
	Turn
	Before []Turn `json:"before,omitempty"`
	After  []Turn `json:"after,omitempty"`
}

// Input is what the engine hands a consolidator: the records it selected
// (by value score, feedback or an explicit request), each with its
// neighbouring turns, and the agent they belong to.
type Input struct {
	// Agent is the tenant; every unit returned carries it.
	Agent string
	// Records are the selected records, in any order.
	Records []Selected
}

// Validate reports the first problem of in, naming it: no records, a record
// or context turn with id 0, a duplicate selected id, an empty text, a zero
// time, invalid UTF-8.
func (in *Input) Validate() error {
	if len(in.Records) == 0 {
		return fmt.Errorf("%w: Input.Records is empty", ErrInvalidInput)
	}
	if !utf8.ValidString(in.Agent) {
		return fmt.Errorf("%w: Input.Agent is not valid UTF-8", ErrInvalidInput)
	}
	seen := make(map[uint64]bool, len(in.Records))
	check := func(where string, t *Turn) error {
		switch {
		case t.ID == 0:
			return fmt.Errorf("%w: %s: id is 0", ErrInvalidInput, where)
		case strings.TrimSpace(t.Text) == "":
			return fmt.Errorf("%w: %s (id %d): text is empty", ErrInvalidInput, where, t.ID)
		case t.Time.IsZero():
			return fmt.Errorf("%w: %s (id %d): time is zero (relative dates resolve against it)", ErrInvalidInput, where, t.ID)
		case !utf8.ValidString(t.Text) || !utf8.ValidString(t.Speaker) || !utf8.ValidString(t.Role):
			return fmt.Errorf("%w: %s (id %d): text, speaker or role is not valid UTF-8", ErrInvalidInput, where, t.ID)
		}
		return nil
	}
	for i := range in.Records {
		r := &in.Records[i]
		if err := check(fmt.Sprintf("Input.Records[%d]", i), &r.Turn); err != nil {
			return err
		}
		if seen[r.ID] {
			return fmt.Errorf("%w: Input.Records[%d]: id %d selected twice", ErrInvalidInput, i, r.ID)
		}
		seen[r.ID] = true
		for j := range r.Before {
			if err := check(fmt.Sprintf("Input.Records[%d].Before[%d]", i, j), &r.Before[j]); err != nil {
				return err
			}
		}
		for j := range r.After {
			if err := check(fmt.Sprintf("Input.Records[%d].After[%d]", i, j), &r.After[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ids returns every record and context id of in.
func (in *Input) ids() map[uint64]bool {
	m := map[uint64]bool{}
	for i := range in.Records {
		r := &in.Records[i]
		m[r.ID] = true
		for _, t := range r.Before {
			m[t.ID] = true
		}
		for _, t := range r.After {
			m[t.ID] = true
		}
	}
	return m
}

// Rules is the default consolidator: offline, deterministic, built on Label
// and ResolveDate. Same input, same units, byte for byte.
//
// For each selected record (in time order, then id) it emits one unit per
// label Label finds. The unit's content is the labelled statement, its
// topic the statement's subject (Topic), its participants the speaker and
// any owner, its time the record's, its source the record. An action item
// gets an owner (a named person, or the speaker for "I'll"/"我来") and a
// due time resolved against the record's time; a sentence assigning several
// tasks ("赵强负责通知运维，Alice 负责定价页面") gives one action item per
// clause. A short agreement ("同意，十二月十五号没问题") or a decision with no
// subject restates the decision in the turn before (its topic and content,
// both turns cited), so a later revision supersedes it too. A short acceptance ("我来",
// "I'll do it", "on it") answering a request in the turn before becomes an
// action item for the speaker, citing both turns. A proposal ("Let's
// set…", "我建议…") the next speaker accepts is a decision citing both
// turns (acceptedProposal). Confidence starts at the
// type's base (decision and action item 0.8, preference and outcome 0.7,
// fact 0.5), gains 0.1 when the speaker's role value is 0.8 or more and
// 0.05 for a back-reference, and is capped at 0.95. An assistant's turn
// that only acknowledges and restates the turn before ("Noted: connection
// pool size 32 for billing-api." after the user's "Let's set the
// connection pool size to 32 for billing-api"; "记下了：…"), when both are
// selected, makes no unit of its own: it is cited by the units of the turn
// it restates, whose confidence gains echoConfidence. (It had made a unit
// on the same topic that superseded the user's own words.)
//
// Units have ID 0 (the store assigns ids) and are not linked: call Link
// with the store's live units to set supersession.
type Rules struct {
	opts Options
}

var _ Consolidator = (*Rules)(nil)

// NewRules returns the rule consolidator.
func NewRules(opts Options) (*Rules, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Rules{opts: opts}, nil
}

var baseConfidence = [...]float64{TypeDecision: 0.8, TypeActionItem: 0.8, TypePreference: 0.7, TypeOutcome: 0.7, TypeFact: 0.5}

// Consolidate implements Consolidator.
func (c *Rules) Consolidate(ctx context.Context, in Input) ([]Unit, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	recs := slices.Clone(in.Records)
	slices.SortStableFunc(recs, func(a, b Selected) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmpU64(a.ID, b.ID)
	})
	selected := make(map[uint64]bool, len(recs))
	for i := range recs {
		selected[recs[i].ID] = true
	}
	var out []Unit
	confirms := map[uint64][]uint64{} // a selected turn's id -> the echoes confirming it
	for i := range recs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if prev, ok := echoOf(&recs[i]); ok && selected[prev] {
			confirms[prev] = append(confirms[prev], recs[i].ID)
			continue
		}
		units := c.record(&recs[i], in.Agent)
		if acceptsSelected(&recs[i], selected) && !slices.ContainsFunc(units, func(u Unit) bool { return u.Type != TypeFact }) {
			// The reply that accepts a selected proposal ("OK, 64 it
			// is."): the decision cites it; its number is no fact.
			units = nil
		}
		out = append(out, units...)
	}
	for i := range out {
		for _, id := range out[i].SourceIDs {
			if echoes := confirms[id]; len(echoes) > 0 {
				out[i].SourceIDs = append(out[i].SourceIDs, echoes...)
				out[i].Confidence = min(out[i].Confidence+echoConfidence, 0.95)
			}
		}
		out[i].Normalize()
		if err := out[i].Validate(); err != nil {
			return nil, fmt.Errorf("consolidate: rules built an invalid unit from record %v: %w", out[i].SourceIDs, err)
		}
	}
	return out, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (c *Rules) record(r *Selected, agent string) []Unit {
	sig := c.opts.Signals(r.Text, r.Role)
	conf := func(t Type) float64 {
		v := baseConfidence[t]
		if sig.RoleValue >= 0.8 {
			v += 0.1
		}
		if sig.BackReference {
			v += 0.05
		}
		return min(v, 0.95)
	}
	var out []Unit
	for _, tag := range Label(r.Text) {
		u := Unit{
			Type:         tag.Type,
			Topic:        Topic(tag.Content),
			Content:      tag.Content,
			Participants: participants(r.Speaker),
			SourceIDs:    []uint64{r.ID},
			Time:         r.Time,
			Confidence:   conf(tag.Type),
			Agent:        agent,
		}
		if tag.Type == TypeActionItem {
			u.ActionItems = actionItems(tag, r)
			if len(u.ActionItems) > 1 {
				// Every clause that assigns a task, owners included: the
				// first clause's content alone ("通知运维，Alice 负责定价页
				// 面…") reads as if its owner had all the tasks.
				u.Content = assignments(tag.Sentence)
				u.Topic = Topic(u.Content)
			}
			names := []string{r.Speaker}
			for _, a := range u.ActionItems {
				names = append(names, a.Owner)
			}
			u.Participants = participants(names...)
		}
		if tag.Type == TypeDecision {
			c.borrowTopic(&u, tag, r)
		}
		out = append(out, u)
	}
	if d, ok := acceptedProposal(r, agent, out, conf(TypeDecision)); ok {
		out = slices.DeleteFunc(out, func(u Unit) bool { return u.Type == TypeFact })
		out = append(out, d)
	}
	if len(out) == 0 && len(r.Before) > 0 && isAcceptance(r.Text) {
		prev := &r.Before[len(r.Before)-1]
		task := requestedTask(prev.Text)
		if task != "" {
			a := ActionItem{Owner: r.Speaker, Task: task}
			if d, ok := ResolveDate(r.Text, r.Time); ok {
				a.Due = d.Time
			} else if d, ok := ResolveDate(prev.Text, prev.Time); ok {
				a.Due = d.Time
			}
			out = append(out, Unit{
				Type: TypeActionItem, Topic: Topic(task), Content: r.Speaker + ": " + task,
				ActionItems: []ActionItem{a}, Participants: participants(prev.Speaker, r.Speaker),
				SourceIDs: []uint64{prev.ID, r.ID}, Time: r.Time, Confidence: conf(TypeActionItem) - 0.1, Agent: agent,
			})
		}
	}
	return out
}

// actionItems returns the tasks of an action item tag: one per clause
// when the sentence assigns several ("赵强负责通知运维，Alice 负责定价页面"),
// else the tag's own. Each due time is resolved in its clause, then in the
// sentence.
func actionItems(tag Tag, r *Selected) []ActionItem {
	item := func(t Tag, dateText string) ActionItem {
		owner := t.Owner
		if owner == OwnerSpeaker {
			owner = r.Speaker
		}
		a := ActionItem{Owner: owner, Task: t.Content}
		if d, ok := ResolveDate(dateText, r.Time); ok {
			a.Due = d.Time
		}
		return a
	}
	var many []ActionItem
	for _, clause := range clauseRe.Split(tag.Sentence, -1) {
		if t, ok := actionItem(clause); ok {
			many = append(many, item(t, clause))
		}
	}
	if len(many) >= 2 {
		return many
	}
	return []ActionItem{item(tag, tag.Sentence)}
}

// assignments returns the clauses of sentence that assign a task, joined
// as they were separated ("赵强负责通知运维，Alice 负责定价页面，张伟负责压
// 测报告"), without the sentence's closing punctuation.
func assignments(sentence string) string {
	sep := ", "
	if strings.ContainsFunc(sentence, analysis.IsCJK) {
		sep = "，"
	}
	var out []string
	for _, clause := range clauseRe.Split(sentence, -1) {
		if _, ok := actionItem(clause); ok {
			out = append(out, cleanContent(clause))
		}
	}
	return strings.Join(out, sep)
}

var (
	clauseRe     = regexp.MustCompile(`[，,；;、]`)
	agreementCue = regexp.MustCompile(`(?i)^(?:同意|一致同意|agreed|agree)$|\bagreed$`)
)

// borrowTopic turns a short agreement ("同意，十二月十五号没问题") or a
// decision that names no subject into a restatement of the decision in the
// turn before it: that decision's topic and content, citing both turns. An
// agreement is about what was just said, and without the topic a later
// revision could never supersede it.
func (c *Rules) borrowTopic(u *Unit, tag Tag, r *Selected) {
	if len(r.Before) == 0 {
		return
	}
	k, err := TopicKey(u.Topic)
	// A short agreement ("同意，十二月十五号没问题") is about what was just
	// said; a long one states its own subject.
	short := agreementCue.MatchString(tag.Trigger) && utf8.RuneCountInString(u.Content) <= 16
	if err != nil || len(k) > 0 && !short {
		return
	}
	prev := &r.Before[len(r.Before)-1]
	for _, t := range Label(prev.Text) {
		if t.Type != TypeDecision {
			continue
		}
		if k, err := TopicKey(Topic(t.Content)); err == nil && len(k) > 0 {
			// The agreement restates the decision: the unit says what was
			// agreed, and cites both turns.
			u.Topic, u.Content = Topic(t.Content), t.Content
			u.SourceIDs = append(u.SourceIDs, prev.ID)
			u.Participants = participants(append(u.Participants, prev.Speaker)...)
		}
		return
	}
}

func participants(names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" && n != OwnerSpeaker && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

var acceptances = []string{"我来", "我来吧", "我来负责", "我负责", "交给我", "我去", "我去办", "没问题我来", "好的我来", "可以我来",
	"i'll do it", "i'll take it", "i'll take that", "i'll handle it", "on it", "i can do it", "leave it to me", "sure, i'll do it", "will do"}

// isAcceptance reports a short first-person acceptance of a task.
func isAcceptance(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, "。.!！~ ")
	t = strings.NewReplacer("，", "", ",", "", " ", " ").Replace(t)
	for _, p := range []string{"好的", "好", "行", "可以", "没问题", "ok ", "ok", "sure "} {
		if rest := strings.TrimPrefix(t, p); rest != t && rest != "" {
			t = strings.TrimSpace(rest)
			break
		}
	}
	for _, a := range acceptances {
		if t == a || strings.HasPrefix(t, a) && utf8.RuneCountInString(t) <= utf8.RuneCountInString(a)+6 {
			return true
		}
	}
	return false
}

var requestCues = []string{"谁负责", "谁来", "谁去", "谁能", "有人", "哪位", "who can", "who will", "who's going to", "can someone", "could someone", "someone needs to", "we need someone to"}

// requestedTask returns the task a request asks someone to take ("谁负责通知
// 运维？" -> "通知运维"), or "" when the turn is not a request.
func requestedTask(text string) string {
	low := strings.ToLower(text)
	for _, cue := range requestCues {
		if i := strings.Index(low, cue); i >= 0 {
			task := text[i+len(cue):]
			task = strings.TrimLeft(task, "来去一下 ")
			task = strings.TrimPrefix(strings.TrimSpace(task), "to ")
			return cleanContent(strings.TrimRight(task, "?？吗呢"))
		}
	}
	return ""
}

// echoConfidence is what an assistant's restatement adds to the
// confidence of the units of the turn it restates.
const echoConfidence = 0.05

// echoContain is the share of an echo's topic terms the turn before it
// must hold.
const echoContain = 0.8

// ackPrefixes open an acknowledgement ("Noted: …", "记下了：…"); a
// separator must follow.
var ackPrefixes = []string{"noted", "got it", "understood", "will do", "ok", "okay", "sure", "done", "记下了", "记住了", "已记下", "好的", "收到", "明白", "了解"}

// echoOf reports whether r is an assistant's acknowledgement that restates
// the turn just before it (another role's), and that turn's id: r opens
// with an acknowledgement and a separator, and at least echoContain of
// the topic terms of the rest are the earlier turn's.
func echoOf(r *Selected) (uint64, bool) {
	if roleOf(&r.Turn) != "assistant" || len(r.Before) == 0 {
		return 0, false
	}
	prev := &r.Before[len(r.Before)-1]
	if roleOf(prev) == "assistant" {
		return 0, false
	}
	rest, ok := stripAck(r.Text)
	if !ok {
		return 0, false
	}
	a, err := TopicKey(rest)
	if err != nil || len(a) == 0 {
		return 0, false
	}
	b, err := TopicKey(prev.Text)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); ok {
			n++
		}
	}
	return prev.ID, float64(n) >= echoContain*float64(len(a))
}

// stripAck returns text without its opening acknowledgement and the
// separator after it, and whether it had one.
func stripAck(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, p := range ackPrefixes {
		if len(t) < len(p) || !strings.EqualFold(t[:len(p)], p) {
			continue
		}
		rest := t[len(p):]
		for _, sep := range []string{":", "：", ",", "，", ".", "。", "!", "！", " -", " —"} {
			if r, ok := strings.CutPrefix(rest, sep); ok {
				return strings.TrimSpace(r), true
			}
		}
	}
	return "", false
}

// roleOf is t's role, its speaker when it names none (the engine leaves a
// selected turn's Role empty when it is the speaker).
func roleOf(t *Turn) string {
	if t.Role != "" {
		return strings.ToLower(t.Role)
	}
	return strings.ToLower(t.Speaker)
}
