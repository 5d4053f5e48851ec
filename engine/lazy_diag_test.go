//go:build diag

package engine

import (
	"fmt"
	"testing"
	"time"
)

// TestLazyInitDiag times the first and a second use of each table the
// package parses on first use (warmTables), in a process that has not
// opened a DB:
//
//	go test -tags diag ./engine -run TestLazyInitDiag -v
func TestLazyInitDiag(t *testing.T) {
	for _, f := range []struct {
		name string
		fn   func()
	}{
		{"lexicon", func() { builtinLexicon() }},
		{"categories", func() { builtinCategories() }},
		{"stopSet", func() { stopSet() }},
		{"queryAnalyzer", func() { queryAnalyzer() }},
		{"feedbackFrame", func() { feedbackFrame() }},
		{"questionForm", func() { theLexicon().questionForm() }},
	} {
		t0 := time.Now()
		f.fn()
		d1 := time.Since(t0)
		t0 = time.Now()
		f.fn()
		fmt.Printf("%s: first %v, again %v\n", f.name, d1, time.Since(t0))
	}
}
