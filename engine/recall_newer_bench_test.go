package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkNewer measures what recall_newer.go's settling turns and the
// named user's first person add to a warm sparse recall: a store of n
// chat turns, sessions of ten alternating between a user named by name
// and the assistant, every fifth user turn settling a date ("那就…吧").
// rule=settle is a question about the current state with settleWindow 2
// (on) or 0 (off); rule=named-I a first-person question with
// namedFirstPerson on or off.
//
//	go test -run '^$' -bench BenchmarkNewer -benchmem ./engine/
func BenchmarkNewer(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{2000, 20000} {
		db, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		recs := make([]Record, 0, n)
		for i := range n {
			role, text := "周婷", fmt.Sprintf("第%d天：项目%d的上线时间要么定在%d号？我周末想去爬山。", i, i%50, i%28+1)
			switch {
			case i%2 == 1:
				role, text = "assistant", fmt.Sprintf("好的，项目%d的事我记下了。", i%50)
			case i%10 == 4:
				text = fmt.Sprintf("算了，那就%d号吧。", i%28+1)
			}
			recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("s%d", i/10), Role: role, Text: text, Time: t0.Add(time.Duration(i) * time.Minute)})
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			b.Fatal(err)
		}
		for _, rule := range []struct {
			name string
			text string
			set  func(on bool) func()
		}{
			{"settle", "项目7最后定在哪天上线？", func(on bool) func() {
				was := settleWindow
				settleWindow = map[bool]int{false: 0, true: 2}[on]
				return func() { settleWindow = was }
			}},
			{"slot", "项目7的上线时间是几号？", func(on bool) func() {
				was, f := slotOn, slotTypeBoost
				slotOn, slotTypeBoost = on, map[bool]float32{false: 1, true: f}[on]
				return func() { slotOn, slotTypeBoost = was, f }
			}},
			{"named-I", "我周末想去哪里？", func(on bool) func() {
				was := namedFirstPerson
				namedFirstPerson = on
				return func() { namedFirstPerson = was }
			}},
		} {
			q := Query{Agent: "a", Text: rule.text, K: 10, Mode: ModeSparse}
			for _, on := range []bool{false, true} {
				b.Run(fmt.Sprintf("n=%d/rule=%s/%s", n, rule.name, map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
					defer rule.set(on)()
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
		}
		db.Close()
	}
}
