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
// surname ("小王", "老郑" for 郑国强). When a question names no role
// exactly, nicknamed looks for such a word in it and returns the one role
// of the agents it names; none when it names several (two 王s) or none.

// nicknamed returns the role of agents the question's words name by a
// nickname, and the nickname; "" for none.
func (db *DB) nicknamed(words, agents []string) (role, nick string, err error) {
	for _, w := range words {
		rs := []rune(w)
		if len(rs) < 2 || !analysis.IsCJK(rs[0]) {
			continue
		}
		for i := 0; i+1 < len(rs); i++ {
			p, x := rs[i], rs[i+1]
			if p != '小' && p != '老' && p != '阿' || !analysis.IsCJK(x) || nameStop[string(rs[i:i+2])] || strings.ContainsRune(nameEnd, x) {
				continue
			}
			nick = string(rs[i : i+2])
			var roles []string
			if err := db.lookupRoles(func(m *roleMaps) {
				for _, r := range append(slices.Clip(m.firstChar[x]), m.lastChar[x]...) {
					if nicknameOf(nick, r) && !slices.Contains(roles, r) {
						roles = append(roles, r)
					}
				}
			}); err != nil {
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
