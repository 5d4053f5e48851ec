package faultfs

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Verifier checks crash images on up to two goroutines while the
// workload that takes them runs; the queue is short, so memory stays
// bounded by a few images. The first five failures are reported through
// t.Errorf, each named by the image's describe.
type Verifier[T any] struct {
	ch       chan T
	wg       sync.WaitGroup
	failures atomic.Int64
	checked  atomic.Int64
}

// Verify starts the workers. check opens an image and returns what is
// wrong with it; describe names the image in a failure.
func Verify[T any](t testing.TB, check func(T) error, describe func(T) string) *Verifier[T] {
	v := &Verifier[T]{ch: make(chan T, 4)}
	for range min(2, runtime.GOMAXPROCS(0)) {
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			for img := range v.ch {
				if err := check(img); err != nil && v.failures.Add(1) <= 5 {
					t.Errorf("%s: %v", describe(img), err)
				}
				v.checked.Add(1)
			}
		}()
	}
	return v
}

// Add queues an image; it blocks while the workers are busy.
func (v *Verifier[T]) Add(img T) { v.ch <- img }

// Wait waits for every queued image and returns how many were checked.
// It fails t when any image failed or fewer than atLeast were checked
// (the workload did not run through the hook that takes them).
func (v *Verifier[T]) Wait(t testing.TB, atLeast int64) int64 {
	t.Helper()
	close(v.ch)
	v.wg.Wait()
	n := v.checked.Load()
	if f := v.failures.Load(); f > 0 {
		t.Fatalf("%d of %d crash images failed", f, n)
	}
	if n < atLeast {
		t.Fatalf("only %d crash images: the workload did not run through the hook", n)
	}
	return n
}
