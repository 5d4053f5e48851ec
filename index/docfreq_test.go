package index

import (
	"slices"
	"testing"
)

// TestDocFreq: document frequencies across a sealed and the mutable
// segment, after a deletion, for an absent term, and after Close.
func TestDocFreq(t *testing.T) {
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]*Doc{
		{ID: 1, Time: 10, Agent: "a", Text: "the connection pool is exhausted"},
		{ID: 2, Time: 20, Agent: "b", Text: "resize the connection pool to 50"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]*Doc{
		{ID: 3, Time: 30, Agent: "a", Text: "lunch was good, the pool was not"},
		{ID: 4, Time: 40, Agent: "a", Text: "lunch again"},
	}); err != nil {
		t.Fatal(err)
	}
	terms := []string{"pool", "connection", "lunch", "absent", "the"}
	check := func(wantN uint64, want []uint64) {
		t.Helper()
		n, df, err := x.DocFreq(terms, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != wantN || !slices.Equal(df, want) {
			t.Errorf("DocFreq = %d, %v; want %d, %v", n, df, wantN, want)
		}
	}
	check(4, []uint64{3, 2, 2, 0, 3})
	if err := x.Delete([]uint64{2, 4}); err != nil {
		t.Fatal(err)
	}
	check(2, []uint64{2, 1, 1, 0, 2})
	dst := make([]uint64, 1, 8)
	if _, df, _ := x.DocFreq(terms[:2], dst); len(df) != 2 || &df[0] != &dst[0] {
		t.Errorf("DocFreq did not reuse dst: %v", df)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := x.DocFreq(terms, nil); err != ErrClosed {
		t.Errorf("DocFreq after Close: %v, want ErrClosed", err)
	}
}
