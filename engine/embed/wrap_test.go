package embed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestCounting(t *testing.T) {
	h := newHash(t, HashOptions{Dim: 32})
	c := NewCounting(h)
	if c.Name() != h.Name() || c.Dim() != 32 {
		t.Fatalf("name %q dim %d", c.Name(), c.Dim())
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := c.Embed(context.Background(), []string{"a", "b", "c"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if c.Calls() != 400 || c.Texts() != 1200 {
		t.Fatalf("calls %d texts %d, want 400 1200", c.Calls(), c.Texts())
	}
	vs, _ := c.Embed(context.Background(), []string{"hello"})
	if cos(vs[0], embedOne(t, h, "hello")) < 0.999999 {
		t.Fatal("Counting changed the vector")
	}
	c.Reset()
	if c.Calls() != 0 || c.Texts() != 0 {
		t.Fatal("Reset")
	}
	var e Embedder = c
	_ = e
}

func TestLatency(t *testing.T) {
	h := newHash(t, HashOptions{Dim: 32})
	c := NewCounting(h)
	l := NewLatency(c, time.Millisecond)
	if l.Name() != h.Name() {
		t.Fatal("name")
	}
	if vs, err := l.Embed(context.Background(), []string{"x", "y"}); err != nil || len(vs) != 2 {
		t.Fatalf("%v %v", vs, err)
	}
	// A cancelled context returns before delegating.
	l = &Latency{Embedder: c, PerCall: time.Hour, PerText: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if _, err := l.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if c.Calls() != 1 {
		t.Fatalf("inner calls %d, want 1", c.Calls())
	}
}
