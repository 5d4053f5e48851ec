package analysis

import (
	"fmt"
	"testing"
	"time"

	"github.com/kljensen/snowball/english"
)

// benchMessages returns chat-sized messages (about 30 words) of one kind.
func benchMessages(lang string) []string {
	msgs := make([]string, 512)
	for i := range msgs {
		seed := uint64(i + 1)
		switch lang {
		case "en":
			msgs[i] = corpus(seed, 30)
		case "zh":
			msgs[i] = zhCorpus(seed, 40)
		case "mixed":
			msgs[i] = mixedCorpus(seed, 30)
		}
	}
	return msgs
}

// BenchmarkAnalyze reports MB/s (b.SetBytes) and tokens/s over chat-sized
// messages. cache=off shows the raw segmenter + folding + stemmer cost.
func BenchmarkAnalyze(b *testing.B) {
	for _, lang := range []string{"en", "zh", "mixed"} {
		msgs := benchMessages(lang)
		size := 0
		for _, m := range msgs {
			size += len(m)
		}
		for _, cache := range []string{"on", "off"} {
			b.Run(fmt.Sprintf("lang=%s/cache=%s", lang, cache), func(b *testing.B) {
				o := DefaultOptions()
				if cache == "off" {
					o.CacheSize = -1
				}
				a := mustNew(b, o)
				var dst []Token
				for _, m := range msgs { // warm the cache, size dst
					dst = a.AppendTokens(dst[:0], m)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				tokens := 0
				cpu0 := processCPU()
				for b.Loop() {
					for _, m := range msgs {
						dst = a.AppendTokens(dst[:0], m)
						tokens += len(dst)
					}
				}
				reportCPU(b, processCPU()-cpu0, float64(size), float64(tokens))
			})
		}
	}
}

// reportCPU adds wall-clock tokens/s and, from process CPU time,
// cpu-MB/s and cpu-tokens/s: the cost of the code itself on a shared
// machine (an upper bound: it includes GC and the benchmark harness).
func reportCPU(b *testing.B, cpu time.Duration, bytesPerOp, tokens float64) {
	b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(bytesPerOp*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
		b.ReportMetric(tokens/cpu.Seconds(), "cpu-tokens/s")
	}
}

// BenchmarkAnalyzeCJKUnigrams measures Options.CJKUnigrams on Chinese.
func BenchmarkAnalyzeCJKUnigrams(b *testing.B) {
	msgs := benchMessages("zh")
	size := 0
	for _, m := range msgs {
		size += len(m)
	}
	for _, uni := range []bool{false, true} {
		b.Run(fmt.Sprintf("lang=zh/unigrams=%t", uni), func(b *testing.B) {
			o := DefaultOptions()
			o.CJKUnigrams = uni
			a := mustNew(b, o)
			var dst []Token
			for _, m := range msgs {
				dst = a.AppendTokens(dst[:0], m)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			tokens := 0
			cpu0 := processCPU()
			for b.Loop() {
				for _, m := range msgs {
					dst = a.AppendTokens(dst[:0], m)
					tokens += len(dst)
				}
			}
			reportCPU(b, processCPU()-cpu0, float64(size), float64(tokens))
			b.ReportMetric(float64(tokens)/float64(b.N*len(msgs)), "tokens/msg")
		})
	}
}

// BenchmarkAnalyzeParallel measures the shared cache under contention.
func BenchmarkAnalyzeParallel(b *testing.B) {
	msgs := benchMessages("en")
	a := mustNew(b, DefaultOptions())
	for _, m := range msgs {
		a.AppendTokens(nil, m)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(msgs[0])))
	b.RunParallel(func(pb *testing.PB) {
		var dst []Token
		i := 0
		for pb.Next() {
			dst = a.AppendTokens(dst[:0], msgs[i%len(msgs)])
			i++
		}
	})
}

// BenchmarkStem compares the snowball stemmer called directly with the
// analyzer's cached term lookup on the same words.
func BenchmarkStem(b *testing.B) {
	words := []string{"connections", "running", "decided", "yesterday", "latency", "complained", "timeouts", "strategy", "sessions", "analytics"}
	b.Run("impl=snowball", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			for _, w := range words {
				_ = english.Stem(w, true)
			}
		}
		reportWords(b, processCPU()-cpu0, len(words))
	})
	b.Run("impl=cached", func(b *testing.B) {
		a := mustNew(b, DefaultOptions())
		bufs := make([][]byte, len(words))
		for i, w := range words {
			bufs[i] = []byte(w)
			a.term(bufs[i])
		}
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			for _, w := range bufs {
				_, _, _, _ = a.term(w)
			}
		}
		reportWords(b, processCPU()-cpu0, len(words))
	})
}

func reportWords(b *testing.B, cpu time.Duration, words int) {
	n := float64(b.N * words)
	b.ReportMetric(n/b.Elapsed().Seconds(), "words/s")
	if cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), "cpu-words/s")
	}
}

// BenchmarkBuildPage measures the one-time cost of a 256-rune class page.
func BenchmarkBuildPage(b *testing.B) {
	for b.Loop() {
		bmpPages[0x4e].Store(nil)
		buildPage(0x4e)
	}
}

func BenchmarkParseQuery(b *testing.B) {
	q := `connection pool "max size" -chitchat tag:db -tag:noise agent:a1 session:s2`
	b.SetBytes(int64(len(q)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseQuery(q); err != nil {
			b.Fatal(err)
		}
	}
}
