package consolidate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// Tag is one type label found in a text by rule: which kind of unit the
// text carries, the trigger that fired, the content after it, and for an
// action item the owner named in the text.
type Tag struct {
	// Type is the label.
	Type Type
	// Trigger is the matched cue ("decided to", "负责", "prefer").
	Trigger string
	// Content is the statement the cue introduces, trimmed of the cue and
	// of leading connectives ("that", "了，").
	Content string
	// Owner is the person an action item names: a name taken from the text,
	// or OwnerSpeaker for a first-person commitment ("I'll", "我来负责"),
	// or "" when the text names nobody. Empty for other types.
	Owner string
	// Sentence is the sentence the cue was found in.
	Sentence string
}

// OwnerSpeaker is Tag.Owner for a first-person commitment: the owner is
// whoever said it, which the text itself does not name.
const OwnerSpeaker = "speaker"

// Label returns the type labels the rules find in text, at most one per
// type, in the order decision, action item, preference, outcome, fact.
//
// The rules work sentence by sentence and skip a sentence that is a
// question ("Did we agree...?", "...吗"), a hypothetical ("if we decide",
// "要是决定"), tentative ("maybe", "可能") or a proposal ("I suggest",
// "建议"), or that negates the cue ("we haven't decided", "不同意", "I don't
// prefer either"). Decisions need a
// decision cue with a subject or a colon ("we agreed", "decision:", "决定",
// "确定了", "达成共识"): a bare "agreed" is a back-channel. Action items need
// a named or first-person owner with a commitment ("Alice will", "I'll",
// "Dave is assigned to", "张伟负责", "交给刘洋", a name followed by a due
// time). Preferences need a liking cue that is not negated ("I prefer",
// "my favourite ... is", "更喜欢", "偏好"). Outcomes need a completion cue
// ("shipped", "merged", "上线了"); facts a number or a date in a sentence
// that is neither a question nor tentative.
//
// The rules were written on the dev half of testdata/labels.jsonl; their
// precision and recall on the held-back half are logged by
// TestHeldBackPrecisionRecall.
func Label(text string) []Tag {
	var found [TypeFact + 1]*Tag
	factAt := ""
	for _, s := range sentences(text) {
		// Whether the sentence is a question or tentative is asked only
		// once a rule fires: most sentences fire none.
		checked, skip := false, false
		if factAt == "" && mayHoldFact(s) {
			if loc := factRe.FindStringIndex(asciiLower(s)); loc != nil && !isQuestion(s) && !isTentative(s) {
				factAt = s[loc[0]:loc[1]]
			}
		}
		for _, t := range []Type{TypeDecision, TypeActionItem, TypePreference, TypeOutcome} {
			if found[t] != nil {
				continue
			}
			tag, ok := ruleFor(t)(s)
			if !ok {
				continue
			}
			if !checked {
				checked, skip = true, isQuestion(s) || isTentative(s)
			}
			if skip {
				break
			}
			tag.Type, tag.Sentence = t, s
			found[t] = &tag
		}
	}
	if found[TypeDecision] == nil && found[TypeActionItem] == nil && found[TypePreference] == nil && found[TypeOutcome] == nil && factAt != "" {
		found[TypeFact] = &Tag{Type: TypeFact, Trigger: factAt, Content: cleanContent(text), Sentence: text}
	}
	var out []Tag
	for _, t := range Types {
		if found[t] != nil {
			out = append(out, *found[t])
		}
	}
	return out
}

// Gates: a rule's regular expressions run only when the sentence holds one
// of its cue words. Go's regexp backtracks over these large alternations;
// the gates cut the cost of a sentence with no cue (most of them) from
// hundreds of microseconds to a few (BenchmarkValue).
var (
	gateDecision = []string{"decid", "decision", "agree", "go with", "going with", "final", "settled", "决定", "同意", "确定",
		"定下来", "拍板", "共识", "就这么定", "就这样定", "定了", "定在", "定于", "move", "push", "postpone", "slip", "delay",
		"change", "brought forward", "pulled in", "推迟", "延期", "延后", "提前", "改", "调整", "挪"}
	gatePreference = []string{"prefer", "like", "love", "rather", "favo", "喜欢", "偏好", "偏爱", "倾向"}
	gateOutcome    = []string{"done", "finish", "complet", "live", "deploy", "merge", "ship", "fix", "resolv", "launch",
		"releas", "close", "完成", "上线了", "已上线", "搞定了", "合并", "发布了", "修好了", "解决了"}
)

func gate(lower string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// mayHoldFact gates factRe: a digit, a Chinese numeral, or a month or day
// name.
func mayHoldFact(text string) bool {
	return strings.ContainsAny(text, "0123456789零一二三四五六七八九十百千万两") || gate(asciiLower(text), factWords)
}

var factWords = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september",
	"october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

func ruleFor(t Type) func(string) (Tag, bool) {
	switch t {
	case TypeDecision:
		return decision
	case TypeActionItem:
		return actionItem
	case TypePreference:
		return preference
	default:
		return outcome
	}
}

// sentences splits on sentence punctuation, keeping a question mark with
// its sentence so isQuestion can see it.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		switch r {
		case '.', '!', '?', ';', '。', '！', '？', '；', '\n':
			// A period inside a number or an abbreviation-like token
			// ("v1.2", "3.5") does not end a sentence.
			if r == '.' && i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' {
				continue
			}
			end := i + utf8.RuneLen(r)
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

var (
	enQuestionStart = regexp.MustCompile(`^(are|is|was|were|do|does|did|will|would|should|shall|can|could|has|have|had|what|when|where|who|whom|which|why|how|any|anyone|anybody)\b`)
	zhQuestionEnd   = regexp.MustCompile(`[吗呢][\s。!！]*$`)
	zhQuestionWords = regexp.MustCompile(`是不是|要不要|会不会|能不能|有没有|做不做|行不行|对不对|还是.*还是`)
	tentativeRe     = regexp.MustCompile(`\b(if|suppose|supposing|assuming|unless|maybe|perhaps|might|could|whether|i suggest|we suggest|i propose|i recommend)\b|如果|要是|假如|假设|万一|或许|也许|可能|是否|建议|提议`)
)

func isQuestion(s string) bool {
	s = strings.TrimSpace(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if last == '?' || last == '？' {
		return true
	}
	return enQuestionStart.MatchString(asciiLower(s)) || zhQuestionEnd.MatchString(s) || zhQuestionWords.MatchString(s)
}

func isTentative(s string) bool { return tentativeRe.MatchString(asciiLower(s)) }

// asciiLower folds ASCII letters only, so byte offsets into the result are
// offsets into s: the English patterns are written in lower case and run
// on the folded text (case-insensitive patterns cost Go's regexp several
// times more), and matches are sliced from the original.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// --- decision ---

var (
	// A decision verb needs a subject ("we agreed"), or stands at the start
	// of a clause with a colon after it ("Agreed: ...").
	decisionEN    = regexp.MustCompile(`\b(?:we|we've|we have|we're|we are|the team|team|everyone|everybody|they|i|all|[a-z]+)\s+(?:all\s+|both\s+|have\s+|has\s+|had\s+|just\s+|finally\s+)*(?:decided|agreed)\b|^(?:ok,?\s+|so\s+|right,?\s+)?(?:agreed|decided)\s*:|\b(?:let'?s|we'?ll|we will|we'?re|we are)\s+(?:go|going)\s+with\b|\b(?:the\s+)?decision(?:\s+is)?\s*:|\bfinal (?:call|decision|answer)\s*:|\bsettled on\b|\b(?:that's|that is|it's|it is)\s+(?:settled|decided|final)\b`)
	decisionENNeg = regexp.MustCompile(`\b(?:nobody|no one|not|never|n't|haven't|hasn't|didn't|don't|no)\s+(?:yet\s+)?(?:decide|decided|agree|agreed|settled)\b|\bnot\s+(?:been\s+)?(?:decided|settled|agreed)\b|\bdisagree|\bnothing\b.*\b(?:settled|decided|agreed)\b|\blet'?s not\b|\byet\b`)
	decisionZH    = regexp.MustCompile(`达成(?:了)?共识|一致同意|就这么定|就这样定|就这样决定|就这么决定|定下来|拍板|决定|同意|确定|定了|定在|定于`)
	decisionZHNeg = regexp.MustCompile(`不同意|没同意|还没|没有定|没定|未定|不确定|没确定|再议|再讨论|有分歧|你们决定|你来决定|还会变|不一定`)
	prefTrimEN    = regexp.MustCompile(`(?i)^(?:[\s,:;-]|then\b|that\b|is\b)+`)
	leadTrimEN    = regexp.MustCompile(`(?i)^(?:[\s,:;-]|then\b|that\b|to\b|on\b|upon\b|is\b)+`)
)

// leadTrimZH are connectives between a cue and its content.
const leadTrimZH = "了：:，,、 的吧就那也还是"

// changeZH and changeEN are revisions of a plan stated as a fact ("上线时间
// 推迟到二十二号", "the launch moved to March"): a decision whose content is
// the whole clause, subject included.
var (
	changeZH = regexp.MustCompile(`(?:推迟|延期|延后|提前|改|调整|挪)(?:到|成|为|至)`)
	changeEN = regexp.MustCompile(`\b(?:moves|moved|pushed|postponed|slips|slipped|delayed|changed|brought forward|pulled in)\s+(?:back\s+)?(?:to|until|till)\b`)
	// leadClause is a back-reference or filler clause before a statement.
	leadClause = regexp.MustCompile(`(?i)^(?:ok|okay|so|好|好的|那|那么|嗯|对)[,，\s]+|^[^,，]*(?:said|discussed|mentioned|说的|提到的|讲的)[,，]\s*`)
)

func decision(s string) (Tag, bool) {
	low := asciiLower(s)
	if !gate(low, gateDecision) {
		return Tag{}, false
	}
	if t, ok := decisionCue(s, low); ok {
		return t, true
	}
	for _, re := range []*regexp.Regexp{changeZH, changeEN} {
		if loc := re.FindStringIndex(low); loc != nil && loc[0] > 0 {
			if decisionENNeg.MatchString(low) || decisionZHNeg.MatchString(s) {
				return Tag{}, false
			}
			c := s
			for {
				d := leadClause.ReplaceAllString(c, "")
				if d == c {
					break
				}
				c = d
			}
			if c = cleanContent(c); c == "" {
				return Tag{}, false
			}
			return Tag{Trigger: s[loc[0]:loc[1]], Content: c}, true
		}
	}
	return Tag{}, false
}

func decisionCue(s, low string) (Tag, bool) {
	if loc := decisionEN.FindStringIndex(low); loc != nil {
		if decisionENNeg.MatchString(low) {
			return Tag{}, false
		}
		c := leadTrimEN.ReplaceAllString(s[loc[1]:], "")
		c = strings.TrimPrefix(c, "go with ")
		if c = cleanContent(c); c == "" {
			return Tag{}, false
		}
		return Tag{Trigger: strings.TrimSpace(s[loc[0]:loc[1]]), Content: c}, true
	}
	if loc := decisionZH.FindStringIndex(s); loc != nil {
		if decisionZHNeg.MatchString(s) {
			return Tag{}, false
		}
		c := cleanContent(strings.TrimLeft(s[loc[1]:], leadTrimZH))
		if c == "" { // "年会放在三亚，就这么定了"
			c = cleanContent(strings.TrimRight(s[:loc[0]], leadTrimZH))
		}
		if c == "" {
			return Tag{}, false
		}
		return Tag{Trigger: s[loc[0]:loc[1]], Content: c}, true
	}
	return Tag{}, false
}

// --- action item ---

// notNames are capitalized words that start sentences but never name an
// owner.
var notNames = map[string]bool{
	"the": true, "it": true, "we": true, "they": true, "he": true, "she": true, "that": true, "this": true,
	"there": true, "these": true, "those": true, "what": true, "who": true, "legal": true, "nobody": true,
	"everyone": true, "everybody": true, "someone": true, "somebody": true, "maybe": true, "i": true, "you": true,
	"our": true, "my": true, "your": true, "ok": true, "okay": true, "so": true, "then": true, "and": true,
	"but": true, "yes": true, "no": true, "sure": true, "finance": true, "sales": true, "ops": true, "team": true,
	"which": true, "todo": true, "action": true, "also": true, "next": true, "tomorrow": true, "today": true,
}

var (
	// Verbs after "will" that predict or describe rather than commit.
	notCommit = map[string]bool{"be": true, "probably": true, "never": true, "likely": true, "not": true,
		"see": true, "have": true, "need": true, "ask": true, "want": true, "know": true, "get": true, "come": true,
		"go": true, "say": true, "think": true, "feel": true, "find": true, "notice": true, "rain": true}

	actionFirstEN = regexp.MustCompile(`\b(?:i'll|i will|i'm going to|i am going to|i can take|i'll take|i'm on it)\b\s*(\w*)`)
	actionNamedEN = regexp.MustCompile(`\b([A-Z][a-z]+)\s+(will|is going to|is assigned to|is responsible for|is on point for|is taking the action to|is taking|is owning|owns|is in charge of|to)\s+(\w+)`)
	actionTagEN   = regexp.MustCompile(`\b(?:assigned to|action item for|action items? for|action for|owner:?|todo:?\s*for)\s+([a-z]+)\s*[:,-]\s*`)
	actionVocEN   = regexp.MustCompile(`^([A-Z][a-z]+),\s+(?:you own|you're on|you are on|please take the action to|please take|please own|please)\s+`)
	actionPrefix  = regexp.MustCompile(`(?i)^(?:todo|action item|action|ai|next step)s?\s*:\s*`)

	actionZHOwner = regexp.MustCompile(`负责|交给|跟进|待办`)
	zhTimeRe      = regexp.MustCompile(`^(?:在)?(?:今天|明天|后天|今晚|明早|明晚|明天上午|明天下午|下周[一二三四五六日天]?|本周内?|这周|周[一二三四五六日天]|月底|本月|这个月|下个月|年底|[一二三四五六七八九十两\d]+(?:月|号|日|点))[^，,。把]{0,8}?(?:之前|以前|前|内|上午|下午|晚上|中午|点)?`)
	latinNameEnd  = regexp.MustCompile(`(?:^|[^A-Za-z])([A-Z][a-z]+)\s*$`)
	zhVerbLead    = regexp.MustCompile(`^(?:会在|会|在|来|你来|你|他|她|请你|将)`)
)

// chineseSurnames are the common single-character surnames: a Chinese
// name in a transcript is one of them followed by one or two characters.
const chineseSurnames = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"

// nameStop are characters that end a name: a third character from this set
// belongs to what follows ("高原来写" is 高原 + 来写).
const nameStop = "来会在把明下本今周月请负跟你将说要也就和跟给已都去"

// zhNameAt returns the Chinese name starting at s (surname + 1-2 chars), or "".
func zhNameAt(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !strings.ContainsRune(chineseSurnames, r) {
		return ""
	}
	rest := s[n:]
	r2, n2 := utf8.DecodeRuneInString(rest)
	if n2 == 0 || !analysis.IsCJK(r2) || strings.ContainsRune(nameStop, r2) {
		return ""
	}
	name := s[:n+n2]
	r3, n3 := utf8.DecodeRuneInString(rest[n2:])
	if n3 > 0 && analysis.IsCJK(r3) && !strings.ContainsRune(nameStop, r3) {
		// A third character is taken only when a cue or a stop follows it,
		// so "张伟负责" stays 张伟 and "欧阳娜娜" is not guessed at.
		after := rest[n2+n3:]
		if actionZHOwner.MatchString(firstRunes(after, 2)) || startsWithStop(after) {
			name = s[:n+n2+n3]
		}
	}
	return name
}

func firstRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func startsWithStop(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && (strings.ContainsRune(nameStop, r) || r == '，')
}

// zhNameBefore returns the name ending at the end of s, looking back over
// a "请"/"由" prefix: "后续由黄磊" -> 黄磊.
func zhNameBefore(s string) string {
	rs := []rune(s)
	for k := 3; k >= 2; k-- {
		if len(rs) < k {
			continue
		}
		cand := string(rs[len(rs)-k:])
		if zhNameAt(cand) == cand {
			return cand
		}
	}
	return ""
}

func actionItem(s string) (Tag, bool) {
	body := actionPrefix.ReplaceAllString(s, "")
	lowBody := asciiLower(body)
	if m := actionTagEN.FindStringSubmatchIndex(lowBody); m != nil && !notNames[lowBody[m[2]:m[3]]] {
		if c := cleanContent(body[m[1]:]); c != "" {
			return Tag{Trigger: strings.TrimSpace(body[m[0]:m[3]]), Owner: body[m[2]:m[3]], Content: c}, true
		}
	}
	if m := actionVocEN.FindStringSubmatchIndex(body); m != nil {
		if c := cleanContent(body[m[1]:]); c != "" {
			return Tag{Trigger: strings.TrimSpace(body[m[3]:m[1]]), Owner: body[m[2]:m[3]], Content: c}, true
		}
	}
	for _, m := range actionNamedEN.FindAllStringSubmatchIndex(body, -1) {
		name, verb, next := body[m[2]:m[3]], body[m[4]:m[5]], body[m[6]:m[7]]
		if notNames[strings.ToLower(name)] || notCommit[strings.ToLower(next)] {
			continue
		}
		if verb == "to" && m[2] != 0 { // "Sam to write": only at the start
			continue
		}
		start := m[5]
		if verb == "will" || verb == "to" || verb == "is going to" {
			start = m[6]
		}
		if c := cleanContent(leadTrimEN.ReplaceAllString(body[start:], "")); c != "" {
			return Tag{Trigger: verb, Owner: name, Content: c}, true
		}
	}
	if m := actionFirstEN.FindStringSubmatchIndex(lowBody); m != nil {
		next := lowBody[m[2]:m[3]]
		if !notCommit[next] {
			c := body[m[1]-len(next):]
			if strings.HasPrefix(strings.ToLower(c), "take care of ") {
				c = c[len("take care of "):]
			}
			if c = cleanContent(c); c != "" {
				return Tag{Trigger: strings.TrimSpace(body[m[0]:m[2]]), Owner: OwnerSpeaker, Content: c}, true
			}
		}
	}
	return actionZH(body)
}

func actionZH(s string) (Tag, bool) {
	// Vocative: "孙丽，你来负责..." / "韩梅，请你..."
	vocative := ""
	if name := zhNameAt(s); name != "" {
		rest := s[len(name):]
		if strings.HasPrefix(rest, "，") || strings.HasPrefix(rest, ",") {
			vocative = name
		}
	}
	if loc := actionZHOwner.FindStringIndex(s); loc != nil {
		cue := s[loc[0]:loc[1]]
		before, after := s[:loc[0]], s[loc[1]:]
		owner := ""
		switch {
		case cue == "交给":
			owner = zhNameAt(after)
			after = after[len(owner):]
		case cue == "待办":
			after = strings.TrimLeft(after, "：: ")
			owner = zhNameAt(after)
			after = after[len(owner):]
			if rest := strings.TrimLeft(after, " "); strings.HasPrefix(rest, "跟进") {
				after = rest
			}
		case strings.HasSuffix(before, "我来") || strings.HasSuffix(before, "我") || strings.HasSuffix(before, "我会"):
			owner = OwnerSpeaker
		case vocative != "":
			owner = vocative
		default:
			b := strings.TrimSuffix(strings.TrimSuffix(before, "来"), "会")
			if owner = zhNameBefore(b); owner == "" {
				// A Latin name in Chinese speech: "Alice 负责定价页面".
				if m := latinNameEnd.FindStringSubmatch(b); m != nil && !notNames[strings.ToLower(m[1])] {
					owner = m[1]
				}
			}
		}
		if owner == "" {
			return Tag{}, false
		}
		if cue == "跟进" {
			after = cue + after
		}
		if c := zhTaskContent(after); c != "" {
			return Tag{Trigger: cue, Owner: owner, Content: c}, true
		}
		return Tag{}, false
	}
	// A name, then a due time or a commitment, then the task:
	// "陈晨下周一之前把接口文档补齐", "周敏会在周五前把设计稿发出来".
	owner, rest := vocative, ""
	if owner != "" {
		rest = strings.TrimLeft(s[len(owner):], "，, ")
		rest = strings.TrimPrefix(rest, "请你")
		rest = strings.TrimPrefix(rest, "请")
	} else if owner = zhNameAt(s); owner != "" {
		rest = s[len(owner):]
	} else if strings.HasPrefix(s, "请") {
		if owner = zhNameAt(s[len("请"):]); owner != "" {
			rest = s[len("请")+len(owner):]
		}
	}
	if owner == "" {
		return Tag{}, false
	}
	lead := zhVerbLead.FindString(rest)
	rest2 := rest[len(lead):]
	due := zhTimeRe.FindString(rest2)
	rest2 = strings.TrimPrefix(rest2[len(due):], "把")
	if due == "" && lead == "" && vocative == "" {
		return Tag{}, false
	}
	if c := zhTaskContent(rest); c != "" && rest2 != "" {
		return Tag{Trigger: strings.TrimSpace(lead + due), Owner: owner, Content: c}, true
	}
	return Tag{}, false
}

// zhTaskContent trims a task clause: leading connectives, a commitment
// word and a due time, so "，周五前给出测试报告" becomes "给出测试报告".
func zhTaskContent(s string) string {
	s = strings.TrimLeft(s, leadTrimZH)
	for range 3 {
		before := s
		s = strings.TrimLeft(s, "，, ")
		s = s[len(zhVerbLead.FindString(s)):]
		s = s[len(zhTimeRe.FindString(s)):]
		if s == before {
			break
		}
	}
	return cleanContent(s)
}

// --- preference ---

var (
	preferenceEN    = regexp.MustCompile(`\b(?:prefer|prefers|preferred)\b|\b(?:i|we|they|he|she|users|customers|client|everyone|team)\s+(?:really\s+|also\s+|all\s+)?(?:like|likes|love|loves)\b|\b(?:i'?d|i would|we'?d|we would)\s+rather\b|\b(?:my|our|their|his|her|the team's|the client's)\s+preference\s+is\b|\bfavou?rite\b[^.,;]*?\b(?:is|are)\b`)
	preferenceENNeg = regexp.MustCompile(`\b(?:don't|doesn't|didn't|do not|does not|not|never|nobody|no one|neither|either)\b[^.,;]{0,20}\b(?:prefer|like|love|rather)|\b(?:prefer|rather)\s+not\b|\beither\b`)
	preferenceZH    = regexp.MustCompile(`(?:更|最|比较|还是|很|特别|都)?(?:喜欢|偏好|偏爱|倾向于|倾向)`)
	preferenceZHNeg = regexp.MustCompile(`不(?:太|是很|怎么|大)?(?:喜欢|偏好)|无所谓|都行|喜欢不喜欢|没有偏好`)
)

func preference(s string) (Tag, bool) {
	low := asciiLower(s)
	if !gate(low, gatePreference) {
		return Tag{}, false
	}
	if loc := preferenceEN.FindStringIndex(low); loc != nil {
		if preferenceENNeg.MatchString(low) {
			return Tag{}, false
		}
		// "to" stays: "I'd prefer to pair" prefers the pairing.
		c := prefTrimEN.ReplaceAllString(s[loc[1]:], "")
		if c = cleanContent(c); c == "" {
			return Tag{}, false
		}
		return Tag{Trigger: strings.TrimSpace(s[loc[0]:loc[1]]), Content: c}, true
	}
	if loc := preferenceZH.FindStringIndex(s); loc != nil {
		// Negation before the first cue only: "喜欢飞书，不太喜欢钉钉" is a
		// preference.
		if neg := preferenceZHNeg.FindStringIndex(s); neg != nil && neg[0] <= loc[1] {
			return Tag{}, false
		}
		c := cleanContent(strings.TrimLeft(s[loc[1]:], leadTrimZH))
		if c == "" {
			return Tag{}, false
		}
		return Tag{Trigger: s[loc[0]:loc[1]], Content: c}, true
	}
	return Tag{}, false
}

// --- outcome and fact ---

var (
	outcomeRe    = regexp.MustCompile(`\b(?:is|are|was|were|it's|all|now)\s+(?:done|finished|complete|completed|live|deployed|merged|shipped|fixed|resolved)\b|\b(?:we|they|i|[a-z]+)\s+(?:have\s+|has\s+|just\s+|finally\s+)*(?:shipped|merged|launched|released|deployed|finished|completed|fixed|closed)\b|\bwent live\b|^done\b|已经?完成|完成了|上线了|已上线|搞定了|已合并|合并了|发布了|修好了|解决了`)
	outcomeNeg   = regexp.MustCompile(`\bnot\b|\bn't\b|没有?完成|还没|未完成|没上线|没搞定`)
	factRe       = regexp.MustCompile(`\d|[零一二三四五六七八九十百千万两]+(?:月|号|日|点|万|千|百|个|天|周|年|元|块)|百分之|\b(?:january|february|march|april|may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	trailingJunk = regexp.MustCompile(`[\s,，、;；:：.。!！?？"'“”]+$`)
)

func outcome(s string) (Tag, bool) {
	low := asciiLower(s)
	if !gate(low, gateOutcome) {
		return Tag{}, false
	}
	loc := outcomeRe.FindStringIndex(low)
	if loc == nil || outcomeNeg.MatchString(low) {
		return Tag{}, false
	}
	return Tag{Trigger: strings.TrimSpace(s[loc[0]:loc[1]]), Content: cleanContent(s)}, true
}

// cleanContent trims spaces and trailing punctuation.
func cleanContent(s string) string {
	s = strings.TrimSpace(s)
	s = trailingJunk.ReplaceAllString(s, "")
	s = strings.TrimLeftFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '，' || r == ',' || r == '：' || r == ':' })
	return s
}
