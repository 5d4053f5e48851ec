package eager

import (
	"context"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
)

// Latency wraps an Embedder and waits before each Embed call: PerCall once,
// plus PerText for each text. It models a remote embedding API
// around a local embedder so that lazy and eager pipelines can be compared
// by the cost they would pay. Name is the wrapped embedder's.
type Latency struct {
	embed.Embedder
	// PerCall is waited once per Embed call.
	PerCall time.Duration
	// PerText is waited once per text.
	PerText time.Duration
}

// NewLatency wraps e with a fixed delay per call (and none per text).
func NewLatency(e embed.Embedder, perCall time.Duration) *Latency {
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

// RecommendedFusion is the wrapped embedder's (embed.FusionAdvisor), or
// none: the delay changes no vector.
func (l *Latency) RecommendedFusion() embed.Fusion { return advice(l.Embedder) }

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
