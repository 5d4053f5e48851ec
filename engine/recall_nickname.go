package engine

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// Chinese speakers are often named by a nickname of two characters
// rather than by the name their records carry: 小 or 阿 with the given
// name's last character ("小梅" for 梁小梅 or 李梅), 小 or 老 with the
// surname ("小王", "老郑" for 郑国强), or the surname and an honorific
// ("刘姐" for 刘美华, "邓护士" for 邓佳), or the given name's last character
// doubled ("雯雯" for 黄晓雯). When a question names no role
// exactly, nicknamed looks for such a word in it and returns the one role
// of the agents it names; none when it names several (two 王s) or none.

// nicknamed returns the role of agents the question's words name by a
// nickname, and the nickname; "" for none.
func (db *DB) nicknamed(words, agents []string) (role, nick string, err error) {
	speech := speechWord.MatchString(strings.Join(words, " "))
	for _, w := range words {
		rs := []rune(w)
		if len(rs) < 2 || !analysis.IsCJK(rs[0]) {
			continue
		}
		for i := 0; i+1 < len(rs); i++ {
			p, x := rs[i], rs[i+1]
			switch {
			case (p == '小' || p == '老' || p == '阿') && analysis.IsCJK(x) && !nameStop[string(rs[i:i+2])] && !strings.ContainsRune(nameEnd, x):
				nick = string(rs[i : i+2])
			case p == x && !doubledWords[string(rs[i:i+2])] && !strings.ContainsRune(nameEnd, x) && (i == 0 || !analysis.IsCJK(rs[i-1]) || rs[i-1] != p):
				// The given name's last character doubled: 雯雯 for 黄晓雯,
				// 琪琪 for 林琪.
				nick = string(rs[i : i+2])
			case speech && strings.ContainsRune(surnames, p) && (i == 0 || !analysis.IsCJK(rs[i-1]) || strings.ContainsRune(nameEnd, rs[i-1])) && honorificAt(rs[i+1:]) != "":
				// The surname and an honorific: 刘姐, 邓护士, 沈老师; only
				// in a question about what someone said: elsewhere the
				// person is as often the subject ("周姐现在是哪几天去"),
				// whose own records the speaker boost would lift.
				nick = string(p) + honorificAt(rs[i+1:])
			default:
				continue
			}
			var roles []string
			if err := db.lookupRoles(func(m *roleMaps) { roles = m.nicknameRoles(nick) }); err != nil {
				return "", "", err
			}
			one, err := db.oneHeld(roles, agents)
			if err != nil {
				return "", "", err
			}
			if one != "" {
				return one, nick, nil
			}
		}
	}
	return "", "", nil
}

// nicknameRoles returns the roles nick may name: 小, 老 or 阿 and one
// character (nicknameOf), or a surname and an honorific (every role of two
// to four characters with that surname).
func (m *roleMaps) nicknameRoles(nick string) []string {
	rs := []rune(nick)
	var out []string
	switch {
	case len(rs) == 2 && rs[0] == rs[1]:
		for _, r := range m.lastChar[rs[1]] {
			if n := utf8.RuneCountInString(r); n >= 2 && n <= 4 && r != nick && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	case len(rs) == 2 && (rs[0] == '小' || rs[0] == '老' || rs[0] == '阿'):
		for _, r := range append(slices.Clip(m.firstChar[rs[1]]), m.lastChar[rs[1]]...) {
			if nicknameOf(nick, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	case len(rs) >= 2 && strings.ContainsRune(surnames, rs[0]) && string(rs[1:]) == honorificAt(rs[1:]):
		for _, r := range m.firstChar[rs[0]] {
			if n := utf8.RuneCountInString(r); n >= 2 && n <= 4 && r != nick && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// honorifics follow a surname to name a person: a colleague older than
// the speaker (刘姐, 周哥), a professional (邓护士, 沈老师, 何医生, 陈师傅).
// Kin words after a surname (王奶奶, 陈爷爷) name elders who are most
// often talked about, not speakers, and are left out.
var honorifics = []string{"老师", "师傅", "医生", "大夫", "护士", "主任", "经理", "老板", "教练", "律师", "姐", "哥", "总", "工"}

// honorificAt returns the honorific rs starts with; "" for none.
func honorificAt(rs []rune) string {
	for _, h := range honorifics {
		if strings.HasPrefix(string(rs[:min(len(rs), 2)]), h) {
			return h
		}
	}
	return ""
}

// nicknameOf reports whether nick (小/老/阿 and one character) may name
// role, a Chinese name of two to four characters: 小梅 names 梁小梅 and 李梅,
// 小王 and 老王 name 王芳, 阿梅 names 李梅.
func nicknameOf(nick, role string) bool {
	n := utf8.RuneCountInString(role)
	if n < 2 || n > 4 || role == nick {
		return false
	}
	for _, r := range role {
		if !analysis.IsCJK(r) {
			return false
		}
	}
	p, size := utf8.DecodeRuneInString(nick)
	x := nick[size:]
	switch {
	case p == '小' && strings.HasSuffix(role, nick):
		return true // 梁小梅
	case (p == '小' || p == '阿') && strings.HasSuffix(role, x):
		return true // 李梅
	case (p == '小' || p == '老') && strings.HasPrefix(role, x) && strings.Contains(surnames, x):
		return true // 王芳
	}
	return false
}

// doubledWords are doubled characters that are words, not nicknames:
// kin, adverbs, reduplicated verbs and interjections.
var doubledWords = map[string]bool{
	"妈妈": true, "爸爸": true, "哥哥": true, "姐姐": true, "弟弟": true, "妹妹": true, "爷爷": true, "奶奶": true,
	"姥姥": true, "婆婆": true, "公公": true, "叔叔": true, "伯伯": true, "舅舅": true, "姑姑": true, "宝宝": true,
	"太太": true, "娃娃": true, "刚刚": true, "常常": true, "天天": true, "慢慢": true, "好好": true, "谢谢": true,
	"看看": true, "说说": true, "试试": true, "想想": true, "听听": true, "等等": true, "偷偷": true, "渐渐": true,
	"明明": true, "仅仅": true, "往往": true, "人人": true, "个个": true, "嗯嗯": true, "哈哈": true, "呵呵": true,
	"多多": true, "早早": true, "轻轻": true, "静静": true, "年年": true, "处处": true, "时时": true,
	"默默": true, "稍稍": true, "悄悄": true, "匆匆": true, "紧紧": true, "满满": true, "大大": true, "小小": true,
	"聊聊": true, "问问": true, "走走": true, "查查": true, "星星": true, "步步": true, "滴滴": true,
}
