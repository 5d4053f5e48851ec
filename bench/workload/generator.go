package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Record is one generated interaction.
type Record struct {
	Time    time.Time
	Agent   string
	Session string
	Role    string // user, assistant or tool
	Text    string
	// Meta holds "tags", "entities", "intent" and "task_type". Each record
	// gets its own map and slices: callers may keep them.
	Meta map[string][]string
}

// Role values.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Entities per agent. Filler text draws them with a Zipf law, so a few
// people and services recur constantly and the others now and then.
const (
	personsPerAgent  = 12
	servicesPerAgent = 8
	projectsPerAgent = 6
)

type agentInfo struct {
	id                          string
	persons, services, projects []string
	tags                        []string // the agent's usual topics
}

type sessionPlan struct {
	id    string
	start int64 // unix nanoseconds
	gap   int64 // nanoseconds between turns
	first int   // ordinal of the first turn
	turns int32
	agent int32
	task  uint8
	tag   uint8
	// The session's focus: half of the service and project mentions of a
	// session name these, so sessions have topics.
	focusS, focusJ uint8
}

// Generator yields the records of one Config. It is not safe for concurrent
// use; generators with the same Config yield identical records.
type Generator struct {
	cfg Config
	err error
	r   *rand.Rand
	v   *vocabulary

	zNoun, zVerb, zAdj, zGlue, zTech, zTail *zipf
	zPerson, zService, zProject             *zipf

	agents   []agentInfo
	sessions []sessionPlan
	facts    []fact  // ordered by ordinal
	byAgent  [][]int // agent -> indices into facts

	// cursor
	n, si, turn, nextFact, echoFact int
	prevRole                        string

	buf            []byte
	ents           []string
	cur            *agentInfo
	focusS, focusJ int
	fact           *fact
}

// New returns a generator for cfg after EnsureDefaults. An invalid Config
// yields a generator whose Next returns false at once and whose Err says why.
// New plans the sessions and the planted facts up front (memory
// O(Agents*Sessions + facts)); the text itself is made lazily by Next.
func New(cfg Config) *Generator {
	cfg.EnsureDefaults()
	g := &Generator{cfg: cfg, echoFact: -1, v: vocab()}
	if err := cfg.Validate(); err != nil {
		g.err = err
		return g
	}
	g.r = rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6c617a796d656d))
	s := cfg.ZipfS
	g.zNoun = newZipf(g.r, s, len(g.v.nouns))
	g.zVerb = newZipf(g.r, s, len(g.v.verbs))
	g.zAdj = newZipf(g.r, s, len(g.v.adjs))
	g.zGlue = newZipf(g.r, s, len(g.v.glue))
	g.zTech = newZipf(g.r, s, len(g.v.tech))
	g.zTail = newZipf(g.r, s, len(g.v.tail))
	g.zPerson = newZipf(g.r, s, personsPerAgent)
	g.zService = newZipf(g.r, s, servicesPerAgent)
	g.zProject = newZipf(g.r, s, projectsPerAgent)
	g.planAgents()
	g.planSessions()
	g.planFacts()
	g.buf = make([]byte, 0, 1024)
	return g
}

// Err reports an invalid Config.
func (g *Generator) Err() error { return g.err }

// Config returns the configuration in use, defaults filled in.
func (g *Generator) Config() Config { return g.cfg }

// AgentID is the name of agent i (0-based) in a corpus of the given number
// of agents: "agent-007". KeywordQueries and the generator agree on it.
func AgentID(i, agents int) string {
	return "agent-" + pad(i, agents)
}

func pad(i, n int) string {
	w := max(3, len(strconv.Itoa(n-1)))
	s := strconv.Itoa(i)
	for len(s) < w {
		s = "0" + s
	}
	return s
}

func (g *Generator) planAgents() {
	r := g.r
	g.agents = make([]agentInfo, g.cfg.Agents)
	for i := range g.agents {
		a := &g.agents[i]
		a.id = AgentID(i, g.cfg.Agents)
		a.persons = pickDistinct(r, personsPerAgent, len(firstNames), func(k int) string { return firstNames[k] })
		n1, n2 := len(serviceParts1), len(serviceParts2)
		a.services = pickDistinct(r, servicesPerAgent, n1*n2, func(k int) string {
			return serviceParts1[k%n1] + "-" + serviceParts2[k/n1]
		})
		a.projects = pickDistinct(r, projectsPerAgent, len(projectNames), func(k int) string { return projectNames[k] })
		a.tags = pickDistinct(r, 4, len(topicTags), func(k int) string { return topicTags[k] })
	}
}

func pickDistinct(r *rand.Rand, n, of int, name func(int) string) []string {
	out := make([]string, 0, n)
	for _, k := range r.Perm(of)[:n] {
		out = append(out, name(k))
	}
	return out
}

func (g *Generator) planSessions() {
	r, cfg := g.r, g.cfg
	ns := cfg.Agents * cfg.Sessions
	span := int64(cfg.Span)
	starts := make([]int64, ns)
	for i := range starts {
		starts[i] = r.Int64N(span)
	}
	slices.Sort(starts)
	owner := make([]int32, ns)
	for i := range owner {
		owner[i] = int32(i / cfg.Sessions)
	}
	r.Shuffle(ns, func(i, j int) { owner[i], owner[j] = owner[j], owner[i] })

	// Log-normal burst sizes, scaled to sum to Records.
	w := make([]float64, ns)
	var sum float64
	for i := range w {
		w[i] = math.Exp(0.8 * r.NormFloat64())
		sum += w[i]
	}
	turns := make([]int32, ns)
	total := 0
	for i := range w {
		turns[i] = int32(float64(cfg.Records) * w[i] / sum)
		total += int(turns[i])
	}
	for ; total < cfg.Records; total++ {
		turns[r.IntN(ns)]++
	}

	g.sessions = make([]sessionPlan, ns)
	nextIdx := make([]int, cfg.Agents)
	base := cfg.Start.UnixNano()
	ord := 0
	for i := range g.sessions {
		sp := &g.sessions[i]
		a := owner[i]
		sp.agent = a
		sp.id = g.agents[a].id + "-s" + pad(nextIdx[a], cfg.Sessions)
		nextIdx[a]++
		sp.start = base + starts[i]
		sp.turns = turns[i]
		sp.first = ord
		ord += int(turns[i])
		sp.task = uint8(r.IntN(len(taskTypes)))
		sp.tag = uint8(r.IntN(len(g.agents[a].tags)))
		sp.focusS = uint8(r.IntN(servicesPerAgent))
		sp.focusJ = uint8(r.IntN(projectsPerAgent))
		// 15 s to 4 min between turns, squeezed so the session ends before
		// the next one starts: timestamps stay non-decreasing.
		gap := int64(15*time.Second) + r.Int64N(int64(225*time.Second))
		end := base + span
		if i+1 < ns {
			end = base + starts[i+1]
		}
		if sp.turns > 0 {
			gap = min(gap, (end-sp.start)/int64(sp.turns))
		}
		sp.gap = gap
	}
}

// turnTime is the timestamp of turn k of session sp: k gaps after the
// start, plus a jitter below half a gap derived from the ordinal (not from
// the random stream, so planning and generation agree on it).
func (sp *sessionPlan) turnTime(k int) int64 {
	t := sp.start + int64(k)*sp.gap
	if sp.gap > 1 {
		t += int64(mix64(uint64(sp.first+k)) % uint64(sp.gap/2))
	}
	return t
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// sessionOf returns the index of the session holding ordinal o.
func (g *Generator) sessionOf(o int) int {
	i, _ := slices.BinarySearchFunc(g.sessions, o, func(sp sessionPlan, o int) int {
		if sp.first+int(sp.turns) <= o {
			return -1
		}
		if sp.first > o {
			return 1
		}
		return 0
	})
	return i
}

func (g *Generator) planFacts() {
	r, cfg := g.r, g.cfg
	if cfg.FactRate <= 0 || cfg.Records == 0 {
		return
	}
	nf := int(math.Ceil(cfg.FactRate * float64(cfg.Records)))
	// Distinct ordinals (Floyd's sampling keeps it O(nf)).
	chosen := make(map[int]bool, nf)
	for j := cfg.Records - nf; j < cfg.Records; j++ {
		t := r.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
	}
	ords := make([]int, 0, nf)
	for o := range chosen {
		ords = append(ords, o)
	}
	slices.Sort(ords)

	type key struct {
		agent   int
		kind    *factKind
		subject string
	}
	used := make(map[key]bool, nf)
	for i, o := range ords {
		si := g.sessionOf(o)
		sp := &g.sessions[si]
		a := &g.agents[sp.agent]
		var f fact
		ok := false
		for try := 0; try < 32 && !ok; try++ {
			k := factKinds[r.IntN(len(factKinds))]
			subj := g.subjectFor(k, a)
			if !used[key{int(sp.agent), k, subj}] {
				used[key{int(sp.agent), k, subj}] = true
				f = fact{kind: k, subject: subj}
				ok = true
			}
		}
		if !ok {
			continue // every slot of this agent is taken: fewer facts
		}
		f.ordinal = o
		f.echo = -1
		f.agent = int(sp.agent)
		f.value = f.kind.value(r, a)
		f.stmt = r.IntN(len(f.kind.st))
		f.unix = sp.turnTime(o - sp.first)
		next := o + 1
		if cfg.EchoRate > 0 && r.Float64() < cfg.EchoRate && next < sp.first+int(sp.turns) &&
			(i+1 >= len(ords) || ords[i+1] != next) {
			f.echo = next
		}
		g.facts = append(g.facts, f)
	}
	g.byAgent = make([][]int, len(g.agents))
	for i := range g.facts {
		a := g.facts[i].agent
		g.byAgent[a] = append(g.byAgent[a], i)
	}
}

func (g *Generator) subjectFor(k *factKind, a *agentInfo) string {
	switch k.subject {
	case slotPerson:
		return a.persons[g.r.IntN(len(a.persons))]
	case slotService:
		return a.services[g.r.IntN(len(a.services))]
	case slotProject:
		return a.projects[g.r.IntN(len(a.projects))]
	default:
		return g.v.tech[g.r.IntN(len(g.v.tech))]
	}
}

// Next overwrites r with the next record and reports whether there was one.
// It returns false after cfg.Records records. The record's Text and Meta
// are new each call, so r may be copied and kept.
func (g *Generator) Next(r *Record) bool {
	if g.err != nil || g.n >= g.cfg.Records {
		return false
	}
	for g.turn >= int(g.sessions[g.si].turns) {
		g.si++
		g.turn = 0
		g.prevRole = ""
	}
	sp := &g.sessions[g.si]
	g.cur = &g.agents[sp.agent]
	g.focusS, g.focusJ = int(sp.focusS), int(sp.focusJ)
	g.buf = g.buf[:0]
	g.ents = g.ents[:0]
	g.fact = nil

	var role, intent string
	switch {
	case g.nextFact < len(g.facts) && g.facts[g.nextFact].ordinal == g.n:
		f := &g.facts[g.nextFact]
		g.fact = f
		role = RoleUser
		if g.prevRole == RoleUser {
			role = RoleAssistant
		}
		intent = f.kind.intent
		g.renderFact(f, f.kind.st[f.stmt])
		if f.echo >= 0 {
			g.echoFact = g.nextFact
		}
		g.nextFact++
	case g.echoFact >= 0 && g.facts[g.echoFact].echo == g.n:
		f := &g.facts[g.echoFact]
		g.fact = f
		role, intent = RoleAssistant, f.kind.intent
		g.render(f.kind.ec[g.r.IntN(len(f.kind.ec))])
		g.echoFact = -1
	default:
		role = g.nextRole()
		intent = g.renderFiller(sp, role)
	}

	r.Time = time.Unix(0, sp.turnTime(g.turn)).UTC()
	r.Agent = g.cur.id
	r.Session = sp.id
	r.Role = role
	r.Text = string(g.buf)
	r.Meta = g.meta(sp, intent)
	g.prevRole = role
	g.turn++
	g.n++
	return true
}

func (g *Generator) nextRole() string {
	switch g.prevRole {
	case "", RoleTool:
		if g.prevRole == "" {
			return RoleUser
		}
		return RoleAssistant
	case RoleUser:
		return RoleAssistant
	default:
		x := g.r.Float64()
		switch {
		case x < g.cfg.ToolRate:
			return RoleTool
		case x < g.cfg.ToolRate+0.1:
			return RoleAssistant
		default:
			return RoleUser
		}
	}
}

// renderFact writes a fact statement, sometimes wrapped in chit-chat so the
// decision is buried in ordinary talk.
func (g *Generator) renderFact(f *fact, t tmpl) {
	if g.r.IntN(3) == 0 {
		g.render(g.v.chitchat[g.r.IntN(len(g.v.chitchat))])
		g.buf = append(g.buf, ' ')
	}
	g.render(t)
	if g.r.IntN(3) == 0 {
		g.buf = append(g.buf, ' ')
		g.render(g.v.uInform[g.r.IntN(len(g.v.uInform))])
	}
}

func (g *Generator) pick(ts []tmpl) {
	g.render(ts[g.r.IntN(len(ts))])
}

func (g *Generator) sep() {
	if len(g.buf) > 0 {
		g.buf = append(g.buf, ' ')
	}
}

// renderFiller writes an ordinary turn and returns its intent.
func (g *Generator) renderFiller(sp *sessionPlan, role string) string {
	r := g.r
	if role == RoleTool {
		for k := g.count(0.8, 4); k > 0; k-- {
			if len(g.buf) > 0 {
				g.buf = append(g.buf, '\n')
			}
			g.pick(g.v.tool)
		}
		return "tool_result"
	}
	if g.cfg.CJKRate > 0 && r.Float64() < g.cfg.CJKRate {
		for k := g.count(2, 8); k > 0; k-- {
			g.pick(g.v.zh)
		}
		return "inform"
	}
	intent := ""
	if g.cfg.TalkRate > 0 && r.Float64() < g.cfg.TalkRate {
		// Talk about the topic of one of the agent's facts, without its value.
		if fs := g.byAgent[sp.agent]; len(fs) > 0 {
			f := &g.facts[fs[r.IntN(len(fs))]]
			talk := fact{kind: f.kind, subject: f.subject}
			g.fact = &talk
			g.pick(f.kind.tk)
			g.fact = nil
			intent = "inform"
		}
	}
	if role == RoleUser {
		if g.turn == 0 && r.IntN(5) < 4 {
			g.pick(g.v.greeting)
			intent = "greeting"
		}
		if g.cfg.AskRate > 0 && r.Float64() < g.cfg.AskRate {
			// A fact question asked in chat, without its answer.
			k := factKinds[r.IntN(len(factKinds))]
			ask := fact{kind: k, subject: g.subjectFor(k, g.cur)}
			g.sep()
			g.fact = &ask
			g.pick(k.qs)
			g.fact = nil
			intent = "question"
		}
		for k := g.count(2.3, 15); k > 0; k-- {
			g.sep()
			x := r.IntN(100)
			var in string
			switch {
			case x < 35:
				g.pick(g.v.uQuestion)
				in = "question"
			case x < 60:
				g.pick(g.v.uRequest)
				in = "request"
			case x < 80:
				g.pick(g.v.uInform)
				in = "inform"
			default:
				g.pick(g.v.chitchat)
				in = "chitchat"
			}
			if intent == "" || intent == "greeting" {
				intent = in
			}
		}
		return intent
	}
	for k := g.count(4, 15); k > 0; k-- {
		g.sep()
		x := r.IntN(100)
		var in string
		switch {
		case x < 50:
			g.pick(g.v.aAnswer)
			in = "answer"
		case x < 72:
			g.pick(g.v.aPlan)
			in = "plan"
		case x < 82:
			g.pick(g.v.aDecision)
			in = "decision"
		case x < 88:
			g.pick(g.v.chitchat)
			in = "chitchat"
		default:
			g.pick(g.v.aFollowup)
			in = "question"
		}
		if intent == "" {
			intent = in
		}
	}
	return intent
}

// count draws a number of sentences: 1 plus an exponential with the given
// mean, capped. Most turns are short and a few are long, as in real chat.
func (g *Generator) count(mean float64, maxN int) int {
	return min(1+int(g.r.ExpFloat64()*mean), maxN)
}

func (g *Generator) addEntity(s string) {
	for _, e := range g.ents {
		if e == s {
			return
		}
	}
	g.ents = append(g.ents, s)
}

// render appends one template to g.buf.
func (g *Generator) render(t tmpl) {
	r := g.r
	b := g.buf
	a := g.cur
	for _, p := range t {
		switch p.slot {
		case slotLit:
			b = append(b, p.lit...)
		case slotNoun:
			b = appendWord(b, g.v.nouns[g.zNoun.next()])
		case slotNouns:
			b = append(b, g.v.nounsPl[g.zNoun.next()]...)
		case slotAdj:
			b = appendWord(b, g.v.adjs[g.zAdj.next()])
		case slotGlue:
			b = append(b, g.v.glue[g.zGlue.next()]...)
		case slotVerb:
			b = append(b, g.v.verbs[g.zVerb.next()]...)
		case slotVerbS:
			b = append(b, g.v.verbsS[g.zVerb.next()]...)
		case slotVerbD:
			b = append(b, g.v.verbsD[g.zVerb.next()]...)
		case slotVerbG:
			b = append(b, g.v.vIng[g.zVerb.next()]...)
		case slotWord:
			switch x := r.IntN(20); {
			case x == 0:
				b = append(b, g.v.tail[g.zTail.next()]...)
			case x < 10:
				b = append(b, g.v.nouns[g.zNoun.next()]...)
			case x < 16:
				b = append(b, g.v.verbs[g.zVerb.next()]...)
			default:
				b = append(b, g.v.adjs[g.zAdj.next()]...)
			}
		case slotPerson:
			s := a.persons[g.zPerson.next()]
			g.addEntity(s)
			b = append(b, s...)
		case slotService:
			s := a.services[g.zService.next()]
			if r.IntN(2) == 0 {
				s = a.services[g.focusS]
			}
			g.addEntity(s)
			b = append(b, s...)
		case slotProject:
			s := a.projects[g.zProject.next()]
			if r.IntN(2) == 0 {
				s = a.projects[g.focusJ]
			}
			g.addEntity(s)
			b = append(b, s...)
		case slotTech:
			b = append(b, g.v.tech[g.zTech.next()]...)
		case slotTail:
			b = append(b, g.v.tail[g.zTail.next()]...)
		case slotID:
			b = appendID(b, r)
		case slotNum:
			b = strconv.AppendInt(b, int64(2+r.IntN(98)), 10)
		case slotBig:
			b = strconv.AppendInt(b, int64(100+r.IntN(99900)), 10)
		case slotMS:
			b = strconv.AppendInt(b, int64(1+r.ExpFloat64()*120), 10)
		case slotPct:
			b = strconv.AppendInt(b, int64(r.IntN(101)), 10)
		case slotDay:
			b = append(b, weekdays[r.IntN(len(weekdays))]...)
		case slotDate:
			b = append(b, monthNames[r.IntN(12)]...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(1+r.IntN(28)), 10)
		case slotHour:
			b = strconv.AppendInt(b, int64(1+r.IntN(11)), 10)
			if r.IntN(2) == 0 {
				b = append(b, "am"...)
			} else {
				b = append(b, "pm"...)
			}
		case slotDB:
			b = append(b, dbNames[r.IntN(len(dbNames))]...)
		case slotLang:
			b = append(b, langNames[r.IntN(len(langNames))]...)
		case slotZhNoun:
			b = append(b, g.v.zhNouns[r.IntN(len(g.v.zhNouns))]...)
		case slotZhVerb:
			b = append(b, g.v.zhVerbs[r.IntN(len(g.v.zhVerbs))]...)
		case slotZhAdj:
			b = append(b, g.v.zhAdjs[r.IntN(len(g.v.zhAdjs))]...)
		case slotZhDay:
			b = append(b, "一二三四五"[3*r.IntN(5):][:3]...)
		case slotSubj:
			if g.fact != nil {
				if g.fact.kind.subject != slotTech {
					g.addEntity(g.fact.subject)
				}
				b = append(b, g.fact.subject...)
			}
		case slotVal:
			if g.fact != nil {
				if g.fact.kind.name == "oncall" {
					g.addEntity(g.fact.value)
				}
				b = append(b, g.fact.value...)
			}
		}
	}
	g.buf = b
}

// appendWord appends w, turning a preceding article "a" into "an" before a
// vowel.
func appendWord(b []byte, w string) []byte {
	if n := len(b); n >= 2 && b[n-1] == ' ' && (b[n-2] == 'a' || b[n-2] == 'A') &&
		(n == 2 || b[n-3] == ' ') && vowelSound(w) {
		b = append(b[:n-1], 'n', ' ')
	}
	return append(b, w...)
}

// vowelSound approximates "an" words: a vowel letter, except the "you"
// sound of user, usage, unique; and the silent h of hour, honest.
func vowelSound(w string) bool {
	switch {
	case strings.HasPrefix(w, "hour") || strings.HasPrefix(w, "honest"):
		return true
	case w[0] == 'u':
		return strings.HasPrefix(w, "un") && !strings.HasPrefix(w, "uni") ||
			strings.HasPrefix(w, "up") || strings.HasPrefix(w, "ug") || strings.HasPrefix(w, "ul") || strings.HasPrefix(w, "um")
	case w[0] == 'e' && strings.HasPrefix(w, "eu"):
		return false
	}
	return strings.IndexByte("aeio", w[0]) >= 0
}

const hexDigits = "0123456789abcdef"

// appendID appends a fresh identifier of the kinds that fill real chat
// logs: session ids, tickets, versions, pull requests, trace ids.
func appendID(b []byte, r *rand.Rand) []byte {
	switch r.IntN(6) {
	case 0:
		b = append(b, "sess_"...)
		return appendHex(b, r, 4)
	case 1:
		b = append(b, "TKT-"...)
		return strconv.AppendInt(b, int64(1000+r.IntN(9000)), 10)
	case 2:
		b = append(b, 'v')
		b = strconv.AppendInt(b, int64(r.IntN(5)), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(r.IntN(20)), 10)
		b = append(b, '.')
		return strconv.AppendInt(b, int64(r.IntN(10)), 10)
	case 3:
		b = append(b, "PR-"...)
		return strconv.AppendInt(b, int64(100+r.IntN(4900)), 10)
	case 4:
		b = append(b, "req_"...)
		return appendHex(b, r, 8)
	default:
		b = append(b, "build-"...)
		return strconv.AppendInt(b, int64(r.IntN(10000)), 10)
	}
}

func appendHex(b []byte, r *rand.Rand, n int) []byte {
	x := r.Uint64()
	for ; n > 0; n-- {
		b = append(b, hexDigits[x&15])
		x >>= 4
	}
	return b
}

// meta builds the record's metadata: one map and one backing array.
func (g *Generator) meta(sp *sessionPlan, intent string) map[string][]string {
	tags := 1
	extra := ""
	if g.r.IntN(3) == 0 {
		extra = topicTags[g.r.IntN(len(topicTags))]
		if extra != g.cur.tags[sp.tag] {
			tags = 2
		}
	}
	back := make([]string, 0, tags+len(g.ents)+2)
	back = append(back, g.cur.tags[sp.tag])
	if tags == 2 {
		back = append(back, extra)
	}
	back = append(back, g.ents...)
	back = append(back, intent, taskTypes[sp.task])
	m := make(map[string][]string, 4)
	m["tags"] = back[:tags:tags]
	ne := tags + len(g.ents)
	if len(g.ents) > 0 {
		m["entities"] = back[tags:ne:ne]
	}
	m["intent"] = back[ne : ne+1 : ne+1]
	m["task_type"] = back[ne+1 : ne+2 : ne+2]
	return m
}

// Queries returns up to n questions about the planted facts, with the
// ordinals of the records that state (and, for echoed facts, confirm) them.
// It depends only on the Config and n, so it may be called before, during or
// after generation. Kinds rotate over "planted" (direct wording),
// "paraphrase" (different wording: the fact's marker words do not appear)
// and "temporal" (direct wording plus a 7-day [Since, Until) window that
// contains the fact). At most 3 queries per fact: fewer than n when the
// corpus has fewer than n/3 facts.
func (g *Generator) Queries(n int) []Query {
	if g.err != nil || len(g.facts) == 0 || n <= 0 {
		return nil
	}
	n = min(n, 3*len(g.facts))
	// A separate stream: asking for queries never shifts the records.
	r := rand.New(rand.NewPCG(uint64(g.cfg.Seed), 0x717565726965730a))
	perm := r.Perm(len(g.facts))
	out := make([]Query, 0, n)
	kinds := [3]string{"planted", "paraphrase", "temporal"}
	var b []byte
	for j := 0; j < n; j++ {
		fi := perm[j%len(g.facts)]
		f := &g.facts[fi]
		kind := kinds[(fi+j/len(g.facts))%3]
		ts := f.kind.qs
		if kind == "paraphrase" {
			ts = f.kind.ps
		}
		b = renderQuestion(b[:0], ts[r.IntN(len(ts))], f)
		q := Query{
			Text:     string(b),
			Agent:    g.agents[f.agent].id,
			Relevant: []int{f.ordinal},
			Kind:     kind,
			Answer:   f.value,
			Fact:     f.kind.name,
		}
		if f.echo >= 0 {
			q.Relevant = append(q.Relevant, f.echo)
		}
		if kind == "temporal" {
			// Window of 7 days holding the fact (and its echo, one turn
			// later), placed at random around it and clipped to the span.
			lo := g.cfg.Start.UnixNano()
			week := int64(7 * 24 * time.Hour)
			since := f.unix - r.Int64N(int64(6*24*time.Hour))
			since = max(since, lo)
			q.Since = time.Unix(0, since).UTC()
			q.Until = time.Unix(0, since+week).UTC()
		}
		out = append(out, q)
	}
	return out
}

func renderQuestion(b []byte, t tmpl, f *fact) []byte {
	for _, p := range t {
		switch p.slot {
		case slotSubj:
			b = append(b, f.subject...)
		case slotVal:
			b = append(b, f.value...)
		default:
			b = append(b, p.lit...)
		}
	}
	return b
}

// Records generates the whole corpus of cfg in memory.
func Records(cfg Config) ([]Record, error) {
	g := New(cfg)
	if g.err != nil {
		return nil, g.err
	}
	out := make([]Record, 0, g.cfg.Records)
	var r Record
	for g.Next(&r) {
		out = append(out, r)
	}
	return out, nil
}

// Facts returns the number of planted facts.
func (g *Generator) Facts() int { return len(g.facts) }
