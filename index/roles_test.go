package index

import (
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestRolesSince: the roles come back in the order first held, a later
// call with the count returns only the new ones, and a reopened index
// lists every role its segments hold.
func TestRolesSince(t *testing.T) {
	fs := vfs.NewMem()
	src := &memSource{}
	open := func() *Index {
		x, err := Open("idx", Options{FS: fs, Analyzer: SimpleAnalyzer{}}, src)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := open()
	add := func(roles ...string) {
		var docs []*Doc
		for _, r := range roles {
			d := &Doc{ID: uint64(len(src.docs) + 1), Time: int64(len(src.docs)+1) * 1e9, Agent: "a", Session: "s", Role: r, Text: "hello there"}
			src.docs = append(src.docs, d)
			docs = append(docs, d)
		}
		if err := x.Add(docs); err != nil {
			t.Fatal(err)
		}
	}
	add("user", "周航", "user", "Daniel Price")
	got, n, err := x.RolesSince(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"user", "周航", "Daniel Price"}; !slices.Equal(got, want) || n != 3 {
		t.Fatalf("RolesSince(0) = %q, %d; want %q, 3", got, n, want)
	}
	add("周航", "方婷")
	got, n, err = x.RolesSince(n)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"方婷"}) || n != 4 {
		t.Fatalf("RolesSince(3) = %q, %d; want [方婷], 4", got, n)
	}
	if got, _, _ := x.RolesSince(99); len(got) != 4 {
		t.Fatalf("RolesSince(99) = %q, want every role", got)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = open()
	defer x.Close()
	got, n, err = x.RolesSince(0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"Daniel Price", "user", "周航", "方婷"}; !slices.Equal(got, want) || n != 4 {
		t.Fatalf("after a reopen RolesSince(0) = %q, %d; want %q, 4", got, n, want)
	}
}
