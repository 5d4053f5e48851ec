package engine

import (
	"slices"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// A Chinese role often carries a description before the name the others
// use: "留学顾问陈老师" (the study-abroad adviser Mr Chen), "妈妈王丽",
// "班主任李老师". A question names the person as the meeting does ("陈老
// 师今天早上都讲了些啥？", "王丽说了什么"), a name no rule derives from the
// whole role. suffixNamed finds the roles of agents that end with a run of
// the question's Chinese words: two to four characters, not a bare title
// or kin word (老师 alone names every teacher), the only held role it
// fits.

// bareTitles are the endings that name no one alone.
var bareTitles = map[string]bool{
	"老师": true, "医生": true, "大夫": true, "经理": true, "主任": true, "教练": true, "阿姨": true, "师傅": true,
	"叔叔": true, "阿姨们": true, "大爷": true, "奶奶": true, "爷爷": true, "同学": true, "老板": true, "顾问": true,
	"护士": true, "律师": true, "先生": true, "女士": true, "小姐": true, "太太": true, "总监": true, "主管": true,
}

// roleSuffixes returns the endings of a Chinese role of four characters
// or more that may name its person: two to four characters, shorter than
// the role, not a bare title.
func roleSuffixes(role string) []string {
	n := utf8.RuneCountInString(role)
	if n < 4 {
		return nil
	}
	rs := []rune(role)
	for _, r := range rs {
		if !analysis.IsCJK(r) {
			return nil
		}
	}
	var out []string
	for k := 2; k <= 4 && k < n; k++ {
		if s := string(rs[n-k:]); !bareTitles[s] {
			out = append(out, s)
		}
	}
	return out
}

// suffixNamed returns the roles of agents that one of words' Chinese runs
// names by a role's ending (roleSuffixes), each the only held role of its
// name, and the runs that name them; longer names first.
func (db *DB) suffixNamed(words, agents []string) (roles, written []string, err error) {
	var subs []string
	cjkSubstrings(words, 4, func(rs []rune, i, n int) { subs = append(subs, string(rs[i:i+n])) })
	if len(subs) == 0 || noSuffixNames {
		return nil, nil, nil
	}
	fits := make([][]string, len(subs))
	if err := db.lookupRoles(func(m *roleMaps) {
		for i, s := range subs {
			fits[i] = slices.Clone(m.suffix[s])
		}
	}); err != nil {
		return nil, nil, err
	}
	return db.heldOnes(subs, fits, agents)
}

// noSuffixNames: false but in a test.
var noSuffixNames bool
