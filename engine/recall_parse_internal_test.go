package engine

import (
	"slices"
	"testing"
)

// TestAppendScriptRuns: a word is cut where it changes between CJK and
// other scripts, so a Latin name glued to Chinese is a word of its own.
func TestAppendScriptRuns(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Emily说了", []string{"Emily", "说了"}},
		{"问Mark吧", []string{"问", "Mark", "吧"}},
		{"2.3版本", []string{"2.3", "版本"}},
		{"Priya", []string{"Priya"}},
		{"王芳", []string{"王芳"}},
	} {
		if got := appendScriptRuns(nil, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("appendScriptRuns(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := stripWords("Emily说了什么？", []string{"Emily"}); got != "说了什么？" {
		t.Errorf("stripWords: %q, want the name gone", got)
	}
}
