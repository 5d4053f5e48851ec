package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/vecmath"
)

// gatedEmbedder blocks each Embed call until gate is closed (or its ctx
// ends), then embeds with the hash embedder, or fails with fail.
type gatedEmbedder struct {
	embed.Embedder
	gate    chan struct{}
	called  chan struct{} // closed at the first call
	once    sync.Once
	fail    error
	mu      sync.Mutex
	ctxErrs []error // ctx.Err() of each call once the gate opened
}

func newGated(t *testing.T, fail error) *gatedEmbedder {
	h, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	return &gatedEmbedder{Embedder: h, gate: make(chan struct{}), called: make(chan struct{}), fail: fail}
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.once.Do(func() { close(g.called) })
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.mu.Lock()
	g.ctxErrs = append(g.ctxErrs, ctx.Err())
	g.mu.Unlock()
	if g.fail != nil {
		return nil, g.fail
	}
	return g.Embedder.Embed(ctx, texts)
}

func newTestCache(t *testing.T, emb embed.Embedder, timeout time.Duration, onErr func(error)) *vecCache {
	t.Helper()
	c, err := newVecCache(cacheConfig{fs: vfs.NewMem(), dir: "cache", emb: emb, memBytes: 1 << 20, timeout: timeout, onErr: onErr})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitWaiting waits until n callers wait on the flight of text.
func waitWaiting(c *vecCache, text string, n int) {
	for {
		c.mu.Lock()
		f := c.inflight[cacheKey("a", text)]
		ok := f != nil && f.waiting == n
		c.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSharedEmbeddingDetached: caller A starts the embedding of a text and
// hangs up; caller B, waiting for the same text, still gets its vector, and
// the embedder's context was never cancelled.
func TestSharedEmbeddingDetached(t *testing.T) {
	emb := newGated(t, nil)
	var bgErrs []error
	c := newTestCache(t, emb, time.Minute, func(err error) { bgErrs = append(bgErrs, err) })
	const text = "the connection pool is exhausted"

	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() {
		_, _, err := c.get(ctxA, []string{"a"}, []string{text}, nil)
		errA <- err
	}()
	<-emb.called
	type result struct {
		vecs [][]float32
		st   lookupStats
		err  error
	}
	resB := make(chan result, 1)
	go func() {
		v, st, err := c.get(context.Background(), []string{"a"}, []string{text}, nil)
		resB <- result{v, st, err}
	}()
	waitWaiting(c, text, 2)

	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("A: %v, want context.Canceled", err)
	}
	waitWaiting(c, text, 1) // A left; B still waits
	close(emb.gate)
	b := <-resB
	if b.err != nil {
		t.Fatalf("B failed after A hung up: %v", b.err)
	}
	want, err := emb.Embedder.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	vecmath.Normalize(want[0])
	if !slices.Equal(b.vecs[0], want[0]) {
		t.Errorf("B got %v, want %v", b.vecs[0][:4], want[0][:4])
	}
	if b.st.shared != 1 {
		t.Errorf("B: shared %d, want 1", b.st.shared)
	}
	for _, e := range emb.ctxErrs {
		if e != nil {
			t.Errorf("the shared embedding's context ended: %v", e)
		}
	}
	// The vector A started computing is in the cache for the next caller.
	if _, ok := c.mem.Get(cacheKey("a", text)); !ok {
		t.Error("the detached embedding was not cached")
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if len(bgErrs) != 0 {
		t.Errorf("background errors: %v", bgErrs)
	}
}

// TestSharedEmbeddingTimeout: the detached embedding is bounded by its own
// timeout, and every waiter gets the embedder's error.
func TestSharedEmbeddingTimeout(t *testing.T) {
	emb := newGated(t, nil) // the gate never opens
	c := newTestCache(t, emb, 20*time.Millisecond, nil)
	defer c.close()
	_, _, err := c.get(context.Background(), []string{"a"}, []string{"never embedded"}, nil)
	if !errors.Is(err, ErrEmbed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("get = %v, want ErrEmbed wrapping context.DeadlineExceeded", err)
	}
}

// TestSharedEmbeddingOrphanError: a shared embedding that fails after every
// waiter gave up is a background error: counted in Metrics and handed to
// Options.OnBackgroundError.
func TestSharedEmbeddingOrphanError(t *testing.T) {
	t.Chdir(t.TempDir())
	boom := errors.New("embedding endpoint down")
	emb := newGated(t, boom)
	got := make(chan error, 4)
	o := memStoreOptions(vfs.NewMem())
	o.Embedder = emb
	o.OnBackgroundError = func(err error) { got <- err }
	db, err := Open("store", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AppendBatch(context.Background(), storeRecords()[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := db.Recall(ctx, Query{Agent: "a1", Text: "connection pool"})
		done <- err
	}()
	<-emb.called
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("recall: %v, want context.Canceled", err)
	}
	close(emb.gate)
	bg := <-got
	if !errors.Is(bg, boom) || !errors.Is(bg, ErrEmbed) {
		t.Errorf("background error %v, want the embedder's", bg)
	}
	if n := db.Metrics().BackgroundErrors; n != 1 {
		t.Errorf("Metrics.BackgroundErrors = %d, want 1", n)
	}
	// A failure someone receives is not a background error.
	if _, err := db.Recall(context.Background(), Query{Agent: "a1", Text: "weather"}); !errors.Is(err, boom) {
		t.Fatalf("recall: %v, want the embedder's error", err)
	}
	if n := db.Metrics().BackgroundErrors; n != 1 {
		t.Errorf("after a waited-for failure Metrics.BackgroundErrors = %d, want 1", n)
	}
}

// TestCloseCancelsDetachedEmbedding: Close does not wait for a hung
// embedder: it cancels the detached work, waits for it to return, and
// reports nothing as a background error.
func TestCloseCancelsDetachedEmbedding(t *testing.T) {
	emb := newGated(t, nil) // never opens
	var bg []error
	c := newTestCache(t, emb, time.Hour, func(err error) { bg = append(bg, err) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.get(ctx, []string{"a"}, []string{"hung"}, nil)
		done <- err
	}()
	<-emb.called
	cancel()
	<-done
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if len(bg) != 0 {
		t.Errorf("close reported %v", bg)
	}
}
