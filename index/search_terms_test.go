package index

import (
	"testing"

	"github.com/lazymem/lazymem/index/analysis"
)

// TestSearchTerms: terms given as they are count as the query's own
// words would (a repeated one twice), and are not analysed: a CJK bigram
// given alone finds the records holding it but not those holding only one
// of its characters, which the same word in the query text finds.
func TestSearchTerms(t *testing.T) {
	an, err := newProjectAnalyzer(analysis.Options{CJKUnigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Open("", Options{Analyzer: an}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := []*Doc{
		{ID: 1, Agent: "a", Text: "明天下午发货"},
		{ID: 2, Agent: "a", Text: "新版本今晚发布"},
		{ID: 3, Agent: "a", Text: "the parcel ships tomorrow"},
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	ids := func(hits []Hit) []uint64 {
		var out []uint64
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}
	text, err := x.Search("parcel 发货", nil, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(text); len(got) != 3 {
		t.Fatalf("the word in the text: %v, want all three (发 is 发布's)", got)
	}
	terms, err := x.SearchTerms("parcel", []string{"发货"}, nil, FilterKey{}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(terms); len(got) != 2 || got[0] == 2 || got[1] == 2 {
		t.Fatalf("the bigram as a term: %v, want 1 and 3", got)
	}
	// A term given twice weighs as a word written twice.
	twice, _ := x.SearchTerms("parcel", []string{"发货", "发货"}, nil, FilterKey{}, 10, nil)
	written, _ := x.SearchTerms("parcel", nil, nil, FilterKey{}, 10, nil)
	var s1, s2, sw float64
	for _, h := range terms {
		if h.ID == 1 {
			s1 = h.Score
		}
	}
	for _, h := range twice {
		if h.ID == 1 {
			s2 = h.Score
		}
	}
	for _, h := range written {
		if h.ID == 1 {
			sw = h.Score
		}
	}
	if sw != 0 || s1 <= 0 || s2 < 1.99*s1 || s2 > 2.01*s1 {
		t.Fatalf("record 1 scored %v alone, %v once, %v twice", sw, s1, s2)
	}
	// A term the analyser never emits (upper case, a space) matches nothing.
	none, _ := x.SearchTerms("", []string{"PARCEL", "the parcel"}, nil, FilterKey{}, 10, nil)
	if len(none) != 0 {
		t.Fatalf("unanalysed forms matched %v", ids(none))
	}
}
