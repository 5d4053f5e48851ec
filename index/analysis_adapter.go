package index

import (
	"sync"

	"github.com/lazymem/lazymem/index/analysis"
)

// ProjectAnalyzer adapts the project tokenizer (index/analysis: Unicode
// words, NFKC and case folding, CJK bigrams, Porter2 stemming, stopwords,
// identifiers) to the Analyzer interface without allocating per call in
// steady state.
type ProjectAnalyzer struct {
	A *analysis.Analyzer
}

// NewProjectAnalyzer returns the project analyzer with the given options.
func NewProjectAnalyzer(opts analysis.Options) (*ProjectAnalyzer, error) {
	a, err := analysis.New(opts)
	if err != nil {
		return nil, err
	}
	return &ProjectAnalyzer{A: a}, nil
}

// Signature is the project analyzer's signature (rules version and options).
func (p *ProjectAnalyzer) Signature() string { return p.A.Signature() }

// Terms implements Analyzer. It appends the terms straight to dst
// (AppendTerms), without the positions the index does not use.
func (p *ProjectAnalyzer) Terms(dst []string, text string) []string {
	return p.A.AppendTerms(dst, text)
}

var projectAnalyzer = sync.OnceValue(func() Analyzer {
	a, err := NewProjectAnalyzer(analysis.Options{})
	if err != nil {
		return SimpleAnalyzer{} // cannot happen with zero options; stay usable
	}
	return a
})

func init() { defaultAnalyzer = projectAnalyzer }
