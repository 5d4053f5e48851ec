package engine

import (
	"fmt"
	"github.com/RoaringBitmap/roaring/v2"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// A speaker is often named in a question by what the others call them in
// the meeting, a name no record's role carries and no rule derives from
// it: a Chinese name for a foreign son-in-law ("大伟" for "Dan Price"), a
// pet name ("Kiki" for 林琪). The meeting itself says who it is: the turn
// that addresses the name ("大伟你说。", "Kiki, can you take this one?")
// is answered by them. When a question about what someone said names no
// role by any other rule, addressedNamed takes the name it opens with
// (Chinese: the first two or three characters of a run; English: a
// capitalized word), finds the agents' records that address it at the
// start of a clause (the name, then a comma, a colon, or 你/您), and
// counts for each the role of the turn after it in its session when it
// asks or invites them ("大伟你说" twice), or of the turn before when a
// turn opens by answering them ("黄叔，我们是用烘干机烘的"): the one role with
// the most wins, none on a tie. Kin named by the question ("妈今天开会说了
// 什么？", "What did my mum say?", "Dad") are tried by the words a family
// meeting addresses them with (kinAddresses: 妈, 妈妈, Mum...), after its
// names. Measured 2026-12-06 (31 scenario sets): hit@1 / hit@5 945.24 /
// 1160.91 -> 948.39 / 1162.71 (sets 28-30's mum and dad questions, in
// sample), none down; LoCoMo and the Chinese sets identical.

// maxAddressNames bounds the names tried in one question, addressScan
// the records read for each (the BM25 hits of the name: a turn addressing
// it holds it near its start, and is short).
const (
	maxAddressNames = 3
	addressScan     = 24
)

// addressedNamed returns the role of agents the question's words name by
// the name the meetings address them with, and that name; "" for none.
func (db *DB) addressedNamed(words, agents []string) (role, name string, err error) {
	if !speechWord.MatchString(strings.Join(words, " ")) {
		return "", "", nil
	}
	names := append(addressNames(words), kinAddresses(words)...)
	if len(names) == 0 {
		return "", "", nil
	}
	bm, err := db.idx.Filter(&index.Filter{Agents: agents})
	if err != nil {
		return "", "", fmt.Errorf("lazymem: engine: filter: %w", err)
	}
	for _, n := range names {
		ids, recs, err := db.searchRead(n, bm, addressScan)
		if err != nil {
			return "", "", err
		}
		votes := map[string]int{}
		turns := sessionTurns{db: db}
		for _, id := range ids {
			r, ok := recs[id]
			if !ok {
				continue
			}
			kind := addresses(r.Text, n)
			if kind == notAddressed {
				continue
			}
			delta, w := 1, 1 // asked or invited: the one addressed speaks next
			switch kind {
			case invited:
				w = 2 // "大伟你说"
			case answered:
				delta = -1 // "黄叔，我们是用烘干机烘的": a reply to the turn before
			}
			role, err := turns.speakerAt(id, r, delta)
			if err != nil {
				return "", "", err
			}
			if role != "" {
				votes[role] += w
			}
		}
		if best, _ := soleWinner(votes); best != "" {
			return best, n, nil
		}
	}
	return "", "", nil
}

// soleWinner returns the key with the most votes and its votes; "" and 0
// on a tie or none.
func soleWinner(votes map[string]int) (string, int) {
	best, n, tie := "", 0, false
	for k, v := range votes {
		switch {
		case v > n:
			best, n, tie = k, v, false
		case v == n:
			tie = true
		}
	}
	if tie {
		return "", 0
	}
	return best, n
}

// addressNames returns the names a question may open with, at most
// maxAddressNames: a Chinese run's first three and first two characters
// (not a frame, time, kin or pronoun word, nor a word of the glossary or
// the lexicon's concepts), a capitalized Latin word that
// is not a stop word or a title.
func addressNames(words []string) []string {
	lx, stop := theLexicon(), stopSet()
	var out []string
	for i, w := range words {
		if len(out) >= maxAddressNames {
			break
		}
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case analysis.IsCJK(r):
			rs := []rune(w)
			for _, n := range []int{3, 2} {
				if len(rs) < n {
					continue
				}
				c := string(rs[:n])
				if !addressStop(lx, c) {
					out = append(out, c)
				}
			}
		case unicode.IsUpper(r) && latinName(w) && i > 0:
			lw := strings.ToLower(w)
			if !stop[lw] && !titles[lw] && !lx.frame[lw] {
				out = append(out, w)
			}
		}
	}
	if len(out) > maxAddressNames {
		out = out[:maxAddressNames]
	}
	return out
}

// kinVocatives are the kin words a family meeting addresses someone with
// ("妈你说", "爸，医生说…", "Mum, what do you think?").
var kinVocatives = map[string]bool{
	"妈": true, "妈妈": true, "老妈": true, "爸": true, "爸爸": true, "老爸": true, "老公": true, "老婆": true,
	"奶奶": true, "外婆": true, "姥姥": true, "爷爷": true, "外公": true, "姥爷": true, "婆婆": true, "公公": true,
	"Mum": true, "Mom": true, "Dad": true, "Grandma": true, "Grandpa": true, "Nana": true,
}

// kinAddresses returns the vocatives of the kin a question names ("我妈",
// "my mum", "Dad"): the words of the lexicon's [person] entry it names
// that a meeting addresses them with. Whose mother is meant the votes
// decide: the meeting's children and in-laws address her alike.
func kinAddresses(words []string) []string {
	q := strings.ToLower(strings.Join(words, " "))
	qw := map[string]bool{}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		qw[w] = true
	}
	var out []string
	for _, entry := range theLexicon().persons {
		named := false
		for _, t := range entry {
			if r, _ := utf8.DecodeRuneInString(t); analysis.IsCJK(r) && strings.Contains(q, t) || qw[t] {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		for _, t := range entry {
			v := t
			if t[0] < utf8.RuneSelf {
				v = strings.ToUpper(t[:1]) + t[1:] // "Mum, ..."
			}
			if kinVocatives[v] && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// addressStop reports whether the opening characters c are a word a
// question opens with that is no name: a frame word or one beginning
// with one (今天, 我们, 上次), a pronoun, a kin word, or a word ending in a
// character names do not end with.
func addressStop(lx *lexicon, c string) bool {
	rs := []rune(c)
	if strings.ContainsRune(nameEnd, rs[len(rs)-1]) || strings.ContainsRune("我你他她它咱谁哪什怎今昨明前后上下这那每", rs[0]) {
		return true
	}
	if lx.frame[c] || nameStop[c] || doubledWords[c] || ruleWordSet()[c] {
		return true
	}
	// A word of the dictionaries is a topic, not a name (预算, 床单).
	if theGlossary().zh[c] != nil || lx.isExpandTerm(c) {
		return true
	}
	for _, p := range lx.persons {
		for _, n := range p {
			if strings.HasPrefix(c, n) || strings.HasPrefix(n, c) {
				return true // 老公, 儿媳
			}
		}
	}
	return false
}

// How a turn addresses a name.
const (
	notAddressed = iota
	invited      // the name, then 你说, 您说, 你来, 您来 ("大伟你说")
	asked        // a clause opening with the name, then a question or 你/您 ("Kiki, can you take this one?")
	answered     // the turn opening with the name, then a statement ("黄叔，我们是用烘干机烘的")
)

// addresses returns how text addresses name at the start of a clause
// (the name at the text's start or after a clause's punctuation, then a
// comma, a colon, or 你/您).
func addresses(text, name string) int {
	best := notAddressed
	if name == "" {
		return best
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return best
		}
		at := i + j
		after := text[at+len(name):]
		r, size := utf8.DecodeRuneInString(after)
		if (at == 0 || clauseStart(text[:at])) && strings.ContainsRune("，,：:你您", r) {
			rest := after
			if strings.ContainsRune("，,：:", r) {
				rest = strings.TrimLeft(after[size:], " ")
			}
			clause := rest
			if k := strings.IndexAny(rest, "。！？；.!?;"); k >= 0 {
				_, n := utf8.DecodeRuneInString(rest[k:])
				clause = rest[:k+n]
			}
			switch {
			case strings.HasPrefix(rest, "你说") || strings.HasPrefix(rest, "您说") || strings.HasPrefix(rest, "你来") || strings.HasPrefix(rest, "您来"):
				return invited
			case strings.ContainsAny(clause, "？?") || strings.HasPrefix(rest, "你") || strings.HasPrefix(rest, "您"):
				best = max(best, asked)
			case at == 0 && best == notAddressed:
				best = answered
			}
		}
		i = at + len(name)
	}
}

// clauseStart reports whether before ends a clause (its last non-space
// rune is a clause's punctuation).
func clauseStart(before string) bool {
	before = strings.TrimRight(before, " ")
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune("。！？；，.!?;,：:\n\"“「", r)
}

// searchRead returns the ids of the top k BM25 hits of text among bm, best
// first, and their records.
func (db *DB) searchRead(text string, bm *roaring.Bitmap, k int) ([]uint64, map[uint64]Record, error) {
	hits, err := db.idx.Search(text, bm, k, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("lazymem: engine: search: %w", err)
	}
	ids := make([]uint64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	recs, err := db.readRecords(ids)
	if err != nil {
		return nil, nil, err
	}
	return ids, recs, nil
}
