package httpretry

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, -1},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, -1},
		{http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, 0}, // a date in the past
	} {
		if got := RetryAfter(c.h); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
}

// TestBackoff: delays grow from base to max, each within [d/2, d], and a
// fixed seed repeats them.
func TestBackoff(t *testing.T) {
	a := NewBackoff(10*time.Millisecond, 80*time.Millisecond, 1, 2)
	b := NewBackoff(10*time.Millisecond, 80*time.Millisecond, 1, 2)
	for n, full := range []time.Duration{10, 20, 40, 80, 80, 80} {
		full *= time.Millisecond
		d := a.Delay(n)
		if d < full/2 || d > full {
			t.Errorf("attempt %d: %v, want in [%v, %v]", n, d, full/2, full)
		}
		if e := b.Delay(n); e != d {
			t.Errorf("attempt %d: %v then %v with the same seed", n, d, e)
		}
	}
	if d := a.Delay(1 << 20); d < 40*time.Millisecond || d > 80*time.Millisecond {
		t.Errorf("a huge attempt: %v", d)
	}
}

// TestSleep: a done context ends the sleep with its error.
func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
