package engine

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// FormatContext renders memories as a prompt block of at most budget
// characters (runes), one memory per line in time order:
//
//	[2026-03-02 14:05] (sess-12) user: the pool size is 20 in staging
//
// When everything does not fit, the best-scored memories are kept (by
// Score, then earlier time) and a text longer than what is left of the
// budget is cut with "…". Memories are never reordered by score in the
// output: the reader sees a timeline. budget <= 0 returns "".
func FormatContext(memories []Memory, budget int) string {
	if budget <= 0 || len(memories) == 0 {
		return ""
	}
	order := make([]int, len(memories))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(memories[b].Score, memories[a].Score); c != 0 {
			return c
		}
		return memories[a].Time.Compare(memories[b].Time)
	})
	lines := make([]string, len(memories))
	left := budget
	for _, i := range order {
		if left <= 0 {
			break
		}
		head := formatHead(&memories[i])
		hl := utf8.RuneCountInString(head)
		if hl+2 > left { // not even the header and one character of text
			continue
		}
		text := strings.Join(strings.Fields(memories[i].Text), " ")
		room := left - hl - 1 // the newline
		if utf8.RuneCountInString(text) > room {
			text = truncRunes(text, room-1) + "…"
		}
		lines[i] = head + text
		left -= utf8.RuneCountInString(lines[i]) + 1
	}
	idx := make([]int, 0, len(memories))
	for i := range memories {
		if lines[i] != "" {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := memories[a].Time.Compare(memories[b].Time); c != 0 {
			return c
		}
		return cmp.Compare(memories[a].ID, memories[b].ID)
	})
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(lines[i])
		b.WriteByte('\n')
	}
	return b.String()
}

func formatHead(m *Memory) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(m.Time.Format("2006-01-02 15:04"))
	b.WriteString("] ")
	if m.Session != "" {
		b.WriteByte('(')
		b.WriteString(m.Session)
		b.WriteString(") ")
	}
	if m.Role != "" {
		b.WriteString(m.Role)
		b.WriteString(": ")
	}
	return b.String()
}

func truncRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
