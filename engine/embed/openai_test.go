package embed

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the OpenAI embeddings wire format. Vectors come from a
// hash embedder of dim 8 so the test knows what each text must get. The
// data array is sent in reverse order: clients must place by "index".
type fakeServer struct {
	t        *testing.T
	srv      *httptest.Server
	requests atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
	mu       sync.Mutex
	sizes    []int
	ref      *Hash
	// hook, when set, may answer the request itself (return true).
	hook func(w http.ResponseWriter, r *http.Request, n int64, req openAIRequest) bool
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, ref: newHash(t, HashOptions{Dim: 8})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	in := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxIn.Load()
		if in <= m || f.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		writeAPIError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path, "invalid_request_error", nil)
		return
	}
	var req openAIRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeAPIError(w, http.StatusBadRequest, "bad json: "+err.Error(), "invalid_request_error", nil)
		return
	}
	f.mu.Lock()
	f.sizes = append(f.sizes, len(req.Input))
	f.mu.Unlock()
	if f.hook != nil && f.hook(w, r, n, req) {
		return
	}
	f.writeVectors(w, req.Input, 0)
}

// writeVectors answers with the reference vectors, extra values appended
// to each when pad > 0.
func (f *fakeServer) writeVectors(w http.ResponseWriter, input []string, pad int) {
	vs, _ := f.ref.Embed(context.Background(), input)
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Model: "fake-embed", Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		for k := 0; k < pad; k++ {
			v = append(v, 0)
		}
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func writeAPIError(w http.ResponseWriter, status int, msg, typ string, code any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (f *fakeServer) embedder(t *testing.T, o OpenAIOptions) *OpenAI {
	t.Helper()
	o.BaseURL = f.srv.URL + "/v1"
	if o.Model == "" {
		o.Model = "fake-embed"
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "LAZYMEM_TEST_NO_SUCH_KEY"
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = time.Millisecond
		o.BackoffMax = 5 * time.Millisecond
	}
	e, err := NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "text number " + strconv.Itoa(i) + " about topic " + strconv.Itoa(i%7)
	}
	return out
}

func (f *fakeServer) check(t *testing.T, in []string, got [][]float32) {
	t.Helper()
	want, _ := f.ref.Embed(context.Background(), in)
	if len(got) != len(want) {
		t.Fatalf("%d vectors for %d texts", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("vector %d: len %d", i, len(got[i]))
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("vector %d (%q) differs at %d: %v vs %v", i, in[i], j, got[i][j], want[i][j])
			}
		}
	}
}

func TestOpenAISuccess(t *testing.T) {
	f := newFakeServer(t)
	var sawAuth, sawModel, sawFormat, sawCT, sawExtra string
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
		sawAuth, sawModel, sawFormat = r.Header.Get("Authorization"), req.Model, req.EncodingFormat
		sawCT, sawExtra = r.Header.Get("Content-Type"), r.Header.Get("X-Extra")
		return false
	}
	e := f.embedder(t, OpenAIOptions{Model: "m1", APIKey: "sk-test", Header: http.Header{"X-Extra": {"yes"}}})
	if e.Name() != "openai:m1" || e.Dim() != 0 {
		t.Fatalf("name %q dim %d", e.Name(), e.Dim())
	}
	in := texts(5)
	vs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, in, vs)
	if e.Dim() != 8 {
		t.Fatalf("learned dim %d, want 8", e.Dim())
	}
	if sawAuth != "Bearer sk-test" || sawModel != "m1" || sawFormat != "float" || sawCT != "application/json" || sawExtra != "yes" {
		t.Fatalf("request: auth %q model %q format %q content-type %q extra %q", sawAuth, sawModel, sawFormat, sawCT, sawExtra)
	}
	if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 || f.requests.Load() != 1 {
		t.Fatalf("empty input: %v %v, %d requests", vs, err, f.requests.Load())
	}
	// Probe learns the dimension of a fresh embedder with one request.
	e = f.embedder(t, OpenAIOptions{})
	if d, err := e.Probe(context.Background()); err != nil || d != 8 || e.Dim() != 8 || f.requests.Load() != 2 {
		t.Fatalf("probe: %d %v, dim %d, %d requests", d, err, e.Dim(), f.requests.Load())
	}
}

func TestOpenAIKeyFromEnv(t *testing.T) {
	f := newFakeServer(t)
	var auth atomic.Value
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		auth.Store(r.Header.Get("Authorization"))
		return false
	}
	t.Setenv("LAZYMEM_TEST_KEY", "sk-from-env")
	e := f.embedder(t, OpenAIOptions{APIKeyEnv: "LAZYMEM_TEST_KEY"})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if auth.Load() != "Bearer sk-from-env" {
		t.Fatalf("auth %q", auth.Load())
	}
	// No key at all: no Authorization header (local servers).
	e = f.embedder(t, OpenAIOptions{})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if auth.Load() != "" {
		t.Fatalf("auth %q, want none", auth.Load())
	}
}

func TestOpenAIBatching(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		time.Sleep(2 * time.Millisecond) // let requests overlap; the assertion is on counts only
		return false
	}
	e := f.embedder(t, OpenAIOptions{BatchSize: 10, Concurrency: 3})
	in := texts(95)
	vs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, in, vs)
	if got := f.requests.Load(); got != 10 {
		t.Fatalf("%d requests, want 10", got)
	}
	f.mu.Lock()
	sizes := append([]int(nil), f.sizes...)
	f.mu.Unlock()
	nTen, nFive := 0, 0
	for _, s := range sizes {
		switch s {
		case 10:
			nTen++
		case 5:
			nFive++
		default:
			t.Fatalf("batch of %d", s)
		}
	}
	if nTen != 9 || nFive != 1 {
		t.Fatalf("batch sizes %v", sizes)
	}
	if m := f.maxIn.Load(); m > 3 {
		t.Fatalf("%d requests in flight, limit 3", m)
	}
}

func TestOpenAIRetry429(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, n int64, _ openAIRequest) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			writeAPIError(w, http.StatusTooManyRequests, "Rate limit reached for requests", "requests", "rate_limit_exceeded")
			return true
		}
		return false
	}
	// A huge backoff proves the Retry-After: 0 header was honoured: the
	// computed delay would outlast the test's context.
	e := f.embedder(t, OpenAIOptions{BackoffBase: time.Hour, BackoffMax: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := texts(3)
	vs, err := e.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, in, vs)
	if f.requests.Load() != 2 {
		t.Fatalf("%d requests, want 2", f.requests.Load())
	}
}

func TestOpenAIPersistent500(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		writeAPIError(w, http.StatusInternalServerError, "The server had an error while processing your request", "server_error", nil)
		return true
	}
	e := f.embedder(t, OpenAIOptions{MaxRetries: 3})
	_, err := e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrHTTP) {
		t.Fatalf("err %v, want ErrHTTP", err)
	}
	for _, want := range []string{"500", "The server had an error", "server_error", f.srv.URL, "4 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.requests.Load() != 4 {
		t.Fatalf("%d requests, want 1 + MaxRetries = 4", f.requests.Load())
	}
}

func TestOpenAINo4xxRetry(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		writeAPIError(w, http.StatusUnauthorized, "Incorrect API key provided: sk-te**st.", "invalid_request_error", "invalid_api_key")
		return true
	}
	e := f.embedder(t, OpenAIOptions{})
	_, err := e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrHTTP) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"401", "Incorrect API key provided", "invalid_request_error", "invalid_api_key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.requests.Load() != 1 {
		t.Fatalf("%d requests, want 1 (4xx is never retried)", f.requests.Load())
	}
}

func TestOpenAITimeout(t *testing.T) {
	f := newFakeServer(t)
	release := make(chan struct{})
	defer close(release)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}
	// Attempts are counted as the client sends them: on a loaded machine
	// the server may not see a request before its 20 ms are up.
	var sent atomic.Int64
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	e := f.embedder(t, OpenAIOptions{Timeout: 20 * time.Millisecond, MaxRetries: 1, HTTPClient: client})
	_, err := e.Embed(context.Background(), texts(1))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no response within 20ms") {
		t.Fatalf("err %v, want ErrUnavailable naming the timeout", err)
	}
	if sent.Load() != 2 {
		t.Fatalf("%d attempts, want 2 (a timeout is retried)", sent.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestOpenAIMalformed(t *testing.T) {
	cases := []struct {
		name string
		body func(req openAIRequest) string
		want error
		msg  string
	}{
		{"malformed JSON", func(openAIRequest) string { return `{"data": [{"index": 0, "embedding": [0.1, 0.2` }, ErrResponse, "malformed JSON"},
		{"wrong count", func(req openAIRequest) string {
			return `{"data":[{"index":0,"embedding":[1,2,3,4,5,6,7,8]}]}`
		}, ErrResponse, "1 embeddings for 3 inputs"},
		{"duplicate index", func(openAIRequest) string {
			v := `[1,2,3,4,5,6,7,8]`
			return `{"data":[{"index":0,"embedding":` + v + `},{"index":0,"embedding":` + v + `},{"index":2,"embedding":` + v + `}]}`
		}, ErrResponse, "index 0 appears twice"},
		{"index out of range", func(openAIRequest) string {
			v := `[1,2,3,4,5,6,7,8]`
			return `{"data":[{"index":0,"embedding":` + v + `},{"index":1,"embedding":` + v + `},{"index":3,"embedding":` + v + `}]}`
		}, ErrResponse, "index 3 out of range"},
		{"mixed dims", func(openAIRequest) string {
			v := `[1,2,3,4,5,6,7,8]`
			return `{"data":[{"index":0,"embedding":` + v + `},{"index":1,"embedding":[1,2]},{"index":2,"embedding":` + v + `}]}`
		}, ErrDim, "expected 8, got 2"},
		{"error in 200", func(openAIRequest) string { return `{"error":{"message":"overloaded","type":"server_error"}}` }, ErrHTTP, "overloaded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeServer(t)
			f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(c.body(req)))
				return true
			}
			e := f.embedder(t, OpenAIOptions{})
			_, err := e.Embed(context.Background(), texts(3))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want %v with %q", err, c.want, c.msg)
			}
			if f.requests.Load() != 1 {
				t.Fatalf("%d requests: a bad 200 response is not retried", f.requests.Load())
			}
		})
	}
}

func TestOpenAIWrongDimension(t *testing.T) {
	f := newFakeServer(t)
	pad := 0
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
		f.writeVectors(w, req.Input, pad)
		return true
	}
	// Configured dimension.
	e := f.embedder(t, OpenAIOptions{Dim: 16})
	_, err := e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrDim) || !strings.Contains(err.Error(), "expected 16, got 8") {
		t.Fatalf("err %v", err)
	}
	// Learned dimension, then enforced.
	e = f.embedder(t, OpenAIOptions{})
	if _, err := e.Embed(context.Background(), texts(2)); err != nil || e.Dim() != 8 {
		t.Fatalf("err %v dim %d", err, e.Dim())
	}
	pad = 1
	_, err = e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrDim) || !strings.Contains(err.Error(), "expected 8, got 9") {
		t.Fatalf("err %v", err)
	}
}

func TestOpenAIBase64(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
		vs, _ := f.ref.Embed(context.Background(), req.Input)
		var data []map[string]any
		for i, v := range vs {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			data = append(data, map[string]any{"index": i, "embedding": base64.StdEncoding.EncodeToString(b)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
		return true
	}
	e := f.embedder(t, OpenAIOptions{})
	in := texts(4)
	vs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, in, vs)
}

func TestOpenAIConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	e, err := NewOpenAI(OpenAIOptions{BaseURL: url + "/v1", Model: "m", MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	for _, want := range []string{url + "/v1/embeddings", "connection refused", "3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestOpenAICancel(t *testing.T) {
	f := newFakeServer(t)
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 16)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, _ openAIRequest) bool {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}
	e := f.embedder(t, OpenAIOptions{BatchSize: 2, Concurrency: 2})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := e.Embed(ctx, texts(20))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := f.requests.Load(); n > 2 {
		t.Fatalf("%d requests after cancel, want at most the 2 in flight", n)
	}
}

// One failing batch cancels the others and its error is the one returned.
func TestOpenAIBatchFailure(t *testing.T) {
	f := newFakeServer(t)
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
		if req.Input[0] == "poison" {
			writeAPIError(w, http.StatusBadRequest, "input rejected", "invalid_request_error", nil)
			return true
		}
		return false
	}
	e := f.embedder(t, OpenAIOptions{BatchSize: 1, Concurrency: 2})
	in := texts(6)
	in[3] = "poison"
	_, err := e.Embed(context.Background(), in)
	if !errors.Is(err, ErrHTTP) || !strings.Contains(err.Error(), "input rejected") {
		t.Fatalf("err %v", err)
	}
}

func TestOpenAIOptions(t *testing.T) {
	for _, o := range []OpenAIOptions{
		{Model: ""},
		{Model: "m", BaseURL: "ftp://x"},
		{Model: "m", BaseURL: "not a url"},
		{Model: "m", Dim: -1},
		{Model: "m", BatchSize: -1},
		{Model: "m", Concurrency: -2},
		{Model: "m", BackoffBase: time.Second, BackoffMax: time.Millisecond},
	} {
		if _, err := NewOpenAI(o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: err %v, want ErrOptions", o, err)
		}
	}
	e, err := NewOpenAI(OpenAIOptions{Model: "text-embedding-3-small", APIKeyEnv: "LAZYMEM_TEST_NO_SUCH_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	o := e.opts
	if e.URL() != "https://api.openai.com/v1/embeddings" || o.BatchSize != 96 || o.Concurrency != 4 ||
		o.Timeout != 30*time.Second || o.MaxRetries != 5 || e.Name() != "openai:text-embedding-3-small" || o.APIKey != "" {
		t.Fatalf("defaults: %s %+v", e.URL(), o)
	}
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.5,-1]},{"object":"embedding","index":0,"embedding":[1,2]}],"model":"m"}`,
		`{"data":[{"index":0,"embedding":"AACAPwAAAEA="}]}`,
		`{"data":[{"embedding":[1e39]}]}`,
		`{"error":{"message":"x","type":"y","code":null}}`,
		`{"data":null}`, `[]`, `null`, ``, `{"data":[{"index":-1,"embedding":[]}]}`,
	} {
		f.Add([]byte(s), 2, 0)
		f.Add([]byte(s), 1, 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, n, dim int) {
		if n < 0 || n > 64 || dim < 0 || dim > 4096 {
			return
		}
		vs, err := decodeResponse(data, n, dim)
		if err != nil {
			if !errors.Is(err, ErrResponse) && !errors.Is(err, ErrDim) && !errors.Is(err, ErrHTTP) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if len(vs) != n {
			t.Fatalf("%d vectors for %d", len(vs), n)
		}
		for i, v := range vs {
			if len(v) == 0 || (dim > 0 && len(v) != dim) || len(v) != len(vs[0]) {
				t.Fatalf("vector %d: len %d (dim %d)", i, len(v), dim)
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite value")
				}
			}
		}
	})
}

func TestParseFloatArray(t *testing.T) {
	good := map[string][]float32{
		" [ 1 , -2.5e-3 ,0.125]\n": {1, -2.5e-3, 0.125},
		"[3]":                      {3},
		"[]":                       {},
		"[1E2,-0]":                 {100, 0},
	}
	for in, want := range good {
		got, err := parseFloatArray([]byte(in))
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v %v", in, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range []string{"", "1", "[", "[1,]", "[,1]", "[NaN]", "[Inf]", "[1e39]", "[1 2]", "[1]x", `["1"]`, "[1,,2]", "[--1]", "{}"} {
		if v, err := parseFloatArray([]byte(in)); err == nil {
			t.Errorf("%q: accepted as %v", in, v)
		}
	}
}

// FuzzParseFloatArray checks the fast parser against encoding/json: when
// both accept, they agree.
func FuzzParseFloatArray(f *testing.F) {
	for _, s := range []string{"[1,2.5,-3e-2]", "[]", "[ 0.1 ]", "[1e39]", "[01]", "[.5]", "[+1]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseFloatArray(data)
		var want []float32
		werr := json.Unmarshal(data, &want)
		if err != nil || werr != nil || want == nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %v vs encoding/json %v", data, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %v vs encoding/json %v", data, got, want)
			}
		}
	})
}

func TestOpenAIEncodingFormatBase64(t *testing.T) {
	f := newFakeServer(t)
	var format atomic.Value
	f.hook = func(w http.ResponseWriter, r *http.Request, _ int64, req openAIRequest) bool {
		format.Store(req.EncodingFormat)
		return false
	}
	e := f.embedder(t, OpenAIOptions{EncodingFormat: "base64"})
	if _, err := e.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	if format.Load() != "base64" {
		t.Fatalf("encoding_format %v", format.Load())
	}
	if _, err := NewOpenAI(OpenAIOptions{Model: "m", EncodingFormat: "int8"}); !errors.Is(err, ErrOptions) {
		t.Fatalf("int8: %v", err)
	}
}

func TestOpenAIRedactsURLPassword(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)
	srv.Close()
	e, err := NewOpenAI(OpenAIOptions{BaseURL: u, Model: "m", MaxRetries: -1, APIKey: "sk-hidden"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Embed(context.Background(), []string{"x"})
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "sk-hidden") {
		t.Fatalf("err %v", err)
	}
}
