package suite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/lazymem/lazymem/bench/eager"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// lazySystem is lazymem behind the eager.Baseline interface: a store in a
// fresh temporary directory, opened with the metered embedder; records are
// appended (nothing embedded), queries are default lazy recalls.
type lazySystem struct {
	db     *engine.DB
	dir    string
	meter  *eager.Meter
	buf    []engine.Record
	bytes  int64
	cands  int
	closed bool
	// stream is the clock's time while a Live stream is ingested (unix
	// nanoseconds of the last batch's last record; 0: the real clock).
	stream atomic.Int64
	live   bool
}

func newLazy(parent string, e embed.Embedder, apiBatch int, cfg *Config) (*lazySystem, error) {
	dir, err := os.MkdirTemp(parent, "lazymem-suite-")
	if err != nil {
		return nil, err
	}
	m := eager.NewMeter(e, apiBatch)
	l := &lazySystem{dir: dir, meter: m, cands: cfg.Candidates, live: cfg.Live}
	opts := engine.Options{Embedder: m, DisableSessionContext: cfg.DisableSessionContext}
	opts.Index.ContextSample, opts.Index.ContextWeight = cfg.ContextSample, cfg.ContextWeight
	if cfg.Live {
		opts.Clock = func() time.Time {
			if ns := l.stream.Load(); ns != 0 {
				return time.Unix(0, ns)
			}
			return time.Now()
		}
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	l.db = db
	return l, nil
}

func (l *lazySystem) Name() string { return SystemLazymem }

func (l *lazySystem) Ingest(ctx context.Context, recs []workload.Record) error {
	l.buf = l.buf[:0]
	for i := range recs {
		r := &recs[i]
		l.buf = append(l.buf, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
	}
	if l.live && len(recs) > 0 {
		l.stream.Store(recs[len(recs)-1].Time.UnixNano())
	}
	_, err := l.db.AppendBatch(ctx, l.buf)
	return err
}

func (l *lazySystem) Query(ctx context.Context, q workload.Query, k int) ([]int, error) {
	l.stream.Store(0) // queries on the real clock
	res, err := l.db.Recall(ctx, engine.Query{Text: q.Text, Agent: q.Agent, Since: q.Since, Until: q.Until, K: k, Candidates: l.cands})
	if err != nil {
		return nil, err
	}
	out := make([]int, len(res.Memories))
	for i, m := range res.Memories {
		// Ids are assigned from 1 in append order into a fresh store.
		out[i] = int(m.ID) - 1
	}
	return out, nil
}

// Bytes is the store's directory size on disk, measured at Close (the
// index is flushed then); before Close, the current size.
func (l *lazySystem) Bytes() int64 {
	if l.closed {
		return l.bytes
	}
	n, _ := dirSize(l.dir)
	return n
}

func (l *lazySystem) Usage() eager.Usage { return l.meter.Usage() }

func (l *lazySystem) Close() error {
	if l.closed {
		return eager.ErrClosed
	}
	l.closed = true
	err := l.db.Close()
	n, serr := dirSize(l.dir)
	l.bytes = n
	if rerr := os.RemoveAll(l.dir); err == nil {
		err = rerr
	}
	if err == nil && serr != nil {
		err = fmt.Errorf("lazymem: suite: size of %s: %w", l.dir, serr)
	}
	return err
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
