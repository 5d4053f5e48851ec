package httpretry

import (
	"context"
	"errors"
	"net/http"
	"strings"
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

func TestDo(t *testing.T) {
	ctx := context.Background()
	bo := NewBackoff(time.Microsecond, 50*time.Microsecond, 1, 1)
	transient := &Retryable{Err: errors.New("503 from the server")}
	for _, tc := range []struct {
		name     string
		retries  int
		fail     int   // attempts that fail with err before one succeeds
		err      error // what they fail with
		want     string
		attempts int
	}{
		{"first try", 3, 0, transient, "", 1},
		{"retried until it works", 3, 2, transient, "", 3},
		{"gives up after retries+1", 2, 10, transient, "503 from the server (gave up after 3 attempts)", 3},
		{"negative retries: one attempt", -1, 10, transient, "(gave up after 1 attempts)", 1},
		{"a permanent error ends it", 5, 10, errors.New("401 bad key"), "401 bad key", 1},
	} {
		n := 0
		v, err := Do(ctx, bo, tc.retries, "call", func() (int, time.Duration, error) {
			n++
			if n <= tc.fail {
				return 0, -1, tc.err
			}
			return 42, -1, nil
		})
		switch {
		case n != tc.attempts:
			t.Errorf("%s: %d attempts, want %d", tc.name, n, tc.attempts)
		case tc.want == "" && (err != nil || v != 42):
			t.Errorf("%s: %d, %v", tc.name, v, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// The server's Retry-After is honoured, capped at the backoff's max: an
	// hour asked for must not stall the caller.
	n := 0
	if _, err := Do(ctx, bo, 1, "call", func() (int, time.Duration, error) {
		if n++; n == 1 {
			return 0, time.Hour, transient
		}
		return 1, -1, nil
	}); err != nil || n != 2 {
		t.Fatalf("retry-after capped: %d attempts, %v", n, err)
	}

	// A cancelled context ends the retries and names the call.
	cctx, cancel := context.WithCancel(ctx)
	_, err := Do(cctx, bo, 5, "lazymem: embed: POST u", func() (int, time.Duration, error) {
		cancel()
		return 0, -1, transient
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "lazymem: embed: POST u") {
		t.Fatalf("cancelled: %v", err)
	}
}
func TestErrorDetail(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"error":"model \"nomic\" not found, try pulling it first"}`, `model "nomic" not found`}, // Ollama
		{`{"error":{"message":"too long","type":"invalid_request_error","code":400}}`, "too long (type invalid_request_error, code 400)"},
		{`<html>Bad Gateway</html>`, `"<html>Bad Gateway</html>"`},
		{``, ""},
		{`{"error":{"type":"server_error"}}`, `"{\"error\":{\"type\":\"server_error\"}}"`}, // no message: the body
	} {
		if got := ErrorDetail([]byte(c.body)); !strings.Contains(got, c.want) {
			t.Errorf("%s: detail %q lacks %q", c.body, got, c.want)
		}
	}
}
