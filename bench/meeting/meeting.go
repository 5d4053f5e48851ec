package meeting

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"time"
)

// Config configures a generated meeting.
type Config struct {
	// Seed fixes every random choice. Default 0 is a valid seed.
	Seed uint64
	// Utterances is the number of utterances, key moments included.
	// Default 5000; at least 200 so the key moments fit.
	Utterances int
	// Start is when the meeting starts. Default Tuesday 2026-12-01 14:00
	// in Beijing time (UTC+8): the relative dates of the key moments
	// ("下周一", "Friday") resolve against it.
	Start time.Time
	// Duration is the time from the first utterance to the last.
	// Default 90 minutes.
	Duration time.Duration
}

// Defaults.
const (
	DefaultUtterances = 5000
	DefaultDuration   = 90 * time.Minute
	minUtterances     = 200
)

// Beijing is the meeting's time zone (UTC+8, no daylight saving).
var Beijing = time.FixedZone("CST", 8*3600)

// DefaultStart is Config.Start's default.
var DefaultStart = time.Date(2026, 12, 1, 14, 0, 0, 0, Beijing)

// EnsureDefaults fills zero fields.
func (c *Config) EnsureDefaults() {
	if c.Utterances == 0 {
		c.Utterances = DefaultUtterances
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
}

// Validate reports the first invalid field.
func (c *Config) Validate() error {
	switch {
	case c.Utterances < minUtterances:
		return fmt.Errorf("%w: Config.Utterances = %d, want at least %d", ErrInvalidConfig, c.Utterances, minUtterances)
	case c.Duration < time.Minute:
		return fmt.Errorf("%w: Config.Duration = %v, want at least a minute", ErrInvalidConfig, c.Duration)
	case c.Duration/time.Duration(c.Utterances) < 10*time.Millisecond:
		return fmt.Errorf("%w: Config.Duration = %v is too short for %d utterances (under 10ms each)", ErrInvalidConfig, c.Duration, c.Utterances)
	}
	return nil
}

// Speaker is one participant.
type Speaker struct {
	Name string `json:"name"`
	Role string `json:"role"` // host, pm, engineer, finance
	// English is the share of the speaker's filler turns in English.
	English float64 `json:"-"`
	// weight is the speaker's share of turns.
	weight float64
}

// Speakers are the meeting's participants.
var Speakers = []Speaker{
	{Name: "王磊", Role: "host", English: 0.05, weight: 3},
	{Name: "李娜", Role: "pm", English: 0.1, weight: 2},
	{Name: "Alice", Role: "pm", English: 0.9, weight: 1.2},
	{Name: "张伟", Role: "engineer", English: 0.1, weight: 1.5},
	{Name: "赵强", Role: "engineer", English: 0.05, weight: 1.5},
	{Name: "陈静", Role: "finance", English: 0.05, weight: 1},
	{Name: "Bob", Role: "finance", English: 0.9, weight: 0.8},
}

func roleOf(name string) string {
	for _, s := range Speakers {
		if s.Name == name {
			return s.Role
		}
	}
	return ""
}

// Utterance is one turn of the meeting.
type Utterance struct {
	// Seq is the position in the meeting, from 0.
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	Speaker string    `json:"speaker"`
	Role    string    `json:"role"`
	Text    string    `json:"text"`
	// Key names the key moment this utterance is, or "" for filler.
	Key string `json:"key,omitempty"`
}

// Meeting is a generated meeting.
type Meeting struct {
	Config     Config
	Utterances []Utterance
	// Keys maps each key moment's key to its utterance's Seq.
	Keys      map[string]int
	Questions []Question
}

// Stream calls fn with each utterance in order, stopping at fn's first
// error, which it returns.
func (m *Meeting) Stream(fn func(Utterance) error) error {
	for _, u := range m.Utterances {
		if err := fn(u); err != nil {
			return err
		}
	}
	return nil
}

// All yields the utterances in order, for range-over-func loops.
func (m *Meeting) All() iter.Seq[Utterance] {
	return func(yield func(Utterance) bool) {
		for _, u := range m.Utterances {
			if !yield(u) {
				return
			}
		}
	}
}

// WriteJSONL writes one utterance a line.
func (m *Meeting) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return m.Stream(func(u Utterance) error { return enc.Encode(u) })
}

// Generate builds the meeting for cfg.
func Generate(cfg Config) (*Meeting, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x6d656574696e67))
	n := cfg.Utterances
	// Place each scene: its anchor fraction, moved by up to ±1% of the
	// meeting with the seed, never overlapping the previous scene.
	slots := make([]*Utterance, n)
	keys := map[string]int{}
	next := 0
	for _, sc := range scenes {
		at := int((sc.at + (r.Float64()*2-1)*0.01) * float64(n))
		at = max(at, next+3)
		seq := at
		for i, line := range sc.lines {
			if i > 0 {
				seq += 1 + line.gapTurns
			}
			if seq >= n {
				return nil, fmt.Errorf("%w: Config.Utterances = %d leaves no room for scene %q", ErrInvalidConfig, n, sc.name)
			}
			slots[seq] = &Utterance{Speaker: line.speaker, Role: roleOf(line.speaker), Text: line.text, Key: line.key}
			if line.key != "" {
				keys[line.key] = seq
			}
			next = seq + 1
		}
	}
	f := newFiller(r)
	us := make([]Utterance, n)
	prev := ""
	for i := range us {
		if slots[i] != nil {
			us[i] = *slots[i]
		} else {
			us[i] = f.turn(prev)
		}
		us[i].Seq = i
		prev = us[i].Speaker
	}
	stampTimes(r, us, cfg.Start, cfg.Duration)
	m := &Meeting{Config: cfg, Utterances: us, Keys: keys}
	m.Questions = questions(keys)
	return m, nil
}

// stampTimes spaces utterances by seeded gaps (back-channels quick, other
// turns by length) and scales them so the last one falls at start+d.
func stampTimes(r *rand.Rand, us []Utterance, start time.Time, d time.Duration) {
	gaps := make([]float64, len(us))
	total := 0.0
	for i := 1; i < len(us); i++ {
		runes := float64(len([]rune(us[i-1].Text)))
		g := 0.3 + r.Float64()*0.7 + runes*0.04
		if isBackChannel(us[i].Text) {
			g *= 0.4
		}
		gaps[i] = g
		total += g
	}
	acc := 0.0
	for i := range us {
		acc += gaps[i]
		us[i].Time = start.Add(time.Duration(acc / total * float64(d)))
	}
}

func isBackChannel(text string) bool {
	for _, b := range backChannels {
		if text == b {
			return true
		}
	}
	return false
}

// scene is a run of hand-written lines placed around a fraction of the
// meeting; gapTurns filler turns separate a line from the one before.
type scene struct {
	name  string
	at    float64
	lines []line
}

type line struct {
	speaker, text, key string
	gapTurns           int
}

// Key moments. The keys are stable: tests and evaluation refer to them.
const (
	KeyBudgetRaised     = "budget_raised"
	KeyBudgetDetail     = "budget_detail"
	KeyLaunchProposal   = "launch_proposal"
	KeyLaunchDecision   = "launch_decision"
	KeyLaunchAgree      = "launch_agree"
	KeyOpsRequest       = "ops_request"
	KeyOpsAction        = "ops_action"
	KeyPricingAction    = "pricing_action"
	KeyDemoPreference   = "demo_preference"
	KeyStandupPref      = "standup_preference"
	KeyLoadTestAction   = "loadtest_action"
	KeyLoadTestFailed   = "loadtest_failed"
	KeyLaunchRevised    = "launch_revised"
	KeyLaunchRevisedAck = "launch_revised_ack"
	KeyBudgetDecision   = "budget_decision"
	KeySummary          = "summary"
)

var scenes = []scene{
	{"budget issue", 0.12, []line{
		{"陈静", "我先提一个预算问题：这个季度云服务的预算已经超了百分之十八，大概多出四十万。", KeyBudgetRaised, 0},
		{"王磊", "嗯，这个要重视。", "", 0},
		{"陈静", "主要是测试环境一直开着，GPU 实例按小时计费，十一月一个月就花了十二万。", KeyBudgetDetail, 1},
		{"Bob", "Right, the staging GPUs alone were about 17k dollars last month.", "", 0},
	}},
	{"launch decision", 0.28, []line{
		{"李娜", "上线时间我建议定在十二月十五号，那周没有大促。", KeyLaunchProposal, 0},
		{"张伟", "研发这边十五号可以。", "", 1},
		{"王磊", "好，那我们决定产品上线时间定在十二月十五号。", KeyLaunchDecision, 0},
		{"赵强", "同意，十二月十五号没问题。", KeyLaunchAgree, 0},
	}},
	{"ops action", 0.40, []line{
		{"王磊", "上线前要提前通知运维做扩容，谁负责通知运维？", KeyOpsRequest, 0},
		{"赵强", "我来负责通知运维，下周一下午两点前把变更单发出去。", KeyOpsAction, 0},
		{"王磊", "好的，辛苦。", "", 0},
	}},
	{"pricing action", 0.50, []line{
		{"Alice", "The pricing page still shows the old plans. Alice will update the pricing page by Friday.", KeyPricingAction, 0},
		{"李娜", "OK，谢谢 Alice。", "", 0},
	}},
	{"preferences", 0.56, []line{
		{"Alice", "For reviews, I prefer weekly demos over one big review at the end.", KeyDemoPreference, 0},
		{"王磊", "我也更喜欢周一早上开站会，大家对齐一下进度。", KeyStandupPref, 2},
	}},
	{"load test", 0.62, []line{
		{"王磊", "压测这块张伟负责，周五前给出压测报告。", KeyLoadTestAction, 0},
		{"张伟", "收到。", "", 0},
	}},
	{"launch revised", 0.76, []line{
		{"张伟", "压测结果出来了，支付接口在峰值下错误率百分之三，十五号上线风险很大。", KeyLoadTestFailed, 0},
		{"王磊", "就像刚才说的，上线时间推迟到十二月二十二号，先把支付接口的问题修掉。", KeyLaunchRevised, 1},
		{"Bob", "Agreed, December 22nd also gives finance time to close the budget gap.", KeyLaunchRevisedAck, 0},
	}},
	{"budget decision", 0.86, []line{
		{"陈静", "回到预算问题，我建议把闲置的测试环境都关掉。", "", 0},
		{"王磊", "达成共识：测试环境预算砍掉百分之二十，晚上和周末自动关机。", KeyBudgetDecision, 0},
	}},
	{"summary", 0.96, []line{
		{"王磊", "最后确认一下：上线时间是十二月二十二号；赵强负责通知运维，Alice 负责定价页面，张伟负责压测报告。", KeySummary, 0},
		{"李娜", "好的，会议纪要我来发。", "", 0},
	}},
}

// Question is a question a user asks about the meeting.
type Question struct {
	Text string `json:"text"`
	Lang string `json:"lang"` // "zh" or "en"
	// Live questions are asked during the meeting, right after utterance
	// AskAfter; post-meeting ones (Live false, AskAfter -1) after the end.
	Live     bool `json:"live"`
	AskAfter int  `json:"ask_after"`
	// Evidence are the keys of the moments that answer the question; the
	// first is the one a good answer must cite.
	Evidence []string `json:"evidence"`
	// Answer is a short reference answer.
	Answer string `json:"answer"`
}

func questions(keys map[string]int) []Question {
	live := func(text, lang, after string, delay int, answer string, evidence ...string) Question {
		return Question{Text: text, Lang: lang, Live: true, AskAfter: keys[after] + delay, Evidence: evidence, Answer: answer}
	}
	post := func(text, lang, answer string, evidence ...string) Question {
		return Question{Text: text, Lang: lang, AskAfter: -1, Evidence: evidence, Answer: answer}
	}
	return []Question{
		live("刚才谁提到了预算问题？", "zh", KeyBudgetDetail, 40, "陈静（财务）", KeyBudgetRaised, KeyBudgetDetail),
		live("who raised the budget issue just now?", "en", KeyBudgetDetail, 60, "陈静 from finance", KeyBudgetRaised, KeyBudgetDetail),
		live("我们刚才定的上线时间是哪天？", "zh", KeyLaunchAgree, 30, "十二月十五号", KeyLaunchDecision, KeyLaunchProposal),
		live("谁负责通知运维？", "zh", KeyOpsAction, 25, "赵强，下周一下午两点前", KeyOpsAction, KeyOpsRequest),
		live("what did Zhang Wei just say about the load test?", "en", KeyLoadTestFailed, 20, "支付接口峰值错误率百分之三，十五号上线风险大", KeyLoadTestFailed),
		live("上线时间改了吗？", "zh", KeyLaunchRevisedAck, 30, "改了，推迟到十二月二十二号", KeyLaunchRevised, KeyLaunchDecision),
		post("我们关于产品上线时间达成了什么共识？", "zh", "先定在十二月十五号，压测没通过后推迟到十二月二十二号", KeyLaunchRevised, KeyLaunchDecision, KeySummary),
		post("What did we agree on for the launch date?", "en", "December 22nd (moved from December 15th)", KeyLaunchRevised, KeyLaunchDecision, KeySummary),
		post("谁负责通知运维？什么时候之前？", "zh", "赵强，2026-12-07 14:00 前发变更单", KeyOpsAction, KeySummary),
		post("Who owns the pricing page update, and by when?", "en", "Alice, by Friday 2026-12-04", KeyPricingAction, KeySummary),
		post("Alice 喜欢什么样的评审方式？", "zh", "每周 demo，而不是最后一次大评审", KeyDemoPreference),
		post("What kind of review does Alice prefer?", "en", "weekly demos over one big review", KeyDemoPreference),
		post("预算问题最后怎么处理的？", "zh", "测试环境预算砍掉百分之二十，晚上和周末自动关机", KeyBudgetDecision, KeyBudgetRaised),
		post("会上有哪些待办事项？", "zh", "赵强通知运维；Alice 更新定价页面；张伟周五前出压测报告", KeyOpsAction, KeyPricingAction, KeyLoadTestAction, KeySummary),
		post("压测报告谁负责？", "zh", "张伟，周五前", KeyLoadTestAction, KeySummary),
	}
}
