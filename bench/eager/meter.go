package eager

import (
	"context"
	"sync/atomic"

	"github.com/lazymem/lazymem/engine/embed"
)

// DefaultAPIBatch is the most texts one request of the modelled remote
// embedding API carries: OpenAI-compatible clients batch 96 texts by default
// (embed.DefaultOpenAIBatchSize).
const DefaultAPIBatch = embed.DefaultOpenAIBatchSize

// Usage is what an embedder was asked to do.
type Usage struct {
	// Calls is the number of Embed calls.
	Calls int64 `json:"calls"`
	// Texts is the number of texts embedded.
	Texts int64 `json:"texts"`
	// APICalls is the number of requests a remote API taking at most
	// APIBatch texts per request would have served: the sum over calls of
	// ceil(texts/APIBatch), and 1 for a call with no text.
	APICalls int64 `json:"api_calls"`
}

// Sub returns u - v, the usage between two snapshots.
func (u Usage) Sub(v Usage) Usage {
	return Usage{Calls: u.Calls - v.Calls, Texts: u.Texts - v.Texts, APICalls: u.APICalls - v.APICalls}
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Calls: u.Calls + v.Calls, Texts: u.Texts + v.Texts, APICalls: u.APICalls + v.APICalls}
}

// Meter wraps an Embedder and counts, atomically, its calls, texts and
// modelled API requests. Name, Dim and the vectors are the wrapped
// embedder's, so lazymem's embedding cache keys do not change. Safe for
// concurrent use when the wrapped embedder is.
type Meter struct {
	embed.Embedder
	apiBatch int64
	calls    atomic.Int64
	texts    atomic.Int64
	api      atomic.Int64
}

// NewMeter wraps e. apiBatch <= 0 means DefaultAPIBatch.
func NewMeter(e embed.Embedder, apiBatch int) *Meter {
	if apiBatch <= 0 {
		apiBatch = DefaultAPIBatch
	}
	return &Meter{Embedder: e, apiBatch: int64(apiBatch)}
}

// Embed counts the call (also when it fails), then delegates.
func (m *Meter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := int64(len(texts))
	m.calls.Add(1)
	m.texts.Add(n)
	req := (n + m.apiBatch - 1) / m.apiBatch
	if req == 0 {
		req = 1
	}
	m.api.Add(req)
	return m.Embedder.Embed(ctx, texts)
}

// RecommendedFusion is the wrapped embedder's (embed.FusionAdvisor), or
// no recommendation when it makes none: a Meter changes no vector, so
// the engine fuses as it would with the embedder alone.
func (m *Meter) RecommendedFusion() embed.Fusion { return advice(m.Embedder) }

// advice is e's fusion recommendation, or the zero Fusion (none).
func advice(e embed.Embedder) embed.Fusion {
	if a, ok := e.(embed.FusionAdvisor); ok {
		return a.RecommendedFusion()
	}
	return embed.Fusion{}
}

// Usage returns the counts so far.
func (m *Meter) Usage() Usage {
	return Usage{Calls: m.calls.Load(), Texts: m.texts.Load(), APICalls: m.api.Load()}
}
