package index

import (
	"slices"
	"testing"
)

func TestSimpleAnalyzer(t *testing.T) {
	got := SimpleAnalyzer{}.Terms(nil, "Hello, World! connection-pool v2 ÉTÉ")
	want := []string{"hello", "world", "connection", "pool", "v2", "été"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestDefaultAnalyzerIsProject(t *testing.T) {
	x, err := Open("", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, ok := x.opts.Analyzer.(*projectAnalyzer); !ok {
		t.Fatalf("default analyzer %T", x.opts.Analyzer)
	}
	docs := []*Doc{
		{ID: 1, Text: "我们讨论了数据库连接池的预算"},
		{ID: 2, Text: "The connection pools were resized (HikariCP)"},
		{ID: 3, Text: "nothing relevant here"},
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]uint64{"预算": 1, "连接池": 1, "connection pool": 2, "hikaricp": 2} {
		hits, err := x.Search(q, nil, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != want {
			t.Errorf("query %q: hits %v, want top id %d", q, hits, want)
		}
	}
}
