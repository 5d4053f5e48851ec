package analysis

import (
	"math/rand/v2"
	"strings"
)

// Test and benchmark corpora: seeded, deterministic.

var enWords = strings.Fields(`we decided to raise the connection pool size yesterday because
latency spiked during the deploy and users complained about timeouts in checkout
maybe next week we should revisit caching strategy for sessions budget review
meeting notes alice bob carol said she prefers postgres over mysql for analytics
running tests failed flaky retry logs show errors memory leak goroutine fixed it
thanks sounds good let me check tomorrow morning coffee weekend plans hiking trip`)

var idWords = strings.Fields(`HikariCP sess_abc123 v2.1 192.168.0.1 user@example.com snake_case camelCase
maximumPoolSize https://example.com/a/b 12:30 PR#42 don't O'Neil`)

var zhText = []string{"我们", "昨天", "决定", "把", "数据库连接池", "的", "大小", "调到", "二十", "预算", "会议", "记录",
	"延迟", "部署", "用户", "超时", "缓存", "策略", "下周", "再看", "。", "，"}

// corpus returns n English words (with some identifiers) from a seeded
// generator.
func corpus(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		if r.IntN(10) == 0 {
			b.WriteString(idWords[r.IntN(len(idWords))])
		} else {
			w := enWords[r.IntN(len(enWords))]
			if r.IntN(8) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		if r.IntN(12) == 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func zhCorpus(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(zhText[r.IntN(len(zhText))])
	}
	return b.String()
}

func mixedCorpus(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 3))
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch r.IntN(6) {
		case 0:
			b.WriteString(zhText[r.IntN(len(zhText))])
		case 1:
			b.WriteString([]string{"🚀", "café", "naïve", "Straße", "’s", "—", "👍🏽"}[r.IntN(7)])
		default:
			b.WriteString(enWords[r.IntN(len(enWords))])
		}
		b.WriteByte(' ')
	}
	return b.String()
}
