package eager

import (
	"context"
	"fmt"
	"strconv"

	chromem "github.com/philippgille/chromem-go"

	"github.com/lazymem/lazymem/bench/workload"
)

// chromemBase is the off-the-shelf choice: one chromem-go in-memory
// collection holding every agent's records, the agent as metadata, searched
// with chromem's own where filter. Vectors are computed by our embedder (in
// batches, metered) and added precomputed with AddConcurrently; the
// collection's embedding func is the same metered embedder, for any text
// chromem would embed itself.
type chromemBase struct {
	common
	db   *chromem.DB
	coll *chromem.Collection
	meta int64 // metadata and id bytes stored
}

func newChromem(opts Options) (*chromemBase, error) {
	c := &chromemBase{common: newCommon(opts), db: chromem.NewDB()}
	ef := func(ctx context.Context, text string) ([]float32, error) {
		v, err := c.embedQuery(ctx, text)
		return v, err
	}
	coll, err := c.db.CreateCollection("memories", nil, ef)
	if err != nil {
		return nil, fmt.Errorf("%w: chromem: %w", ErrBackend, err)
	}
	c.coll = coll
	return c, nil
}

func (c *chromemBase) Name() string { return "chromem" }

func (c *chromemBase) Ingest(ctx context.Context, recs []workload.Record) error {
	return c.embedAll(ctx, recs, func(first int, batch []workload.Record, texts []string, vecs [][]float32) error {
		ids := make([]string, len(batch))
		metas := make([]map[string]string, len(batch))
		for i := range batch {
			ids[i] = strconv.Itoa(first + i)
			metas[i] = map[string]string{"agent": batch[i].Agent}
			c.meta += int64(len(ids[i]) + len("agent") + len(batch[i].Agent))
		}
		if err := c.coll.AddConcurrently(ctx, ids, vecs, metas, texts, c.opts.Concurrency); err != nil {
			return fmt.Errorf("%w: chromem add: %w", ErrBackend, err)
		}
		return nil
	})
}

func (c *chromemBase) Query(ctx context.Context, q workload.Query, k int) ([]int, error) {
	qv, err := c.embedQuery(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	total := c.coll.Count()
	if k <= 0 || total == 0 {
		return nil, nil
	}
	w := windowOf(q)
	want := c.firstAsk(q.Agent, w, k)
	where := map[string]string{"agent": q.Agent}
	var out []int
	for {
		want = min(want, total)
		res, err := c.coll.QueryEmbedding(ctx, qv, want, where, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: chromem query: %w", ErrBackend, err)
		}
		out = out[:0]
		for _, r := range res {
			ord, err := strconv.Atoi(r.ID)
			if err != nil || ord < 0 || ord >= len(c.times) {
				return nil, fmt.Errorf("%w: chromem returned unknown id %q", ErrBackend, r.ID)
			}
			if w.has(c.times[ord]) {
				out = append(out, ord)
				if len(out) == k {
					break
				}
			}
		}
		// Fewer results than asked: the agent's records are exhausted.
		if len(out) >= k || len(res) < want || want >= total {
			break
		}
		want *= 2
	}
	return out, nil
}

// Bytes: the vectors, the stored text, ids and agent metadata (payload;
// chromem's per-document struct and map overhead shows in the heap figure
// the suite measures).
func (c *chromemBase) Bytes() int64 {
	if c.closed {
		return 0
	}
	return int64(c.coll.Count())*int64(c.opts.Embedder.Dim())*4 + c.meta + c.textBytes()
}

func (c *chromemBase) Close() error {
	if c.closed {
		return ErrClosed
	}
	c.closed = true
	c.db, c.coll, c.texts, c.times = nil, nil, nil, nil
	return nil
}
