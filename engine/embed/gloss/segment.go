package gloss

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// particles are the words that carry grammar, not meaning, in chat: their
// dictionary senses ("of", "to finish", "earth") would only add noise to a
// gloss, so each glosses to nothing. Interrogatives (什么, 谁, 哪里) stay:
// dropping them gained nothing on the Chinese set in lazy mode and lost a
// speaker question of the scenario suite (docs/benchmarks/zh-embedders.md).
var particles = map[string]bool{
	"的": true, "了": true, "着": true, "过": true, "吗": true, "呢": true, "吧": true,
	"啊": true, "呀": true, "哦": true, "嘛": true, "啦": true, "哈": true, "嗯": true,
	"么": true, "得": true, "地": true, "之": true, "把": true, "被": true, "就": true,
	"都": true, "也": true, "还": true, "又": true, "才": true, "很": true, "挺": true,
	"在": true, "是": true,
}

// Segment splits a run of Han characters into dictionary words: the
// segmentation with the fewest words, then the fewest characters the
// dictionary lacks (particles count as known), then the fewest words that
// end in a particle (提到|了 rather than 提|到了, 主要|是 rather than
// 主|要是), then the
// largest sum of squared word lengths (longer words first). Characters the
// dictionary lacks become words of one.
func (d *Dict) Segment(run string) []string {
	rs := []rune(run)
	n := len(rs)
	type cell struct {
		words, unknown, tail, sq int
		from                     int
	}
	best := make([]cell, n+1)
	for i := 1; i <= n; i++ {
		best[i] = cell{words: 1 << 30}
	}
	better := func(a, b cell) bool {
		if a.words != b.words {
			return a.words < b.words
		}
		if a.unknown != b.unknown {
			return a.unknown < b.unknown
		}
		if a.tail != b.tail {
			return a.tail < b.tail
		}
		return a.sq > b.sq
	}
	for i := 0; i < n; i++ {
		if best[i].words == 1<<30 {
			continue
		}
		for j := i + 1; j <= n && j-i <= maxWord; j++ {
			w := string(rs[i:j])
			_, known := d.words[w]
			known = known || particles[w]
			if !known && j-i > 1 {
				continue
			}
			c := cell{words: best[i].words + 1, unknown: best[i].unknown, tail: best[i].tail, sq: best[i].sq + (j-i)*(j-i), from: i}
			if !known {
				c.unknown++
			}
			if j-i > 1 && particles[string(rs[j-1])] {
				c.tail++
			}
			if better(c, best[j]) {
				best[j] = c
			}
		}
	}
	var out []string
	for j := n; j > 0; j = best[j].from {
		out = append(out, string(rs[best[j].from:j]))
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// punct maps the CJK punctuation of chat to its ASCII counterpart.
var punct = map[rune]string{
	'，': ",", '。': ".", '？': "?", '！': "!", '：': ":", '；': ";", '、': ",",
	'（': "(", '）': ")", '“': "\"", '”': "\"", '‘': "'", '’': "'", '…': "...", '～': "~",
	'《': "\"", '》': "\"", '【': "(", '】': ")", '·': " ",
}

// Gloss rewrites text in English: each run of Han characters is segmented
// and every word replaced by its first senses (at most senses of them,
// joined by " / "); particles gloss to nothing, words the dictionary lacks
// stay as they are, and everything else (English, digits) passes through.
// A leading Chinese name followed by a colon (the engine's "role: text")
// is spelled in pinyin.
// A text without Han characters comes back unchanged.
func (d *Dict) Gloss(text string, senses int) string {
	if !hasHan(text) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) * 4)
	// A record the engine embeds as "role: text" whose role is a Chinese
	// name: the name in pinyin, not its characters' meanings (王芳 "Wang
	// Fang", not "king fragrant").
	if i := strings.IndexAny(text, ":："); i > 0 {
		if n := d.Name(text[:i]); n != "" {
			b.WriteString(n)
			b.WriteString(": ")
			_, size := utf8.DecodeRuneInString(text[i:])
			text = text[i+size:]
		}
	}
	space := func() {
		if b.Len() > 0 {
			if c := b.String()[b.Len()-1]; c != ' ' {
				b.WriteByte(' ')
			}
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.Is(unicode.Han, r) {
			if p, ok := punct[r]; ok {
				b.WriteString(p)
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !unicode.Is(unicode.Han, r) {
				break
			}
			j += size
		}
		for _, w := range d.Segment(text[i:j]) {
			if particles[w] {
				continue
			}
			ss := d.words[w]
			space()
			if len(ss) == 0 {
				b.WriteString(w)
				continue
			}
			for k, s := range ss[:min(senses, len(ss))] {
				if k > 0 {
					b.WriteString(" / ")
				}
				b.WriteString(s)
			}
		}
		space()
		i = j
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// hasHan reports whether s holds a Han character: the dictionary's
// script. Not index/analysis.IsCJK, which also counts kana and Hangul, for
// which CC-CEDICT has no words.
func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
