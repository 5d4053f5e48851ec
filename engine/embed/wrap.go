package embed

import (
	"context"
	"sync/atomic"
	"time"
)

// Counting wraps an Embedder and counts, atomically, the Embed calls made
// and the texts passed. It changes no vector, so Name is the wrapped
// embedder's: a cache shared with the unwrapped embedder stays valid. Tests
// use it to prove that a lazy recall embeds only what it must.
type Counting struct {
	Embedder
	calls atomic.Int64
	texts atomic.Int64
}

// NewCounting wraps e.
func NewCounting(e Embedder) *Counting { return &Counting{Embedder: e} }

// Embed counts the call and its texts (also when it fails), then delegates.
// A call with no texts is counted as a call.
func (c *Counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// Calls returns the number of Embed calls so far.
func (c *Counting) Calls() int64 { return c.calls.Load() }

// Texts returns the number of texts passed to Embed so far.
func (c *Counting) Texts() int64 { return c.texts.Load() }

// Reset sets both counters to zero.
func (c *Counting) Reset() {
	c.calls.Store(0)
	c.texts.Store(0)
}

// Latency wraps an Embedder and waits before each Embed call: PerCall once,
// plus PerText for each text. It models a remote embedding API (issue 6)
// around a local embedder so that lazy and eager pipelines can be compared
// by the cost they would pay. Name is the wrapped embedder's.
type Latency struct {
	Embedder
	// PerCall is waited once per Embed call.
	PerCall time.Duration
	// PerText is waited once per text.
	PerText time.Duration
}

// NewLatency wraps e with a fixed delay per call (and none per text).
func NewLatency(e Embedder, perCall time.Duration) *Latency {
	return &Latency{Embedder: e, PerCall: perCall}
}

// Embed waits PerCall + len(texts)*PerText, or until ctx is done, then
// delegates.
func (l *Latency) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := sleepCtx(ctx, l.PerCall+time.Duration(len(texts))*l.PerText); err != nil {
		return nil, err
	}
	return l.Embedder.Embed(ctx, texts)
}

// sleepCtx waits d or until ctx is done, whichever comes first, and returns
// ctx.Err() in the second case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
