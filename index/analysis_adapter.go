package index

import (
	"sync"

	"github.com/lazymem/lazymem/index/analysis"
)

// projectAnalyzer adapts the project tokenizer (index/analysis: Unicode
// words, NFKC and case folding, CJK bigrams, Porter2 stemming, stopwords,
// identifiers) to the Analyzer interface without allocating per call in
// steady state.
type projectAnalyzer struct {
	A *analysis.Analyzer
}

// newProjectAnalyzer returns the project analyzer with the given options.
func newProjectAnalyzer(opts analysis.Options) (*projectAnalyzer, error) {
	a, err := analysis.New(opts)
	if err != nil {
		return nil, err
	}
	return &projectAnalyzer{A: a}, nil
}

// Signature is the project analyzer's signature (rules version and options).
func (p *projectAnalyzer) Signature() string { return p.A.Signature() }

// Terms implements Analyzer. It appends the terms straight to dst
// (AppendTerms), without the positions the index does not use.
func (p *projectAnalyzer) Terms(dst []string, text string) []string {
	return p.A.AppendTerms(dst, text)
}

// TermsHashed implements hashedAnalyzer.
func (p *projectAnalyzer) TermsHashed(dst []string, hashes []uint64, text string) ([]string, []uint64) {
	return p.A.AppendTermsHashed(dst, hashes, text)
}

// hashedAnalyzer is an Analyzer that also returns each term's termHash:
// the project analyzer's cache keeps it beside the term (profile: a token
// was hashed twice, by the analyzer's cache and by the chunk's table).
type hashedAnalyzer interface {
	TermsHashed(dst []string, hashes []uint64, text string) ([]string, []uint64)
}

var defaultProject = sync.OnceValue(func() Analyzer {
	a, err := newProjectAnalyzer(analysis.Options{})
	if err != nil {
		return SimpleAnalyzer{} // cannot happen with zero options; stay usable
	}
	return a
})

func init() { defaultAnalyzer = defaultProject }
