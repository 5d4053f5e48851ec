package httpretry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Retryable marks an attempt error worth retrying (a transport error, a
// 429 or 5xx, a malformed answer); any other error ends the retries.
type Retryable struct{ Err error }

func (r *Retryable) Error() string { return r.Err.Error() }
func (r *Retryable) Unwrap() error { return r.Err }

// Backoff is an exponential backoff with jitter: attempt n waits between
// half and all of min(Base<<n, Max). It is safe for concurrent use.
type Backoff struct {
	base, max time.Duration
	mu        sync.Mutex
	rng       *rand.Rand
}

// NewBackoff returns a Backoff from base to max whose jitter is drawn
// from a PCG seeded with (seed, stream): a fixed seed gives repeatable
// delays in tests.
func NewBackoff(base, max time.Duration, seed, stream uint64) *Backoff {
	return &Backoff{base: base, max: max, rng: rand.New(rand.NewPCG(seed, stream))}
}

// Max is the longest delay.
func (b *Backoff) Max() time.Duration { return b.max }

// Delay is the wait before retry number attempt (0 for the first retry).
func (b *Backoff) Delay(attempt int) time.Duration {
	d := b.base << min(attempt, 30)
	if d > b.max || d <= 0 {
		d = b.max
	}
	if d <= 1 {
		return d
	}
	b.mu.Lock()
	j := time.Duration(b.rng.Int64N(int64(d/2) + 1))
	b.mu.Unlock()
	return d - j
}

// RetryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date); -1 when the server sent neither or an unreadable one.
func RetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// Sleep waits d or until ctx is done, whichever comes first, and returns
// ctx.Err() in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
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

// Do calls attempt until it succeeds, fails with an error that is not a
// *Retryable, or has failed retries+1 times, sleeping between attempts the
// server's Retry-After (the duration attempt returns, -1 for none; at most
// b.Max()) or else b's jittered backoff. what names the call in the errors
// of a cancelled context ("lazymem: embed: POST https://...").
func Do[T any](ctx context.Context, b *Backoff, retries int, what string, attempt func() (T, time.Duration, error)) (T, error) {
	var zero T
	for n := 0; ; n++ {
		v, retryAfter, err := attempt()
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return zero, fmt.Errorf("%s: %w", what, ctx.Err())
		}
		var re *Retryable
		if !errors.As(err, &re) {
			return zero, err
		}
		if n >= max(retries, 0) {
			return zero, fmt.Errorf("%w (gave up after %d attempts)", re.Err, n+1)
		}
		d := b.Delay(n)
		if retryAfter >= 0 {
			d = min(retryAfter, b.Max())
		}
		if err := Sleep(ctx, d); err != nil {
			return zero, fmt.Errorf("%s: %w (while waiting to retry after: %v)", what, err, re.Err)
		}
	}
}
