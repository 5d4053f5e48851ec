package use

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// chatTexts are the golden file's chat turns (LoCoMo conversation 26):
// 13 to 103 tokens, 33 on average.
func chatTexts(b *testing.B) []string {
	var out []string
	for _, c := range loadGolden(b) {
		if len(c.IDs) >= 10 && len(c.IDs) <= 128 {
			out = append(out, c.Text)
		}
	}
	return out
}

func benchModel(b *testing.B, opts Options) *USE {
	b.Helper()
	u, err := New(modelDir(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	return u
}

// BenchmarkEmbed reports the time per text (ms/text) for one text per call
// and for batches, on one worker and on all.
func BenchmarkEmbed(b *testing.B) {
	texts := chatTexts(b)
	for _, workers := range []int{1, 2} {
		u := benchModel(b, Options{Workers: workers})
		tokens := 0
		for _, t := range texts {
			tokens += min(len(u.Tokenizer().Encode(t)), u.MaxTokens())
		}
		for _, batch := range []int{1, 16, 64} {
			if batch == 1 && workers > 1 {
				continue // one text is one batch: one worker (see BenchmarkEmbedTokens for split=true)
			}
			b.Run(fmt.Sprintf("batch=%d/workers=%d", batch, workers), func(b *testing.B) {
				b.ReportAllocs()
				in := make([]string, batch)
				done := 0
				cpu0 := cpuTime()
				for b.Loop() {
					for j := range in {
						in[j] = texts[(done+j)%len(texts)]
					}
					done += batch
					if _, err := u.Embed(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cpuTime() - cpu0
				ms := float64(b.Elapsed().Nanoseconds()) / 1e6 / float64(done)
				b.ReportMetric(ms, "ms/text")
				// Process CPU time per text: on a shared machine, wall
				// time includes waiting for a core; this does not.
				b.ReportMetric(cpu.Seconds()*1e3/float64(done), "cpu-ms/text")
				b.ReportMetric(float64(tokens)/float64(len(texts)), "tokens/text")
			})
		}
	}
}

func BenchmarkTokenize(b *testing.B) {
	texts := chatTexts(b)
	u := benchModel(b, Options{})
	var s tokScratch
	var ids []int32
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			ids = u.tok.AppendIDs(ids[:0], t, &s)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := modelDir(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedTokens shows how the cost grows with the text's length:
// "the the ... the" is one token per word. Linear parts dominate up to
// the 128-token cap; attention adds a quadratic term.
func BenchmarkEmbedTokens(b *testing.B) {
	benchEmbedTokens(b, Options{Workers: 1}, "workers=1")
	benchEmbedTokens(b, Options{Workers: 2, SplitProducts: true}, "workers=2/split=true")
}

func benchEmbedTokens(b *testing.B, opts Options, label string) {
	u := benchModel(b, opts)
	for _, n := range []int{1, 8, 32, 128} {
		text := strings.TrimSpace(strings.Repeat("the ", n))
		if got := len(u.Tokenizer().Encode(text)); got != n {
			b.Fatalf("%d words gave %d tokens", n, got)
		}
		b.Run(fmt.Sprintf("tokens=%d/%s", n, label), func(b *testing.B) {
			b.ReportAllocs()
			in := []string{text}
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := u.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/text")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/text")
		})
	}
}

// BenchmarkTokenizeLong: a 1 MB text, whole (AppendIDs) and only as far
// as the model reads (AppendIDsMax with 128).
func BenchmarkTokenizeLong(b *testing.B) {
	u := benchModel(b, Options{})
	text := strings.Repeat("We decided to use PostgreSQL for the database; the pool holds 20 connections. ", 1<<20/80)
	var s tokScratch
	var ids []int32
	for _, impl := range []string{"whole", "max128"} {
		b.Run("impl="+impl, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if impl == "whole" {
					ids = u.tok.AppendIDs(ids[:0], text, &s)
				} else {
					ids = u.tok.AppendIDsMax(ids[:0], text, 128, &s)
				}
			}
		})
	}
}
