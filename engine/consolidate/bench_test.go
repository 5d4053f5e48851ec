package consolidate

import (
	"testing"
)

// BenchmarkValue measures the value score of one chat-sized record, the
// cost an engine pays per record if it scores at append time.
func BenchmarkValue(b *testing.B) {
	var o Options
	o.EnsureDefaults()
	for _, tc := range []struct{ name, text string }{
		{"lang=en/kind=filler", "Let me pull up the dashboard numbers, the latency looks flat this week."},
		{"lang=en/kind=decision", "OK, we decided to go with Postgres for the billing service."},
		{"lang=zh/kind=filler", "我这边看一下支付接口的数据，这周的错误率基本持平。"},
		{"lang=zh/kind=action", "赵强负责通知运维，下周一下午两点前把变更单发出去。"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				o.Value(tc.text, "engineer")
			}
		})
	}
}
