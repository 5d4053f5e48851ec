package eager

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
)

func TestLatency(t *testing.T) {
	h := hashEmbedder(t)
	m := NewMeter(h, 0)
	l := NewLatency(m, time.Millisecond)
	if l.Name() != h.Name() || l.Dim() != h.Dim() {
		t.Fatalf("name %q dim %d: not the wrapped embedder's", l.Name(), l.Dim())
	}
	if vs, err := l.Embed(context.Background(), []string{"x", "y"}); err != nil || len(vs) != 2 {
		t.Fatalf("%v %v", vs, err)
	}
	// A cancelled context returns before delegating.
	l = &Latency{Embedder: m, PerCall: time.Hour, PerText: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if _, err := l.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if u := m.Usage(); u.Calls != 1 || u.Texts != 2 {
		t.Fatalf("inner usage %+v, want 1 call of 2 texts", u)
	}
}

// TestMeterConcurrent: the counts are atomic and the vectors unchanged.
func TestMeterConcurrent(t *testing.T) {
	h := hashEmbedder(t)
	m := NewMeter(h, 0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := m.Embed(context.Background(), []string{"a", "b", "c"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if u := m.Usage(); u.Calls != 400 || u.Texts != 1200 {
		t.Fatalf("usage %+v, want 400 calls, 1200 texts", u)
	}
	got, err := m.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := h.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want[0] {
		if got[0][i] != want[0][i] {
			t.Fatalf("component %d: %v, want %v: Meter changed the vector", i, got[0][i], want[0][i])
		}
	}
}

// TestWrappersAdvise: Meter and Latency pass on the wrapped embedder's
// fusion recommendation (the engine gives an embedder that makes none
// another dense weight), and make none for one that makes none.
func TestWrappersAdvise(t *testing.T) {
	h := hashEmbedder(t)
	want := h.(embed.FusionAdvisor).RecommendedFusion()
	for _, e := range []embed.Embedder{NewMeter(h, 0), NewLatency(h, 0), NewLatency(NewMeter(h, 0), 0)} {
		a, ok := e.(embed.FusionAdvisor)
		if !ok || a.RecommendedFusion() != want {
			t.Errorf("%T: advice %v, want the hash embedder's %+v", e, ok, want)
		}
	}
	var none struct{ embed.Embedder }
	none.Embedder = h // hides the advice, as a caller's own wrapper may
	if f := NewMeter(none, 0).RecommendedFusion(); f != (embed.Fusion{}) {
		t.Errorf("advice %+v of an embedder that makes none", f)
	}
}
