package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazymem/lazymem/engine/internal/httpretry"
)

// OpenAIOptions configures an embedder for any OpenAI-compatible
// POST {BaseURL}/embeddings endpoint (OpenAI, Azure OpenAI behind a
// compatible gateway, Ollama, vLLM, llama.cpp server, TEI, LocalAI).
type OpenAIOptions struct {
	// BaseURL is the API root; "/embeddings" is appended.
	// Default "https://api.openai.com/v1".
	BaseURL string
	// Model is the model name sent in each request. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	// Default: the value of the environment variable named by APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable read when APIKey is empty.
	// Default "OPENAI_API_KEY". Local servers need no key: leave both unset.
	APIKeyEnv string
	// Header holds extra request headers (e.g. "api-key" for Azure, or an
	// organization header). Default none.
	Header http.Header
	// Name overrides Name(). Default "openai:<Model>". Set it when two
	// endpoints serve different weights under one model name, since Name is
	// part of the embedding cache key.
	Name string
	// EncodingFormat is sent as "encoding_format": "float" or "base64".
	// base64 makes responses about 4x smaller and much cheaper to decode;
	// OpenAI and vLLM support it, some servers do not. Responses in either
	// form are accepted whatever was asked. Default "float".
	EncodingFormat string
	// Dim is the expected vector length. Default 0: learned from the first
	// response, then enforced on every later one.
	Dim int
	// BatchSize is the most texts sent in one request. Default 96.
	BatchSize int
	// Concurrency is the most requests in flight for one Embed call.
	// Default 4.
	Concurrency int
	// Timeout bounds each HTTP attempt (connect, send, read the body).
	// Default 30s.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried: on 429, on
	// 5xx, and on network errors (connection refused or reset, attempt
	// timeout). Other 4xx are never retried. Default 5; negative means 0.
	MaxRetries int
	// BackoffBase is the delay before the first retry; it doubles with each
	// retry up to BackoffMax, and a random jitter takes up to half of it
	// off. A Retry-After (or retry-after-ms) header replaces the computed
	// delay, capped at BackoffMax. Default 500ms.
	BackoffBase time.Duration
	// BackoffMax caps one retry delay. Default 30s.
	BackoffMax time.Duration
	// MaxResponseBytes bounds the body read from one response.
	// Default 256 MiB.
	MaxResponseBytes int64
	// HTTPClient sends the requests. Default: a client with its own
	// transport keeping Concurrency idle connections per host; Close
	// releases them.
	HTTPClient *http.Client
	// Seed seeds the backoff jitter. Default 0 (a fixed seed: jitter
	// decorrelates the goroutines of one process, not runs).
	Seed uint64
}

// Default OpenAI embedder settings.
const (
	DefaultOpenAIBaseURL      = "https://api.openai.com/v1"
	DefaultOpenAIAPIKeyEnv    = "OPENAI_API_KEY"
	DefaultOpenAIBatchSize    = 96
	DefaultOpenAIConcurrency  = 4
	DefaultOpenAITimeout      = 30 * time.Second
	DefaultOpenAIMaxRetries   = 5
	DefaultOpenAIBackoffBase  = 500 * time.Millisecond
	DefaultOpenAIBackoffMax   = 30 * time.Second
	DefaultOpenAIMaxRespBytes = 256 << 20
)

// EnsureDefaults fills zero fields with their defaults, reading the API key
// from the environment when APIKey is empty.
func (o *OpenAIOptions) EnsureDefaults() {
	if o.BaseURL == "" {
		o.BaseURL = DefaultOpenAIBaseURL
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = DefaultOpenAIAPIKeyEnv
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv(o.APIKeyEnv)
	}
	if o.Name == "" && o.Model != "" {
		o.Name = "openai:" + o.Model
	}
	if o.EncodingFormat == "" {
		o.EncodingFormat = "float"
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultOpenAIBatchSize
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultOpenAIConcurrency
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultOpenAITimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultOpenAIMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = -1 // Validate accepts it; retries() reports 0
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = DefaultOpenAIBackoffBase
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = DefaultOpenAIBackoffMax
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultOpenAIMaxRespBytes
	}
}

// Validate reports the first invalid field.
func (o *OpenAIOptions) Validate() error {
	u, err := url.Parse(o.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: OpenAIOptions.BaseURL %q is not an http(s) URL", ErrOptions, o.BaseURL)
	case o.Model == "":
		return fmt.Errorf("%w: OpenAIOptions.Model is required", ErrOptions)
	case o.EncodingFormat != "float" && o.EncodingFormat != "base64":
		return fmt.Errorf("%w: OpenAIOptions.EncodingFormat = %q, want \"float\" or \"base64\"", ErrOptions, o.EncodingFormat)
	case o.Dim < 0:
		return fmt.Errorf("%w: OpenAIOptions.Dim = %d, want >= 0", ErrOptions, o.Dim)
	case o.BatchSize < 1:
		return fmt.Errorf("%w: OpenAIOptions.BatchSize = %d, want >= 1", ErrOptions, o.BatchSize)
	case o.Concurrency < 1:
		return fmt.Errorf("%w: OpenAIOptions.Concurrency = %d, want >= 1", ErrOptions, o.Concurrency)
	case o.Timeout < 0:
		return fmt.Errorf("%w: OpenAIOptions.Timeout = %v, want > 0", ErrOptions, o.Timeout)
	case o.BackoffBase < 0 || o.BackoffMax < o.BackoffBase:
		return fmt.Errorf("%w: OpenAIOptions.BackoffBase = %v, BackoffMax = %v, want 0 <= base <= max", ErrOptions, o.BackoffBase, o.BackoffMax)
	case o.MaxResponseBytes < 0:
		return fmt.Errorf("%w: OpenAIOptions.MaxResponseBytes = %d, want > 0", ErrOptions, o.MaxResponseBytes)
	}
	return nil
}

// OpenAI embeds through an OpenAI-compatible HTTP endpoint. Safe for
// concurrent use.
type OpenAI struct {
	opts OpenAIOptions
	ep   *httpretry.Endpoint
	dim  atomic.Int64
	bo   *httpretry.Backoff // between attempts
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI returns an embedder for opts.BaseURL/embeddings. It makes no
// request: an endpoint that is down is reported by the first Embed.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ep := httpretry.NewEndpoint(opts.BaseURL, "/embeddings", opts.HTTPClient, opts.Concurrency)
	ep.Header, ep.APIKey = opts.Header, opts.APIKey
	ep.Timeout, ep.MaxResponseBytes = opts.Timeout, opts.MaxResponseBytes
	ep.Errs = httpretry.Errors{Options: ErrOptions, Unavailable: ErrUnavailable, Response: ErrResponse, HTTP: ErrHTTP}
	e := &OpenAI{
		opts: opts,
		ep:   ep,
		bo:   httpretry.NewBackoff(opts.BackoffBase, opts.BackoffMax, opts.Seed, 0x6c617a796d656d),
	}
	e.dim.Store(int64(opts.Dim))
	return e, nil
}

// Name returns OpenAIOptions.Name, by default "openai:<Model>".
func (e *OpenAI) Name() string { return e.opts.Name }

// RecommendedFusion is dense weight 0.5 and 200 candidates, the settings
// a semantic embedder needs for its vectors to count (measured with a
// perfect embedder on the Chinese set: at the hash embedder's 0.2 and 50,
// R@1/5 stop at .593/.861; at 0.5 and 200 they reach .933/.966;
// docs/benchmarks/zh-embedders.md). The models behind an OpenAI-compatible
// endpoint are semantic; which weight suits a given one is unmeasured
// until it runs on the sets: a caller sets Options.DenseWeight and
// Options.Candidates (or the Query's) to override.
func (e *OpenAI) RecommendedFusion() Fusion { return Fusion{DenseWeight: 0.5, Candidates: 200} }

// Dim returns the configured dimension, or the one learned from the first
// response; 0 while neither is known (see Probe).
func (e *OpenAI) Dim() int { return int(e.dim.Load()) }

// Probe embeds one short text to learn the dimension when it is not
// configured, and returns it. It also checks that the endpoint answers.
// Call it before handing the embedder to a consumer that needs Dim() up
// front: engine.Open rejects an embedder whose Dim is 0, and does not
// probe (the commands' --embedder openai:... probes in embedspec.Open).
func (e *OpenAI) Probe(ctx context.Context) (int, error) {
	if _, err := e.embedBatch(ctx, []string{"lazymem dimension probe"}); err != nil {
		return 0, err
	}
	return e.Dim(), nil
}

// URL returns the endpoint requests are sent to.
func (e *OpenAI) URL() string { return e.ep.URL }

// Close releases idle connections of the default client. The embedder
// remains usable.
func (e *OpenAI) Close() error {
	e.ep.Close()
	return nil
}

// Embed splits texts into batches of BatchSize, sends them with at most
// Concurrency requests in flight, and returns the vectors in input order.
// The first failing batch cancels the others and its error is returned.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	bs := e.opts.BatchSize
	nb := (len(texts) + bs - 1) / bs
	if nb == 1 {
		vs, err := e.embedBatch(ctx, texts)
		if err != nil {
			return nil, err
		}
		copy(out, vs)
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		sem      = make(chan struct{}, e.opts.Concurrency)
	)
	for b := 0; b < nb; b++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		lo, hi := b*bs, min((b+1)*bs, len(texts))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			vs, err := e.embedBatch(ctx, texts[lo:hi])
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			copy(out[lo:hi], vs)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// embedBatch sends one batch with retries.
func (e *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: e.opts.Model, Input: texts, EncodingFormat: e.opts.EncodingFormat})
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %v", ErrResponse, err)
	}
	return httpretry.Do(ctx, e.bo, e.opts.MaxRetries, "lazymem: embed: POST "+e.ep.Shown, func() ([][]float32, time.Duration, error) {
		return e.attempt(ctx, body, len(texts))
	})
}

// attempt makes one HTTP request. retryAfter is the server's requested
// delay, or -1 when it gave none.
func (e *OpenAI) attempt(ctx context.Context, body []byte, n int) (vs [][]float32, retryAfter time.Duration, err error) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 64<<20 { // do not pin a huge buffer
			bodyPool.Put(buf)
		}
	}()
	data, retryAfter, err := e.ep.Post(ctx, body, buf)
	if err != nil {
		return nil, retryAfter, err
	}
	vs, err = decodeResponse(data, n, e.Dim())
	if err != nil {
		return nil, -1, fmt.Errorf("POST %s: %w", e.ep.Shown, err)
	}
	if len(vs) > 0 {
		got := int64(len(vs[0]))
		if !e.dim.CompareAndSwap(0, got) && e.dim.Load() != got {
			return nil, -1, fmt.Errorf("%w: POST %s: expected %d, got %d", ErrDim, e.ep.Shown, e.dim.Load(), got)
		}
	}
	return vs, -1, nil
}

// bodyPool recycles response buffers: nothing decoded from a body keeps a
// reference to it (vectors are parsed into new slices, messages copied).
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type openAIResponse struct {
	Data []struct {
		Index     *int           `json:"index"`
		Embedding embeddingValue `json:"embedding"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

// embeddingValue decodes an embedding in place while encoding/json scans
// the response, so the raw text is never copied (json.RawMessage would copy
// every vector's ~20 kB of text once more).
type embeddingValue struct {
	v   []float32
	err error
	set bool
}

func (e *embeddingValue) UnmarshalJSON(raw []byte) error {
	e.v, e.err = decodeEmbedding(raw)
	e.set = true
	return nil // reported with the entry's index by decodeResponse
}

// decodeResponse decodes an embeddings response for n inputs. Vectors are
// placed by their "index" (entries without one keep their position); every
// index in [0, n) must appear once. An embedding is a JSON array of numbers
// or a base64 string of little-endian float32 (encoding_format "base64").
// All vectors must have one length, equal to dim when dim > 0.
func decodeResponse(data []byte, n, dim int) ([][]float32, error) {
	var r openAIResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrResponse, err)
	}
	if r.Data == nil && len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, fmt.Errorf("%w: error in a success response%s", ErrHTTP, httpretry.ErrorDetail(data))
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: index %d out of range [0, %d)", ErrResponse, i, n)
		}
		if out[i] != nil {
			return nil, fmt.Errorf("%w: index %d appears twice", ErrResponse, i)
		}
		if !d.Embedding.set {
			return nil, fmt.Errorf("%w: entry %d has no embedding", ErrResponse, i)
		}
		v, err := d.Embedding.v, d.Embedding.err
		if err != nil {
			return nil, fmt.Errorf("%w: embedding %d: %v", ErrResponse, i, err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: embedding %d is empty", ErrResponse, i)
		}
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim {
			return nil, fmt.Errorf("%w: embedding %d: expected %d, got %d", ErrDim, i, dim, len(v))
		}
		out[i] = v
	}
	return out, nil
}

func decodeEmbedding(raw []byte) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("base64: %v", err)
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("base64 payload of %d bytes is not a float32 array", len(b))
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, checkFinite(v)
	}
	return parseFloatArray(raw)
}

// parseFloatArray parses a JSON array of numbers into float32s. It is the
// hot path of a response (a 1536-d vector is ~20 kB of text) and runs about
// ten times faster than encoding/json into []float32; it accepts what
// strconv.ParseFloat accepts in each element, restricted to the characters
// of a JSON number, so "NaN" or "Inf" are rejected.
func parseFloatArray(raw []byte) ([]float32, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errors.New("embedding is not an array")
	}
	i = skipSpace(raw, i+1)
	n := bytes.Count(raw, []byte{','}) + 1
	v := make([]float32, 0, n)
	if i < len(raw) && raw[i] == ']' {
		if skipSpace(raw, i+1) != len(raw) {
			return nil, errors.New("data after the embedding array")
		}
		return v, nil
	}
	for {
		j := i
		for j < len(raw) && isNumberByte(raw[j]) {
			j++
		}
		if j == i {
			return nil, fmt.Errorf("embedding value %d is not a number", len(v))
		}
		f, err := strconv.ParseFloat(string(raw[i:j]), 32)
		if err != nil {
			return nil, fmt.Errorf("embedding value %d: %v", len(v), err)
		}
		v = append(v, float32(f))
		i = skipSpace(raw, j)
		if i >= len(raw) {
			return nil, errors.New("embedding array not closed")
		}
		if raw[i] == ']' {
			if skipSpace(raw, i+1) != len(raw) {
				return nil, errors.New("data after the embedding array")
			}
			return v, checkFinite(v)
		}
		if raw[i] != ',' {
			return nil, fmt.Errorf("unexpected %q in embedding array", raw[i])
		}
		i = skipSpace(raw, i+1)
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func checkFinite(v []float32) error {
	for j, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %d is %v", j, x)
		}
	}
	return nil
}
