package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Analyzer turns text into index terms. Documents and queries are analysed
// by the same Analyzer. Terms appends to dst and returns it, so callers can
// reuse a buffer; returned strings may alias text.
type Analyzer interface {
	Terms(dst []string, text string) []string
}

// SimpleAnalyzer lowercases and splits on every rune that is neither a
// letter nor a digit. It has no stemming and no stopwords; it is the
// fallback used by tests and when no better analyzer is configured.
type SimpleAnalyzer struct{}

// Terms implements Analyzer.
func (SimpleAnalyzer) Terms(dst []string, text string) []string {
	start := -1
	lower := true // whether text[start:i] is already lower case ASCII
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		word := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if word {
			if start < 0 {
				start, lower = i, true
			}
			if r >= utf8.RuneSelf || r >= 'A' && r <= 'Z' {
				lower = false
			}
		} else if start >= 0 {
			dst = appendTerm(dst, text[start:i], lower)
			start = -1
		}
		i += size
	}
	if start >= 0 {
		dst = appendTerm(dst, text[start:], lower)
	}
	return dst
}

func appendTerm(dst []string, w string, lower bool) []string {
	if !lower {
		w = strings.ToLower(w)
	}
	return append(dst, w)
}

// Signature names the analysis rules; see analyzerSignature.
func (SimpleAnalyzer) Signature() string { return "simple/v1" }

// analyzerSignature returns a's Signature() when it has one. The manifest
// records it: segments built with other analysis rules would answer queries
// with mismatched terms, so Open rebuilds them from the log.
func analyzerSignature(a Analyzer) string {
	if s, ok := a.(interface{ Signature() string }); ok {
		return s.Signature()
	}
	return ""
}

// defaultAnalyzer is replaced by the project analyzer adapter when
// index/analysis is available (see analysis_adapter.go).
var defaultAnalyzer = func() Analyzer { return SimpleAnalyzer{} }
