package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index"
)

// Names defined in the chat: people are named by a nickname, a former or
// English name, and a turn says so ("老黑本名何文斌", "朋友们都叫他大高",
// "英文名叫Vivian", "Robert goes by Bob"). A question naming one name
// should find the turns naming the other. The engine keeps, per set of
// searched agents, the aliases its records define, built at query time
// from the records themselves (never from the questions):
//
//   - the records holding a marker (本名, 原名, 大名, 真名, 全名, 小名, 外号,
//     绰号, 英文名, 叫他/她, 喊他/她, 管他/她叫; "goes by", "real name",
//     "call him", "nicknamed", "known as") are found by one BM25 search of
//     the markers over the agents' records, at most aliasScan of them, and
//     read; a pattern per marker takes the name after it (2-4 CJK
//     characters up to the punctuation, or a capitalised word) and the
//     names before it in the same record (a surname and one or two
//     characters, 老X/小X/阿X, a capitalised word; at most aliasBefore,
//     the nearest first);
//   - the table is cached per agent set and extended with the records
//     appended since (a search over the new ids only); a Forget or
//     retention pass rebuilds it. A recall after no append costs a map
//     lookup, the index's live count and a substring test per alias
//     (BenchmarkAliases).
//
// At query time, a query holding one side of a pair has the other side
// added to the BM25 text at a quarter of an own word's weight
// (aliasReps): a prior that finds the turns naming the other name,
// never a filter.
const (
	aliasScan   = 512
	aliasBefore = 3
)

// aliasReps is the weight of an alias in the BM25 text, in repetitions
// (the query's own words have expandOwn): a quarter of an own word. The
// turn that defines the name holds both names and gains the most from the
// added one; at half weight (expandSame) it took the third set's x-069
// and x-109 one rank down in sparse mode (R@1 .458 -> .452); at a quarter
// sparse is unchanged and lazy hash gains as at half (.481 -> .487 with
// the earlier-state rule).
var aliasReps = expandOther

// useAliases turns the rule on. It is off: the table is built per
// process, and a new process's first recall of an agent searches the
// markers over all of the agent's records and reads up to aliasScan of
// them. On the 1M workload store (English, where "call", "name", "real",
// "known" are common words) that took the cold-open recall's p50 from
// 3.5 to 28.4 ms (BenchmarkRecall/n=1000000/filter=agent/cache=cold-open,
// quiet, with and without LAZYMEM_NO_ALIASES), against a gain of one
// third-set question in 169 (lazy hash R@1 .481 -> .487). A table kept
// with the records (built at append, rebuilt by Forget) would remove the
// cost; until then a diagnostic build turns it on with LAZYMEM_ALIASES
// (recall_change_diag.go), and the tests set it.
var useAliases = false

// aliasMarkers is the BM25 text that finds the records defining a name.
const aliasMarkers = "本名 原名 大名 真名 全名 小名 外号 绰号 英文名 叫他 叫她 喊他 喊她 管他叫 管她叫 goes by real name nickname nicknamed call him call her known as"

// aliasAfter matches a marker and the name after it: group 1 is a CJK
// name, group 2 a capitalised word.
var aliasAfter = mustGate(`(?:本名|原名|大名|真名|全名|小名|外号|绰号|英文名|昵称|(?:[叫喊](?:他|她))|(?:管(?:他|她)叫))(?:叫|是|为)?[“"「]?(?:(\p{Han}{2,4})|([A-Z][A-Za-z'-]+))|(?i:\b(?:goes by|go by|nicknamed|known as|a\.?k\.?a\.?|real name is|full name is|calls? (?:him|her)|called (?:him|her)))\s+["“]?([A-Z][A-Za-z'-]+)`)

// aliasPair is one defined name and the names of the same record before
// its marker, any of which it may stand for.
type aliasPair struct {
	name   string
	others []string
}

// aliasEntry is the alias table of one agent set.
type aliasEntry struct {
	mu        sync.Mutex
	forgotten uint64 // db.forgotten when built: a change means a rebuild
	next      uint64 // the records from this id on are not scanned yet
	live      uint64 // the index's live documents before the last scan
	built     bool
	pairs     []aliasPair
}

// aliasTables holds the alias table of each agent set recalls searched.
type aliasTables struct {
	mu sync.Mutex
	m  map[string]*aliasEntry
}

var surnames = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧柳应"

// nameStop are words a name pattern would take for a name.
var nameStop = map[string]bool{
	"老师": true, "老公": true, "老婆": true, "老板": true, "老家": true, "老人": true, "老爸": true, "老妈": true,
	"老是": true, "老实": true, "小时": true, "小区": true, "小孩": true, "小学": true, "小姐": true, "小心": true,
	"小说": true, "小名": true, "阿姨": true, "高中": true, "高兴": true, "高铁": true, "高考": true, "马上": true,
	"方便": true, "方面": true, "白天": true, "金额": true, "万一": true, "于是": true, "周末": true, "周年": true,
	"王者": true, "江湖": true, "史上": true, "程度": true, "钱包": true, "叶子": true, "黄色": true, "白色": true,
}

// nameEnd are characters that end a name rather than continue it.
const nameEnd = "的了是在和也都就还说给跟对把被让叫这那今每从到去来要会能过着吧呢啊呀很太又再才已有没不上下里个一们家"

// namesBefore returns the names in s, the nearest (last) first.
func namesBefore(s string) []string {
	var out []string
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r < utf8.RuneSelf && unicode.IsUpper(r):
			j := i
			for j < len(rs) && rs[j] < utf8.RuneSelf && (unicode.IsLetter(rs[j]) || rs[j] == '-') {
				j++
			}
			w := string(rs[i:j])
			if (i == 0 || rs[i-1] >= utf8.RuneSelf || !unicode.IsLetter(rs[i-1])) && !englishNotName[w] {
				out = append(out, w)
			}
			i = j - 1
		case strings.ContainsRune(surnames, r) || r == '老' || r == '小' || r == '阿':
			if i+1 >= len(rs) || !unicode.Is(unicode.Han, rs[i+1]) || (rs[i+1] != '一' && strings.ContainsRune(nameEnd, rs[i+1])) {
				continue
			}
			n := 2
			if strings.ContainsRune(surnames, r) && i+2 < len(rs) && unicode.Is(unicode.Han, rs[i+2]) && !strings.ContainsRune(nameEnd, rs[i+2]) {
				n = 3
			}
			w := string(rs[i : i+n])
			if nameStop[string(rs[i:i+2])] {
				continue
			}
			out = append(out, w)
			i += n - 1
		}
	}
	slices.Reverse(out)
	return out
}

// englishNotName are capitalised words that start sentences, not names.
var englishNotName = map[string]bool{
	"I": true, "I'm": true, "I've": true, "He": true, "She": true, "We": true, "They": true, "You": true, "It": true,
	"My": true, "His": true, "Her": true, "Our": true, "Their": true, "Your": true, "The": true, "A": true, "An": true,
	"This": true, "That": true, "And": true, "But": true, "So": true, "Oh": true, "Yeah": true, "Hey": true, "Hi": true,
	"Well": true, "Yes": true, "No": true, "Thanks": true, "Wow": true, "What": true, "When": true, "Everyone": true,
}

// parseAliases returns the name pairs text defines.
func parseAliases(text string) []aliasPair {
	var out []aliasPair
	for _, m := range aliasAfter.FindAllStringSubmatchIndex(text, -1) {
		var name string
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				name = text[m[2*g]:m[2*g+1]]
				break
			}
		}
		// A CJK name runs to the punctuation: a longer run is a phrase.
		if end := m[1]; name != "" && end < len(text) {
			if r, _ := utf8.DecodeRuneInString(text[end:]); unicode.Is(unicode.Han, r) && !strings.ContainsRune(nameEnd, r) {
				continue
			}
		}
		name = strings.TrimRight(name, "了的呢吧啊呀")
		if utf8.RuneCountInString(name) < 2 && !isUpperWord(name) {
			continue
		}
		var others []string
		for _, o := range namesBefore(text[:m[0]]) {
			if o != name && !strings.Contains(name, o) && !strings.Contains(o, name) {
				others = append(others, o)
				if len(others) == aliasBefore {
					break
				}
			}
		}
		if len(others) > 0 {
			out = append(out, aliasPair{name: name, others: others})
		}
	}
	return out
}

func isUpperWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return len(s) > 1 && r < utf8.RuneSelf && unicode.IsUpper(r)
}

// aliasesFor returns the alias table of agents, extended with the records
// appended since it was last read.
func (db *DB) aliasesFor(agents []string) ([]aliasPair, error) {
	key := strings.Join(agents, "\x00")
	db.aliases.mu.Lock()
	if db.aliases.m == nil {
		db.aliases.m = map[string]*aliasEntry{}
	}
	e := db.aliases.m[key]
	if e == nil {
		e = &aliasEntry{}
		db.aliases.m[key] = e
	}
	db.aliases.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if f := db.forgotten.Load(); f != e.forgotten {
		e.forgotten, e.next, e.pairs, e.built = f, 0, nil, false
	}
	// The index's live count, read before the scan: unchanged, nothing
	// was indexed since (a delete changes db.forgotten too), and the
	// recall costs no filter bitmap (profile lesson of index.Filter: the
	// clone of a large agent's bitmap is a sixth of a query).
	live, _, err := db.idx.DocFreq(nil, nil)
	if err != nil {
		return nil, err
	}
	if e.built && live == e.live {
		return e.pairs, nil
	}
	e.built, e.live = true, live
	bm, err := db.idx.Filter(&index.Filter{Agents: agents})
	if err != nil {
		return nil, err
	}
	if e.next > 0 {
		bm.RemoveRange(0, e.next)
	}
	if bm.IsEmpty() {
		return e.pairs, nil
	}
	next := bm.Maximum() + 1
	hits, err := db.idx.Search(aliasMarkers, bm, aliasScan, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(hits))
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	recs, err := db.readRecords(ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if r, ok := recs[id]; ok {
			e.pairs = append(e.pairs, parseAliases(r.Text)...)
		}
	}
	e.next = uint64(next)
	return e.pairs, nil
}

// aliasExpansion returns the names to add to the BM25 text of a query
// holding one side of a defined pair: the other side, when the records
// use it more often (freq: how many records hold a name). A chat that
// defines a nickname then uses it; the name it stands for appears in the
// defining turn and little else, so the expansion goes from the rare
// name to the common one, and a question asking by the common name is
// left alone (measured on the third Chinese set: both ways, R@1 .475 ->
// .461; the defining turn, which holds both names, crowds the answers).
func aliasExpansion(text string, pairs []aliasPair, freq func(string) uint64) []string {
	lower := strings.ToLower(text)
	has := func(n string) bool { return containsWord(lower, strings.ToLower(n)) }
	var add []string
	seen := map[string]bool{}
	put := func(from, to string) {
		if !seen[to] && !has(to) && freq(to) > freq(from) {
			seen[to] = true
			add = append(add, to)
		}
	}
	for _, p := range pairs {
		if has(p.name) {
			for _, o := range p.others {
				put(p.name, o)
			}
			continue
		}
		for _, o := range p.others {
			if has(o) {
				put(o, p.name)
				break
			}
		}
	}
	return add
}

// nameFreq returns how many records of the store hold name, at most: the
// least document frequency of its index terms (a CJK name's bigrams, a
// word). The count is the store's, not the agent's: a bound good enough
// to tell a nickname in use from a name said once.
func (db *DB) nameFreq(name string) uint64 {
	terms := queryAnalyzer().Terms(name)
	var multi []string
	for _, t := range terms {
		if utf8.RuneCountInString(t) > 1 {
			multi = append(multi, t)
		}
	}
	if len(multi) == 0 {
		return 0
	}
	_, df, err := db.idx.DocFreq(multi, nil)
	if err != nil {
		return 0
	}
	return slices.Min(df)
}

// aliasText passes to add the names a query's text should also search
// for, and notes them in the stats.
func (p *plan) aliasText(text string, add func([]string)) error {
	if !useAliases || p.res.Stats.Filtered == 0 {
		return nil
	}
	pairs, err := p.db.aliasesFor(p.filter.Agents)
	if err != nil {
		return fmt.Errorf("lazymem: engine: aliases: %w", err)
	}
	names := aliasExpansion(text, pairs, p.db.nameFreq)
	if len(names) > 0 {
		add(names)
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("names the records define as the same person: also searched %s", strings.Join(names, ", ")))
	}
	return nil
}
