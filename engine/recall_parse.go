package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// The parse stages: the time expression and synonym expansion before the
// filter, speaker detection after it (it needs the filter's agents and
// only runs when some record passed).

// parse resolves the time window (Query.ParseTime intersected with
// Since/Until) and the texts BM25 searches and the embedder sees.
func (p *plan) parse() {
	q, st := p.q, &p.res.Stats
	text := q.Text
	since, until := q.Since, q.Until
	if q.ParseTime {
		if tr, ok := ParseTime(text, p.now); ok {
			text = tr.Rest
			st.TimeExpr = tr.Expr
			if since.IsZero() || tr.Since.After(since) {
				since = tr.Since
			}
			if until.IsZero() || tr.Until.Before(until) {
				until = tr.Until
			}
		}
	}
	p.since, p.until = since, until
	st.Since, st.Until = since, until
	p.denseText = strings.TrimSpace(text)
	p.text = expandSynonyms(p.denseText, q.Synonyms)
	st.Text = p.text
}

// maxSpeakerWords bounds the query words checked against the role postings.
const maxSpeakerWords = 32

// detectSpeakers finds the query words that are roles of the searched
// agents: their records are boosted in fusion, and the names are dropped
// from the BM25 text and the embedded text (they match the other speaker
// addressing them, not the answer).
func (p *plan) detectSpeakers() error {
	q, st := p.q, &p.res.Stats
	if q.SpeakerBoost != 1 && st.Filtered > 0 {
		var err error
		p.speakers, st.Speakers, err = p.db.findSpeakers(p.denseText, p.filter.Agents)
		if err != nil {
			return err
		}
		if len(st.Speakers) > 0 {
			if stripped := stripWords(p.text, st.Speakers); strings.TrimSpace(stripped) != "" {
				p.text = stripped
				st.Text = p.text
			}
			// Spaces collapsed where a name was: the embedded text is also
			// the cache key.
			if stripped := strings.Join(strings.Fields(stripWords(p.denseText, st.Speakers)), " "); stripped != "" {
				p.denseText = stripped
			}
		}
	}
	if q.Mode != ModeSparse {
		st.DenseText = p.denseText
	}
	return nil
}

// findSpeakers returns the records of the agents whose role is a word of
// text (as typed, lowercased or capitalized), and those roles.
func (db *DB) findSpeakers(text string, agents []string) (*roaring.Bitmap, []string, error) {
	var bm *roaring.Bitmap
	var found []string
	seen := map[string]bool{}
	words := strings.FieldsFunc(text, func(r rune) bool { return !analysis.IsWordRune(r) })
	if len(words) > maxSpeakerWords {
		words = words[:maxSpeakerWords]
	}
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		lw := strings.ToLower(w)
		for _, v := range []string{w, lw, strings.ToUpper(lw[:1]) + lw[1:]} {
			if seen[v] {
				continue
			}
			seen[v] = true
			rb, err := db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{v}})
			if err != nil {
				return nil, nil, fmt.Errorf("lazymem: engine: role filter: %w", err)
			}
			if rb.IsEmpty() {
				continue
			}
			found = append(found, v)
			if bm == nil {
				bm = rb
			} else {
				bm.Or(rb)
			}
		}
	}
	return bm, found, nil
}

// stripWords removes every whole-word, case-insensitive occurrence of ws
// from text.
func stripWords(text string, ws []string) string {
	drop := map[string]bool{}
	for _, w := range ws {
		drop[strings.ToLower(w)] = true
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if !drop[strings.ToLower(text[start:end])] {
				b.WriteString(text[start:end])
			}
			start = -1
		}
	}
	for i, r := range text {
		if analysis.IsWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		b.WriteRune(r)
	}
	flush(len(text))
	return b.String()
}

// expandSynonyms appends to text the values of every synonym key found in
// it (case-insensitive, on word boundaries), in sorted key order.
func expandSynonyms(text string, syn map[string][]string) string {
	if len(syn) == 0 || text == "" {
		return text
	}
	lower := strings.ToLower(text)
	var b strings.Builder
	b.WriteString(text)
	for _, k := range slices.Sorted(maps.Keys(syn)) {
		if containsWord(lower, strings.ToLower(strings.TrimSpace(k))) {
			for _, v := range syn[k] {
				b.WriteByte(' ')
				b.WriteString(v)
			}
		}
	}
	return b.String()
}

// containsWord reports whether w occurs in s on word boundaries as the
// tokenizer draws them (analysis.IsWordRune). CJK text has no spaces: a
// CJK key matches anywhere.
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	for off := 0; off <= len(s)-len(w); {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		first, _ := utf8.DecodeRuneInString(w)
		last, _ := utf8.DecodeLastRuneInString(w)
		okB := i == 0 || !analysis.IsWordRune(before) || analysis.IsCJK(first)
		okA := i+len(w) == len(s) || !analysis.IsWordRune(after) || analysis.IsCJK(last)
		if okB && okA {
			return true
		}
		_, sz := utf8.DecodeRuneInString(s[i:])
		off = i + sz
	}
	return false
}
