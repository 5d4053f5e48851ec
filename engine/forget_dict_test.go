package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetPurgeDictionary is TestForgetPurge's file scan on a store big
// enough for the log to build its zstd dictionary from the first texts
// it seals: records forgotten from among those texts are in no file of
// the store after Compact (the dictionary is rebuilt from live text), and
// the kept records read back.
func TestForgetPurgeDictionary(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	var recs []Record
	var gone []uint64
	var tokens []string
	words := strings.Fields("the deploy of the billing service moved to friday after the review and alice asked bob about the cache size")
	for i := range 8000 {
		r := Record{Agent: "A", Session: fmt.Sprintf("s%d", i/50), Role: "user"}
		if i < 4000 && i%40 == 7 {
			var toks []string
			for k := range 20 {
				toks = append(toks, fmt.Sprintf("vellichor%03dq%02d", i/40, k))
			}
			tokens = append(tokens, toks...)
			r.Text = strings.Join(toks, " ")
			gone = append(gone, uint64(i+1))
		} else {
			var b strings.Builder
			for k := range 8 + i%20 {
				b.WriteString(words[(i*7+k*3)%len(words)])
				b.WriteByte(' ')
			}
			r.Text = b.String()
		}
		recs = append(recs, r)
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != 1 {
		t.Fatalf("first id %d", ids[0])
	}
	if err := db.log.Seal(); err != nil {
		t.Fatal(err)
	}
	res, err := db.Forget(ctx, Selector{IDs: gone})
	if err != nil || res.Forgotten != len(gone) {
		t.Fatalf("forgot %+v (%v), want %d", res, err, len(gone))
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		got, err := db.Get(ctx, ids[i])
		if i < 4000 && i%40 == 7 {
			if err == nil {
				t.Fatalf("forgotten record %d still served", ids[i])
			}
			continue
		}
		if err != nil || got.Text != r.Text {
			t.Fatalf("record %d: %q %v", ids[i], got.Text, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ims := storetest.Images(t, dir)
	for _, tok := range tokens {
		if where := storetest.Find(ims, []byte(tok)); len(where) > 0 {
			t.Fatalf("%q is still in %s", tok, strings.Join(where, ", "))
		}
	}
	if len(storetest.Find(ims, []byte("billing"))) == 0 {
		t.Fatal("the scan finds nothing at all: it is broken")
	}
}
