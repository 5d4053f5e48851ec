package engine

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSlots measures the slot rules alone (recall_slot.go) on 50
// candidates already read, as fusion hands them over: a question asking
// for a place in English and one asking for an amount in Chinese, the
// rules off (only the copy of the scores each run needs) and on; and a
// keyword query asking for no slot (the 1M benchmark's workload), where
// the rules cost only askedSlot.
//
//	go test -run '^$' -bench BenchmarkSlots -benchmem ./engine/
func BenchmarkSlots(b *testing.B) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, q := range []struct{ name, text, format string }{
		{"place-en", "Where is the spring trade show?", "Update %d: the spring trade show moves to Hall %d in Denver, booth %d."},
		{"amount-zh", "展位预算有多少？", "第%d次周会：展位预算改成%d万，展位编号N3-%d。"},
		{"keywords", "trade show booth budget denver", "Update %d: the spring trade show moves to Hall %d in Denver, booth %d."},
	} {
		cands := make([]cand, 50)
		fused := make([]float32, 50)
		for i := range cands {
			text := fmt.Sprintf(q.format, i, i%7+1, 200+i)
			if i%3 == 1 {
				text = fmt.Sprintf("Agenda %d: the show, the quota, the booth. 议程：展会、目标。", i)
			}
			cands[i] = cand{id: uint64(i), fetched: true, rec: Record{Agent: "a", Session: fmt.Sprintf("s%d", i/5), Role: "Sam", Text: text, Time: t0.Add(time.Duration(i) * time.Hour)}}
			fused[i] = 1 / float32(1+i%17)
		}
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/rules=%v", q.name, on), func(b *testing.B) {
				p := &plan{q: &Query{Text: q.text, K: 17}, text: q.text, denseText: q.text, now: t0.Add(1000 * time.Hour), cands: cands}
				p.fused = make([]float32, len(fused))
				b.ReportAllocs()
				for range b.N {
					copy(p.fused, fused)
					p.res.Stats.Notes = p.res.Stats.Notes[:0]
					if on {
						if err := p.slots(askedSlot(p.q.Text)); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
