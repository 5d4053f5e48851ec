package httpretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors are the sentinels an Endpoint wraps its errors in. Each client
// package keeps its own ("lazymem: embed: ...", "lazymem: consolidate:
// ..."), so that its callers test errors.Is against the package they use.
type Errors struct {
	Options     error // the request cannot be built from the options
	Unavailable error // refused, timed out, or another transport failure
	Response    error // a response larger than MaxResponseBytes
	HTTP        error // a status other than 2xx
}

// Endpoint is one OpenAI-compatible POST endpoint: where requests go, how
// the address is shown in messages, the client and the headers that carry
// every request. Its fields are set by NewEndpoint and the client package,
// then only read: safe for concurrent use.
type Endpoint struct {
	URL              string // BaseURL + the path
	Shown            string // URL with any password redacted, for messages
	Client           *http.Client
	OwnClient        bool // Client was made here: Close releases its connections
	Header           http.Header
	APIKey           string // sent as "Authorization: Bearer <key>" when not empty
	Timeout          time.Duration
	MaxResponseBytes int64
	Errs             Errors
}

// NewEndpoint returns the endpoint base+path for client, or for a client
// with its own transport keeping idlePerHost idle connections per host
// (the transport's default when idlePerHost is 0) when client is nil.
func NewEndpoint(base, path string, client *http.Client, idlePerHost int) *Endpoint {
	e := &Endpoint{URL: strings.TrimRight(base, "/") + path, Client: client}
	e.Shown = e.URL
	if u, err := url.Parse(e.URL); err == nil {
		e.Shown = u.Redacted()
	}
	if e.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if idlePerHost > 0 {
			tr.MaxIdleConnsPerHost = idlePerHost
		}
		e.Client = &http.Client{Transport: tr}
		e.OwnClient = true
	}
	return e
}

// Close releases the idle connections of a client NewEndpoint made; the
// endpoint stays usable.
func (e *Endpoint) Close() {
	if e.OwnClient {
		e.Client.CloseIdleConnections()
	}
}

// Post makes one attempt within Timeout and returns the body of a 2xx
// response, read into buf. Transport failures, 429 and 5xx are
// *Retryable (the latter two with the server's Retry-After, else -1); a
// cancelled ctx is returned as is; any other failure is final.
func (e *Endpoint) Post(ctx context.Context, body []byte, buf *bytes.Buffer) (data []byte, retryAfter time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("%w: POST %s: %v", e.Errs.Options, e.Shown, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range e.Header {
		req.Header[k] = v
	}
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, -1, &Retryable{Err: e.transportError(err)}
	}
	defer resp.Body.Close()
	// One buffer sized from Content-Length when the server sent it (a 96 x
	// 1536-d float embedding response is ~2 MB: growing a buffer by
	// doubling would copy it ~20 times).
	if n := resp.ContentLength; n > 0 && n <= e.MaxResponseBytes {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, e.MaxResponseBytes+1)); err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, -1, &Retryable{Err: e.transportError(err)}
	}
	data = buf.Bytes()
	if int64(len(data)) > e.MaxResponseBytes {
		return nil, -1, fmt.Errorf("%w: POST %s: response larger than %d bytes", e.Errs.Response, e.Shown, e.MaxResponseBytes)
	}
	if resp.StatusCode/100 != 2 {
		herr := fmt.Errorf("%w: POST %s: %s%s", e.Errs.HTTP, e.Shown, resp.Status, ErrorDetail(data))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, RetryAfter(resp.Header), &Retryable{Err: herr}
		}
		return nil, -1, herr
	}
	return data, -1, nil
}

// transportError names the URL and tells a refused connection or a
// timeout apart from other failures.
func (e *Endpoint) transportError(err error) error {
	var nerr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: POST %s: connection refused (is the server running?): %v", e.Errs.Unavailable, e.Shown, err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()):
		return fmt.Errorf("%w: POST %s: no response within %v: %v", e.Errs.Unavailable, e.Shown, e.Timeout, err)
	default:
		return fmt.Errorf("%w: POST %s: %v", e.Errs.Unavailable, e.Shown, err)
	}
}

// apiError is the error body of OpenAI ({"error": {"message", "type",
// "code"}}); Ollama and TEI send {"error": "message"} instead.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// ErrorDetail renders the server's error message from a response body:
// ": <message> (type T, code C)", or a quoted prefix of a non-JSON body.
func ErrorDetail(data []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err == nil && len(env.Error) > 0 {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return ": " + s
		}
		var ae apiError
		if json.Unmarshal(env.Error, &ae) == nil && ae.Message != "" {
			var b strings.Builder
			b.WriteString(": ")
			b.WriteString(ae.Message)
			var extra []string
			if ae.Type != "" {
				extra = append(extra, "type "+ae.Type)
			}
			if c := string(ae.Code); c != "" && c != "null" {
				extra = append(extra, "code "+strings.Trim(c, `"`))
			}
			if len(extra) > 0 {
				b.WriteString(" (" + strings.Join(extra, ", ") + ")")
			}
			return b.String()
		}
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return ""
	}
	const limit = 200
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return ": " + strconv.Quote(s)
}
