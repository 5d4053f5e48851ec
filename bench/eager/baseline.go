package eager

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/lazymem/lazymem/bench/workload"
)

// Baseline is an eager-RAG system under comparison. Records are numbered by
// ingest order from 0 (their ordinal, as in workload.Query.Relevant), across
// Ingest calls.
type Baseline interface {
	// Name is the system's short name in reports: "chromem", "hnsw", "flat".
	Name() string
	// Ingest embeds every record (in batches of Options.EmbedBatch) and
	// stores it with its vector.
	Ingest(ctx context.Context, recs []workload.Record) error
	// Query embeds q.Text and returns the ordinals of the k records of
	// q.Agent most similar to it whose time is in [q.Since, q.Until)
	// (zero bounds are open), best first.
	Query(ctx context.Context, q workload.Query, k int) ([]int, error)
	// Bytes is the size of what the system holds: vectors, stored text,
	// ids and metadata, plus the graph for hnsw (see each implementation).
	Bytes() int64
	// Usage is the embedding work done so far.
	Usage() Usage
	// Close releases the system's memory. Later calls fail with ErrClosed.
	Close() error
}

// Systems lists the baseline names New accepts.
var Systems = []string{"chromem", "hnsw", "flat"}

// New returns the baseline called name (one of Systems).
func New(name string, opts Options) (Baseline, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	switch name {
	case "chromem":
		return newChromem(opts)
	case "hnsw":
		return newHNSW(opts), nil
	case "flat":
		return newFlat(opts), nil
	}
	return nil, fmt.Errorf("%w: unknown baseline %q (want one of %v)", ErrOptions, name, Systems)
}

// common holds what every baseline keeps beside its vectors: the metered
// embedder, each record's time (by ordinal) and its constructed text (what
// a RAG system hands back to the model).
type common struct {
	opts  Options
	meter *Meter
	times []int64 // unix nanoseconds, by ordinal
	texts []string
	// agentTimes holds each agent's record times in ingest order, to
	// estimate how selective a time window is before post-filtering.
	agentTimes map[string][]int64
	closed     bool
}

func newCommon(opts Options) common {
	return common{opts: opts, meter: NewMeter(opts.Embedder, opts.APIBatch), agentTimes: map[string][]int64{}}
}

func (c *common) Usage() Usage { return c.meter.Usage() }

// embedAll embeds the constructed texts of recs in batches, appends the
// records' times and texts, and calls add for each batch with the first
// ordinal of the batch and its vectors.
func (c *common) embedAll(ctx context.Context, recs []workload.Record, add func(first int, batch []workload.Record, texts []string, vecs [][]float32) error) error {
	if c.closed {
		return ErrClosed
	}
	dim := c.opts.Embedder.Dim()
	for start := 0; start < len(recs); start += c.opts.EmbedBatch {
		end := min(start+c.opts.EmbedBatch, len(recs))
		batch := recs[start:end]
		texts := make([]string, len(batch))
		for i := range batch {
			texts[i] = c.opts.Construct(&batch[i])
		}
		vecs, err := c.meter.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrEmbed, err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("%w: %d vectors for %d texts", ErrEmbed, len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != dim {
				return fmt.Errorf("%w: vector %d has length %d, want %d", ErrEmbed, i, len(v), dim)
			}
		}
		first := len(c.times)
		for i := range batch {
			t := batch[i].Time.UnixNano()
			c.times = append(c.times, t)
			c.agentTimes[batch[i].Agent] = append(c.agentTimes[batch[i].Agent], t)
		}
		c.texts = append(c.texts, texts...)
		if err := add(first, batch, texts, vecs); err != nil {
			return err
		}
	}
	return nil
}

// embedQuery embeds one query text.
func (c *common) embedQuery(ctx context.Context, text string) ([]float32, error) {
	if c.closed {
		return nil, ErrClosed
	}
	vecs, err := c.meter.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	if len(vecs) != 1 || len(vecs[0]) != c.opts.Embedder.Dim() {
		return nil, fmt.Errorf("%w: bad query vector", ErrEmbed)
	}
	return vecs[0], nil
}

// window is a query's time window in unix nanoseconds, [lo, hi).
type window struct {
	lo, hi int64
	set    bool
}

func windowOf(q workload.Query) window {
	w := window{lo: minInt64, hi: maxInt64}
	if !q.Since.IsZero() {
		w.lo, w.set = q.Since.UnixNano(), true
	}
	if !q.Until.IsZero() {
		w.hi, w.set = q.Until.UnixNano(), true
	}
	return w
}

func (w window) has(t int64) bool { return t >= w.lo && t < w.hi }

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// firstAsk is how many neighbours a post-filtering baseline first asks for,
// k results wanted in window w of the agent's records: k*Oversample, or more
// when the window holds a small share of the agent's records (the share is
// counted exactly from the record times, so one search usually suffices).
func (c *common) firstAsk(agent string, w window, k int) int {
	if !w.set {
		return k
	}
	ts := c.agentTimes[agent]
	in := 0
	if slices.IsSorted(ts) {
		lo, _ := slices.BinarySearch(ts, w.lo)
		hi, _ := slices.BinarySearch(ts, w.hi)
		in = hi - lo
	} else {
		for _, t := range ts {
			if w.has(t) {
				in++
			}
		}
	}
	ask := k * c.opts.Oversample
	if in > 0 {
		ask = max(ask, int(float64(k)*float64(len(ts))/float64(in)*2))
	}
	return ask
}

// textBytes is the stored text plus one string header per record.
func (c *common) textBytes() int64 {
	var n int64
	for _, t := range c.texts {
		n += int64(len(t)) + 16
	}
	return n + int64(len(c.times))*8
}

var float32NegInf = float32(math.Inf(-1))
