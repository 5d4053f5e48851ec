package consolidate

// The action item rule of Label: a named or first-person owner with a
// commitment, in English and Chinese.

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

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
	t, ok := commitment(s)
	if ok && inMeetingAct.MatchString(t.Content) {
		// Unless it is due later ("send the notes to the chat group by
		// Friday"): then it is work after the meeting.
		if _, due := ResolveDate(s, time.Time{}); !due {
			return Tag{}, false
		}
	}
	return t, ok
}

// inMeetingAct matches a task done in the meeting itself, while it is
// said: a link dropped in the chat, a screen shared, a slide pulled up
// ("I'll drop the link in the chat", "我共享一下屏幕"). Such a commitment
// is kept by the next sentence; as an action item it would crowd core
// memory (five of the meeting demo's thirteen live units were "drop the
// link in the chat").
var inMeetingAct = regexp.MustCompile(`(?i)\b(in|into|to|on) the (zoom |meeting |group )?chat\b|\bshare (my|the|your|his|her) screen\b|\bscreen ?shar|\bpull (it |that |this |them )?up\b|\b(next|previous|last) slide\b|\bgo back (a|one) slide\b|\b(re)?join the call\b|\breconnect\b|\b(un)?mute\b|共享(一下)?屏幕|共享(一下)?桌面|(发|贴|放)(到|在)(聊天|会议聊天|评论区)|聊天框|聊天区|翻(回|到)(前|上|下)一?页|重新连|重连一下|静音`)

// commitment finds an action item in the sentence s (actionItem's rules
// but the in-meeting acts).
func commitment(s string) (Tag, bool) {
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
