package consolidate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
