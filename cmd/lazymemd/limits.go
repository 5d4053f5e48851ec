package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// Bounded cost: what one request, or all of them together, may make the
// daemon hold. Each limit is a flag; a request over a per-request limit is
// refused with 413 naming the limit, a request that finds a shared budget
// spent is refused with 503 and Retry-After (it may succeed a moment
// later), and nothing it carried was written.

// Defaults of the limit flags.
const (
	defaultMaxBody           = 64 << 20
	defaultMaxBatch          = 10000
	defaultMaxInflight       = 100000
	defaultMaxDecode         = 256 << 20
	defaultMaxSynonyms       = 1000
	defaultMaxSynonymBytes   = 64 << 10
	defaultMaxAgents         = 100
	defaultMaxDenseScan      = engine.DefaultMaxDenseScan
	defaultRequestTimeout    = 30 * time.Second
	defaultMaxConns          = 256
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 2 * time.Minute // a 64 MiB batch on a slow link, not a stalled client forever
	defaultIdleTimeout       = 2 * time.Minute
	defaultMaxHeaderBytes    = 64 << 10
)

// retryAfter is the Retry-After of a 503 for a spent budget: budgets free
// up when the requests holding them finish, in milliseconds to seconds.
const retryAfter = 1

// limits are the per-request and shared bounds a server enforces.
type limits struct {
	maxBody         int64         // bytes of one request body
	maxBatch        int           // records of one append
	maxInflight     int64         // records being appended at once, all requests together
	maxDecode       int64         // bytes of request bodies held at once, all requests together
	maxSynonyms     int           // keys of a query's synonym table
	maxSynonymBytes int           // bytes of a synonym table's keys and values
	maxAgents       int           // agents one query searches
	maxDenseScan    int           // records a dense recall may embed
	requestTimeout  time.Duration // deadline of each request once its headers are read
}

func defaultLimits() limits {
	return limits{
		maxBody: defaultMaxBody, maxBatch: defaultMaxBatch, maxInflight: defaultMaxInflight,
		maxDecode: defaultMaxDecode, maxSynonyms: defaultMaxSynonyms, maxSynonymBytes: defaultMaxSynonymBytes,
		maxAgents: defaultMaxAgents, maxDenseScan: defaultMaxDenseScan, requestTimeout: defaultRequestTimeout,
	}
}

// validate checks that every limit is positive and that the shared
// budgets can hold one request at its largest (else such a request could
// never be served).
func (l limits) validate() error {
	for _, c := range []struct {
		flag string
		v    int64
	}{
		{"--max-body", l.maxBody}, {"--max-batch", int64(l.maxBatch)}, {"--max-inflight-records", l.maxInflight},
		{"--max-decode-bytes", l.maxDecode}, {"--max-synonyms", int64(l.maxSynonyms)},
		{"--max-synonym-bytes", int64(l.maxSynonymBytes)}, {"--max-agents", int64(l.maxAgents)},
		{"--max-dense-scan", int64(l.maxDenseScan)},
		{"--request-timeout", int64(l.requestTimeout)},
	} {
		if c.v < 1 {
			return fmt.Errorf("%w: %s %d: want a positive value", errFlag, c.flag, c.v)
		}
	}
	if int64(l.maxBatch) > l.maxInflight {
		return fmt.Errorf("%w: --max-batch %d is over --max-inflight-records %d: such a batch could never be appended", errFlag, l.maxBatch, l.maxInflight)
	}
	if l.maxBody > l.maxDecode {
		return fmt.Errorf("%w: --max-body %d is over --max-decode-bytes %d: such a body could never be read", errFlag, l.maxBody, l.maxDecode)
	}
	return nil
}

// budget is a counting semaphore that never waits: a request takes what
// it needs or is told the daemon is busy.
type budget struct {
	mu         sync.Mutex
	used, size int64
}

func newBudget(size int64) *budget { return &budget{size: size} }

// take reserves n units; false when fewer than n are free.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.size-b.used {
		return false
	}
	b.used += n
	return true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Errors of readBody.
var (
	errBodyTooLarge = errors.New("lazymem: request body too large")
	errBodyBusy     = errors.New("lazymem: request body budget spent")
)

// bodyChunk is the reservation step for a body of unknown length.
const bodyChunk = 64 << 10

// readBody reads r to its end, at most limit bytes, reserving from b the
// memory it holds before allocating it. hint is the announced length
// (Content-Length; -1: unknown). It returns the body and the bytes it
// reserved, which the caller gives back once done with what it decoded;
// on error nothing stays reserved.
func readBody(r io.Reader, limit, hint int64, b *budget) ([]byte, int64, error) {
	if hint > limit {
		return nil, 0, errBodyTooLarge
	}
	var held int64
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			// One byte past the announced length, so that the end is
			// seen without growing again.
			step := int64(bodyChunk)
			if buf == nil && hint >= 0 {
				step = hint + 1
			} else if int64(cap(buf)) > step {
				step = int64(cap(buf)) // double, as append would
			}
			step = min(step, limit+1-int64(len(buf)))
			if !b.take(step) {
				b.give(held)
				return nil, 0, errBodyBusy
			}
			held += step
			nb := make([]byte, len(buf), int64(len(buf))+step)
			copy(nb, buf)
			// The old buffer stays reserved until the request ends: it is
			// garbage, but not yet collected.
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			b.give(held)
			return nil, 0, errBodyTooLarge
		}
		if err == io.EOF {
			return buf, held, nil
		}
		if err != nil {
			b.give(held)
			return nil, 0, err
		}
	}
}

// checkQuery enforces the query-shape limits the engine leaves to the
// daemon: how many agents one query searches, how large its synonym
// table is (every key is looked for in the query text) and how many
// records a dense recall may embed (a query may lower the daemon's bound,
// never raise it; absent, the bound is the query's).
func (l limits) checkQuery(q *engine.Query) *apiError {
	agents := len(q.Agents)
	if q.Agent != "" {
		agents++
	}
	if agents > l.maxAgents {
		return &apiError{Code: "too_large", Field: "query.agents",
			Message: fmt.Sprintf("query.agents: %d agents, limit %d (lazymemd --max-agents)", agents, l.maxAgents)}
	}
	switch {
	case q.MaxDenseScan == 0:
		q.MaxDenseScan = l.maxDenseScan
	case q.MaxDenseScan > l.maxDenseScan:
		return &apiError{Code: "too_large", Field: "query.max_dense_scan",
			Message: fmt.Sprintf("query.max_dense_scan: %d, limit %d (lazymemd --max-dense-scan)", q.MaxDenseScan, l.maxDenseScan)}
	}
	if len(q.Synonyms) > l.maxSynonyms {
		return &apiError{Code: "too_large", Field: "query.synonyms",
			Message: fmt.Sprintf("query.synonyms: %d keys, limit %d (lazymemd --max-synonyms)", len(q.Synonyms), l.maxSynonyms)}
	}
	size := 0
	for k, vs := range q.Synonyms {
		size += len(k)
		for _, v := range vs {
			size += len(v)
		}
	}
	if size > l.maxSynonymBytes {
		return &apiError{Code: "too_large", Field: "query.synonyms",
			Message: fmt.Sprintf("query.synonyms: %d bytes of keys and values, limit %d (lazymemd --max-synonym-bytes)", size, l.maxSynonymBytes)}
	}
	return nil
}

// busy tells the client a shared budget is spent: retry shortly.
func (s *server) busy(w http.ResponseWriter, r *http.Request, what string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "busy", Message: "the daemon is busy: " + what + "; retry shortly"})
}

// deadlined bounds each request's work by the request timeout: the
// engine's calls take the request's context and stop when it expires.
func (s *server) deadlined(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.lim.requestTimeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limitListener accepts at most n connections at once. The next Accept
// waits until one of them closes: the excess waits in the kernel's accept
// queue (and a client times out) instead of costing the daemon a file
// descriptor and a goroutine each.
type limitListener struct {
	net.Listener
	slots   chan struct{}
	done    chan struct{}
	once    sync.Once
	waiting atomic.Int32 // Accept calls waiting for a slot (tests read it)
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept takes a slot before the connection: while every slot is held,
// nothing is accepted.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.waiting.Add(1)
		select {
		case l.slots <- struct{}{}:
			l.waiting.Add(-1)
		case <-l.done:
			l.waiting.Add(-1)
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.done) })
	return err
}

// open is the number of connections accepted and not yet closed.
func (l *limitListener) open() int { return len(l.slots) }

// limitConn gives its slot back when closed, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
