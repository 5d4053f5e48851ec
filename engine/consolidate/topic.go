package consolidate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/lazymem/lazymem/index/analysis"
)

// Topic returns the subject of a statement: the words before its value
// verb ("上线时间定在十二月十五号" -> "上线时间", "the launch moves to March
// 3rd" -> "the launch"), or the whole statement when no such verb splits
// it into a subject of at least two characters.
func Topic(content string) string {
	if loc := topicSplitZH.FindStringIndex(content); loc != nil && loc[0] > 0 {
		if s := cleanContent(content[:loc[0]]); len([]rune(s)) >= 2 {
			return s
		}
	}
	if loc := topicSplitEN.FindStringIndex(asciiLower(content)); loc != nil && loc[0] > 0 {
		if s := cleanContent(content[:loc[0]]); len(s) >= 2 {
			return s
		}
	}
	return content
}

var (
	topicSplitZH = regexp.MustCompile(`定在|定于|定为|改到|改成|改为|改在|推迟到|提前到|延期到|延到|放在|换成|是|为|用|在`)
	topicSplitEN = regexp.MustCompile(`\s(?:is|are|was|will be|stays|stay|moves to|moved to|goes to|should be|must be|to be|needs|at|on)\s`)
)

var topicAnalyzer = sync.OnceValues(func() (*analysis.Analyzer, error) {
	return analysis.New(analysis.DefaultOptions())
})

// TopicKey returns the normalized key terms of a topic: the index's terms
// (case folded, stemmed, English stopwords dropped, CJK as bigrams), minus
// terms made of digits or Chinese numerals, date words and units
// ("十二月", "15th", "周五"), sorted and unique. Two statements about the
// same subject with different values ("上线时间定在十二月十五号" and
// "上线时间推迟到十二月二十二号") get the same key.
func TopicKey(topic string) ([]string, error) {
	a, err := topicAnalyzer()
	if err != nil {
		return nil, fmt.Errorf("consolidate: topic analyzer: %w", err)
	}
	var key []string
	for _, t := range a.Terms(topic) {
		if isValueTerm(t) {
			continue
		}
		key = append(key, t)
	}
	slices.Sort(key)
	return slices.Compact(key), nil
}

// isValueTerm reports a term that names a value (a number, a date part)
// rather than a subject.
func isValueTerm(t string) bool {
	for _, r := range t {
		if unicode.IsDigit(r) || strings.ContainsRune("零〇一二两三四五六七八九十百千万月号日周年点", r) {
			return true
		}
	}
	return dateWords[t]
}

var dateWords = map[string]bool{
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true,
	"januari": true, "februari": true, "march": true, "april": true, "may": true, "june": true, "juli": true, "august": true,
	"septemb": true, "octob": true, "novemb": true, "decemb": true, "tomorrow": true, "today": true, "next": true, "week": true,
}

// SameTopic reports whether two topic keys name one subject: their overlap
// |A ∩ B| / min(|A|, |B|) is at least MinTopicOverlap. An empty key
// matches nothing.
func SameTopic(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	n := 0
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); ok {
			n++
		}
	}
	return float64(n) >= MinTopicOverlap*float64(min(len(a), len(b)))
}

// MinTopicOverlap is SameTopic's threshold. 0.6 lets "上线时间" (上线 线时
// 时间) match "产品上线时间" (产品 品上 上线 线时 时间: 3 of 3) and keeps
// "launch date" apart from "launch party" (1 of 2).
const MinTopicOverlap = 0.6

// Link sets supersession between units already stored (existing) and new
// ones (fresh): a later unit of the same agent and type on the same topic
// (SameTopic of TopicKey of their Topic fields) supersedes every earlier
// live one. Fresh units are taken in time order (then id) and may
// supersede each other. Both slices are updated in place: the later unit's
// Supersedes gains the earlier id, the earlier unit's SupersededBy is set.
// Action items are linked only when they also share an owner, so two
// people's tasks on one subject both stay live. Every unit must have an id.
// Link returns the ids of existing units it marked superseded, which the
// caller rewrites.
func Link(existing, fresh []Unit) (superseded []uint64, err error) {
	type entry struct {
		u     *Unit
		key   []string
		fresh bool
	}
	var all []entry
	for _, set := range []struct {
		us    []Unit
		fresh bool
	}{{existing, false}, {fresh, true}} {
		for i := range set.us {
			u := &set.us[i]
			if u.ID == 0 {
				return nil, fmt.Errorf("%w: Link: unit %q has id 0 (assign ids before linking)", ErrInvalidUnit, u.Content)
			}
			k, err := TopicKey(u.Topic)
			if err != nil {
				return nil, err
			}
			all = append(all, entry{u, k, set.fresh})
		}
	}
	slices.SortStableFunc(all, func(a, b entry) int {
		if c := a.u.Time.Compare(b.u.Time); c != 0 {
			return c
		}
		return cmpU64(a.u.ID, b.u.ID)
	})
	for j := range all {
		later := all[j]
		if !later.fresh {
			continue
		}
		for i := 0; i < j; i++ {
			earlier := all[i]
			if !earlier.u.Live() || earlier.u.Agent != later.u.Agent || earlier.u.Type != later.u.Type || earlier.u.ID == later.u.ID {
				continue
			}
			if later.u.Type == TypeActionItem && owners(earlier.u) != owners(later.u) {
				continue
			}
			if !SameTopic(earlier.key, later.key) {
				continue
			}
			earlier.u.SupersededBy = later.u.ID
			later.u.Supersedes = append(later.u.Supersedes, earlier.u.ID)
			slices.Sort(later.u.Supersedes)
			if !earlier.fresh {
				superseded = append(superseded, earlier.u.ID)
			}
		}
	}
	slices.Sort(superseded)
	return superseded, nil
}

func owners(u *Unit) string {
	var o []string
	for _, a := range u.ActionItems {
		o = append(o, a.Owner)
	}
	slices.Sort(o)
	return strings.Join(o, "\x00")
}
