package engine

import (
	"strings"
	"unicode/utf8"
)

// The second person as the speaker of the asked words ("你建议我怎么调整
// 作息？", "你说我膝盖外侧疼可能是什么原因？", "what did you recommend?"):
// the question asks for what the assistant said, and its first person is
// the object ("建议我", "told me"), not the speaker. Such a question names
// the role "assistant" (boosted like a named speaker) instead of the user.

// youVerbs are the verbs of saying and advising that follow 你/您 (after
// at most youGap characters: "你之前推荐", "你上次说").
var youVerbs = []string{"说", "讲", "建议", "推荐", "提醒", "告诉", "让我", "叫我", "教", "提到", "提过", "给了", "给的", "给我", "介绍", "安排"}

// youVerbsEn follow "you" (after at most one word: "you once said").
var youVerbsEn = map[string]bool{
	"say": true, "said": true, "suggest": true, "suggested": true, "recommend": true, "recommended": true,
	"tell": true, "told": true, "advise": true, "advised": true, "mention": true, "mentioned": true,
	"propose": true, "proposed": true, "give": true, "gave": true,
}

const youGap = 3

// asksAssistant reports whether text asks for the assistant's own words.
func asksAssistant(text string) bool {
	for _, pron := range []string{"你", "您"} {
		for rest := text; ; {
			i := strings.Index(rest, pron)
			if i < 0 {
				break
			}
			rest = rest[i+len(pron):]
			for gap, tail := 0, rest; gap <= youGap && tail != ""; gap++ {
				for _, v := range youVerbs {
					if strings.HasPrefix(tail, v) {
						return true
					}
				}
				_, n := utf8.DecodeRuneInString(tail)
				tail = tail[n:]
			}
		}
	}
	words := strings.Fields(strings.ToLower(strings.Map(func(r rune) rune {
		if r == '\'' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return ' '
	}, text)))
	for i, w := range words {
		if w != "you" {
			continue
		}
		for j := i + 1; j < len(words) && j <= i+2; j++ {
			if youVerbsEn[words[j]] {
				return true
			}
		}
	}
	return false
}
