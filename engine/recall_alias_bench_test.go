package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAliases measures what the alias table adds to a recall: a
// store of n Chinese chat turns, one in a hundred defining a nickname;
// aliases=off|on is a warm sparse recall of a question naming a person by
// the rare name, table=rebuild the table built from scratch (the first
// recall of an agent, or the first after a Forget).
//
//	go test -run '^$' -bench BenchmarkAliases -benchmem ./engine/
func BenchmarkAliases(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{2000, 20000} {
		db, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		recs := make([]Record, 0, n)
		for i := range n {
			text := fmt.Sprintf("今天第%d天，老王%d说周末一起去爬山，顺便聊聊项目的进度和预算。", i, i%50)
			if i%100 == 0 {
				text = fmt.Sprintf("同事王建%d，大家都叫他老王%d。", i%50, i%50)
			}
			recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("s%d", i/10), Role: "user", Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			b.Fatal(err)
		}
		q := Query{Agent: "a", Text: "王建7周末要去哪里？", K: 10, Mode: ModeSparse}
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/aliases=%s", n, map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
				defer func(was bool) { useAliases = was }(useAliases)
				useAliases = on
				if _, err := db.Recall(ctx, q); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := db.Recall(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("n=%d/table=rebuild", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				db.aliases.mu.Lock()
				db.aliases.m = nil
				db.aliases.mu.Unlock()
				if _, err := db.aliasesFor([]string{"a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		db.Close()
	}
}
