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

// TermsKeyed implements keyedAnalyzer.
func (p *projectAnalyzer) TermsKeyed(dst []string, keys []analysis.TermKey, text string) ([]string, []analysis.TermKey) {
	return p.A.AppendTermsKeyed(dst, keys, text)
}

// keyedAnalyzer is an Analyzer that also returns each term's termHash and
// termPre: the project analyzer's cache keeps the hash beside the term
// (profile: a token was hashed twice, by the analyzer's cache and by the
// chunk's table), and reads the prefix from the surface it scanned (the
// term's bytes, elsewhere, were a cold miss per distinct chunk term).
type keyedAnalyzer interface {
	TermsKeyed(dst []string, keys []analysis.TermKey, text string) ([]string, []analysis.TermKey)
}

var defaultProject = sync.OnceValue(func() Analyzer {
	a, err := newProjectAnalyzer(analysis.Options{})
	if err != nil {
		return SimpleAnalyzer{} // cannot happen with zero options; stay usable
	}
	return a
})

func init() { defaultAnalyzer = defaultProject }
