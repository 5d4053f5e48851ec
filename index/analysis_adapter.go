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
	A    *analysis.Analyzer
	pool sync.Pool // *[]analysis.Token
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

// Terms implements Analyzer.
func (p *ProjectAnalyzer) Terms(dst []string, text string) []string {
	bp, _ := p.pool.Get().(*[]analysis.Token)
	if bp == nil {
		bp = new([]analysis.Token)
	}
	toks := p.A.AppendTokens((*bp)[:0], text)
	for _, t := range toks {
		dst = append(dst, t.Term)
	}
	*bp = toks[:0]
	p.pool.Put(bp)
	return dst
}

var projectAnalyzer = sync.OnceValue(func() Analyzer {
	a, err := NewProjectAnalyzer(analysis.Options{})
	if err != nil {
		return SimpleAnalyzer{} // cannot happen with zero options; stay usable
	}
	return a
})

func init() { defaultAnalyzer = projectAnalyzer }
