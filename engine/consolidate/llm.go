package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lazymem/lazymem/engine/internal/httpretry"
)

// LLMOptions configures a consolidator backed by any OpenAI-compatible
// POST {BaseURL}/chat/completions endpoint (OpenAI, Azure behind a
// compatible gateway, vLLM, llama.cpp server, Ollama, LocalAI) that
// supports response_format json_schema.
type LLMOptions struct {
	// BaseURL is the API root; "/chat/completions" is appended.
	// Default "https://api.openai.com/v1".
	BaseURL string
	// Model is the model name sent in each request. Required.
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	// Default: the environment variable named by APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable read when APIKey is empty.
	// Default "OPENAI_API_KEY".
	APIKeyEnv string
	// Header holds extra request headers. Default none.
	Header http.Header
	// Prompt is the system message. Default DefaultLLMPrompt.
	Prompt string
	// Temperature is sent as is. Default 0: consolidation should be as
	// repeatable as the endpoint allows.
	Temperature float64
	// Timeout bounds each HTTP attempt. Default 60s: a chat completion
	// writing a dozen units takes seconds, not milliseconds.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried: on 429,
	// 5xx, network errors, and on output that breaks the unit schema
	// (models are not deterministic; a second answer is often valid).
	// Other 4xx are never retried. Default 3; negative means 0.
	MaxRetries int
	// BackoffBase is the delay before the first retry; it doubles up to
	// BackoffMax, with up to half taken off at random. A Retry-After header
	// replaces it, capped at BackoffMax. Default 500ms.
	BackoffBase time.Duration
	// BackoffMax caps one retry delay. Default 30s.
	BackoffMax time.Duration
	// MaxResponseBytes bounds the body read from one response.
	// Default 4 MiB.
	MaxResponseBytes int64
	// HTTPClient sends the requests. Default: a client with its own
	// transport; Close releases its idle connections.
	HTTPClient *http.Client
	// Seed seeds the backoff jitter. Default 0.
	Seed uint64
}

// Default LLM consolidator settings.
const (
	DefaultLLMBaseURL      = "https://api.openai.com/v1"
	DefaultLLMAPIKeyEnv    = "OPENAI_API_KEY"
	DefaultLLMTimeout      = 60 * time.Second
	DefaultLLMMaxRetries   = 3
	DefaultLLMBackoffBase  = 500 * time.Millisecond
	DefaultLLMBackoffMax   = 30 * time.Second
	DefaultLLMMaxRespBytes = 4 << 20
)

// DefaultLLMPrompt is LLMOptions.Prompt's default.
const DefaultLLMPrompt = `You consolidate meeting and chat records into units of long-term memory.
The user message is JSON: {"agent", "records": [{"id", "time", "speaker", "role", "text", "selected"}]}.
Records with "selected": true are the ones worth keeping; the others are context.
Return JSON matching the schema: {"units": [...]}, one unit per decision, action item, preference,
outcome or fact stated in the selected records. Use only what the records say.
- type: decision | action_item | preference | outcome | fact
- topic: a short noun phrase naming the subject (e.g. "launch date"), in the records' language
- content: the statement in one sentence, in the records' language
- action_items: for each task, {"owner": the person's name, "task", "due": RFC 3339 or ""};
  resolve relative dates ("tomorrow", "下周一下午两点") against the record's time
- participants: the speakers involved
- source_ids: ids of the records the unit comes from (only ids from the input)
- time: RFC 3339 time of the latest source record
- confidence: 0 to 1
Return {"units": []} when nothing is worth keeping.`

// EnsureDefaults fills zero fields with their defaults, reading the API key
// from the environment when APIKey is empty.
func (o *LLMOptions) EnsureDefaults() {
	if o.BaseURL == "" {
		o.BaseURL = DefaultLLMBaseURL
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = DefaultLLMAPIKeyEnv
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv(o.APIKeyEnv)
	}
	if o.Prompt == "" {
		o.Prompt = DefaultLLMPrompt
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultLLMTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultLLMMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = -1
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = DefaultLLMBackoffBase
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = DefaultLLMBackoffMax
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultLLMMaxRespBytes
	}
}

// Validate reports the first invalid field.
func (o *LLMOptions) Validate() error {
	u, err := url.Parse(o.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%w: LLMOptions.BaseURL %q is not an http(s) URL", ErrOptions, o.BaseURL)
	case o.Model == "":
		return fmt.Errorf("%w: LLMOptions.Model is required", ErrOptions)
	case math.IsNaN(o.Temperature) || o.Temperature < 0 || o.Temperature > 2:
		return fmt.Errorf("%w: LLMOptions.Temperature = %v, want a value in [0, 2]", ErrOptions, o.Temperature)
	case o.Timeout < 0:
		return fmt.Errorf("%w: LLMOptions.Timeout = %v, want > 0", ErrOptions, o.Timeout)
	case o.BackoffBase < 0 || o.BackoffMax < o.BackoffBase:
		return fmt.Errorf("%w: LLMOptions.BackoffBase = %v, BackoffMax = %v, want 0 <= base <= max", ErrOptions, o.BackoffBase, o.BackoffMax)
	case o.MaxResponseBytes < 0:
		return fmt.Errorf("%w: LLMOptions.MaxResponseBytes = %d, want > 0", ErrOptions, o.MaxResponseBytes)
	}
	return nil
}

// LLM consolidates through a chat completions endpoint. It asks for JSON
// matching UnitSchema (response_format json_schema, strict) and checks the
// answer itself, strictly: an unknown field, a wrong type, a missing field,
// an unknown type name, a time that is not RFC 3339, a confidence outside
// [0, 1], or a source id that is not in the input rejects the whole answer
// (ErrResponse); nothing is half-returned. Safe for concurrent use.
type LLM struct {
	opts LLMOptions
	ep   *httpretry.Endpoint
	bo   *httpretry.Backoff // between attempts
}

var _ Consolidator = (*LLM)(nil)

// NewLLM returns an LLM consolidator. It makes no request.
func NewLLM(opts LLMOptions) (*LLM, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ep := httpretry.NewEndpoint(opts.BaseURL, "/chat/completions", opts.HTTPClient, 0)
	ep.Header, ep.APIKey = opts.Header, opts.APIKey
	ep.Timeout, ep.MaxResponseBytes = opts.Timeout, opts.MaxResponseBytes
	ep.Errs = httpretry.Errors{Options: ErrOptions, Unavailable: ErrUnavailable, Response: ErrResponse, HTTP: ErrHTTP}
	return &LLM{
		opts: opts,
		ep:   ep,
		bo:   httpretry.NewBackoff(opts.BackoffBase, opts.BackoffMax, opts.Seed, 0x636f6e736f6c),
	}, nil
}

// Close releases idle connections of the default client; c stays usable.
func (c *LLM) Close() error {
	c.ep.Close()
	return nil
}

// UnitSchema is the JSON schema sent as response_format: an object with one
// field, "units", an array of units in the JSON form of Unit without the
// fields the store owns (id, agent, supersession). Every field is required
// and no other is allowed (OpenAI strict mode), so "due" is "" when no date
// was said.
var UnitSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["units"],
  "properties": {
    "units": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "topic", "content", "action_items", "participants", "source_ids", "time", "confidence"],
        "properties": {
          "type": {"type": "string", "enum": ["decision", "action_item", "preference", "outcome", "fact"]},
          "topic": {"type": "string"},
          "content": {"type": "string"},
          "action_items": {
            "type": "array",
            "items": {
              "type": "object",
              "additionalProperties": false,
              "required": ["owner", "task", "due"],
              "properties": {
                "owner": {"type": "string"},
                "task": {"type": "string"},
                "due": {"type": "string", "description": "RFC 3339, or empty when no date was said"}
              }
            }
          },
          "participants": {"type": "array", "items": {"type": "string"}},
          "source_ids": {"type": "array", "items": {"type": "integer"}},
          "time": {"type": "string", "description": "RFC 3339"},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1}
        }
      }
    }
  }
}`)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	Temperature    float64         `json:"temperature"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

// llmRecord is one record of the user message.
type llmRecord struct {
	ID       uint64 `json:"id"`
	Time     string `json:"time"`
	Speaker  string `json:"speaker"`
	Role     string `json:"role,omitempty"`
	Text     string `json:"text"`
	Selected bool   `json:"selected"`
}

// userMessage renders in as the JSON the prompt describes: every record
// and context turn once, in time order, selected ones marked.
func userMessage(in *Input) ([]byte, error) {
	byID := map[uint64]llmRecord{}
	add := func(t *Turn, selected bool) {
		r, ok := byID[t.ID]
		if !ok {
			r = llmRecord{ID: t.ID, Time: t.Time.Format(time.RFC3339Nano), Speaker: t.Speaker, Role: t.Role, Text: t.Text}
		}
		r.Selected = r.Selected || selected
		byID[t.ID] = r
	}
	times := map[uint64]time.Time{}
	for i := range in.Records {
		r := &in.Records[i]
		add(&r.Turn, true)
		times[r.ID] = r.Time
		for j := range r.Before {
			add(&r.Before[j], false)
			times[r.Before[j].ID] = r.Before[j].Time
		}
		for j := range r.After {
			add(&r.After[j], false)
			times[r.After[j].ID] = r.After[j].Time
		}
	}
	recs := make([]llmRecord, 0, len(byID))
	for _, r := range byID {
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b llmRecord) int {
		if c := times[a.ID].Compare(times[b.ID]); c != 0 {
			return c
		}
		return cmpU64(a.ID, b.ID)
	})
	return json.Marshal(struct {
		Agent   string      `json:"agent"`
		Records []llmRecord `json:"records"`
	}{in.Agent, recs})
}

// Consolidate implements Consolidator.
func (c *LLM) Consolidate(ctx context.Context, in Input) ([]Unit, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	msg, err := userMessage(&in)
	if err != nil {
		return nil, fmt.Errorf("%w: encode records: %v", ErrInvalidInput, err)
	}
	rf, _ := json.Marshal(map[string]any{
		"type":        "json_schema",
		"json_schema": map[string]any{"name": "lazymem_units", "strict": true, "schema": UnitSchema},
	})
	body, err := json.Marshal(chatRequest{
		Model:          c.opts.Model,
		Messages:       []chatMessage{{Role: "system", Content: c.opts.Prompt}, {Role: "user", Content: string(msg)}},
		Temperature:    c.opts.Temperature,
		ResponseFormat: rf,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %v", ErrInvalidInput, err)
	}
	allowed := in.ids()
	return httpretry.Do(ctx, c.bo, c.opts.MaxRetries, "lazymem: consolidate: POST "+c.ep.Shown, func() ([]Unit, time.Duration, error) {
		content, retryAfter, err := c.attempt(ctx, body)
		if err != nil {
			return nil, retryAfter, err
		}
		units, err := parseUnits(content, allowed, in.Agent)
		if err != nil {
			// A malformed answer may come out right on the next try.
			return nil, retryAfter, &httpretry.Retryable{Err: fmt.Errorf("POST %s: %w", c.ep.Shown, err)}
		}
		return units, retryAfter, nil
	})
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// attempt makes one request and returns the assistant message's content.
func (c *LLM) attempt(ctx context.Context, body []byte) (content string, retryAfter time.Duration, err error) {
	data, retryAfter, err := c.ep.Post(ctx, body, new(bytes.Buffer))
	if err != nil {
		return "", retryAfter, err
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return "", -1, &httpretry.Retryable{Err: fmt.Errorf("%w: POST %s: malformed JSON envelope: %v", ErrResponse, c.ep.Shown, err)}
	}
	if len(cr.Choices) == 0 {
		return "", -1, &httpretry.Retryable{Err: fmt.Errorf("%w: POST %s: no choices in the response", ErrResponse, c.ep.Shown)}
	}
	ch := cr.Choices[0]
	switch {
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		return "", -1, fmt.Errorf("%w: POST %s: the model refused: %s", ErrResponse, c.ep.Shown, *ch.Message.Refusal)
	case ch.FinishReason == "length":
		return "", -1, &httpretry.Retryable{Err: fmt.Errorf("%w: POST %s: output cut at the token limit (finish_reason \"length\")", ErrResponse, c.ep.Shown)}
	case ch.Message.Content == nil:
		return "", -1, &httpretry.Retryable{Err: fmt.Errorf("%w: POST %s: the message has no content", ErrResponse, c.ep.Shown)}
	}
	return *ch.Message.Content, -1, nil
}

// wireUnit is a unit as the schema has it; pointers tell a missing field
// from a zero one.
type wireUnit struct {
	Type         *string       `json:"type"`
	Topic        *string       `json:"topic"`
	Content      *string       `json:"content"`
	ActionItems  *[]wireAction `json:"action_items"`
	Participants *[]string     `json:"participants"`
	SourceIDs    *[]uint64     `json:"source_ids"`
	Time         *string       `json:"time"`
	Confidence   *float64      `json:"confidence"`
}

type wireAction struct {
	Owner *string `json:"owner"`
	Task  *string `json:"task"`
	Due   *string `json:"due"`
}

// parseUnits decodes and checks the model's answer against UnitSchema and
// the input: every unit valid, or an error and no unit.
func parseUnits(content string, allowed map[uint64]bool, agent string) ([]Unit, error) {
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	var env struct {
		Units *[]wireUnit `json:"units"`
	}
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("%w: output is not JSON of the unit schema: %v", ErrResponse, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrResponse)
	}
	if env.Units == nil {
		return nil, fmt.Errorf("%w: required field \"units\" is missing", ErrResponse)
	}
	out := make([]Unit, 0, len(*env.Units))
	for i, w := range *env.Units {
		u, err := w.unit(allowed, agent)
		if err != nil {
			return nil, fmt.Errorf("%w: units[%d]: %v", ErrResponse, i, err)
		}
		out = append(out, u)
	}
	return out, nil
}

func (w *wireUnit) unit(allowed map[uint64]bool, agent string) (Unit, error) {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"type", w.Type == nil}, {"topic", w.Topic == nil}, {"content", w.Content == nil},
		{"action_items", w.ActionItems == nil}, {"participants", w.Participants == nil},
		{"source_ids", w.SourceIDs == nil}, {"time", w.Time == nil}, {"confidence", w.Confidence == nil},
	} {
		if f.missing {
			return Unit{}, fmt.Errorf("required field %q is missing", f.name)
		}
	}
	typ, err := ParseType(*w.Type)
	if err != nil {
		return Unit{}, fmt.Errorf("type %q is not one of decision, action_item, preference, outcome, fact", *w.Type)
	}
	tm, err := time.Parse(time.RFC3339Nano, *w.Time)
	if err != nil {
		return Unit{}, fmt.Errorf("time %q is not RFC 3339", *w.Time)
	}
	u := Unit{
		Type: typ, Topic: *w.Topic, Content: *w.Content, Participants: *w.Participants,
		Time: tm, Confidence: *w.Confidence, Agent: agent,
	}
	if len(*w.SourceIDs) == 0 {
		return Unit{}, errors.New("source_ids is empty")
	}
	for _, id := range *w.SourceIDs {
		if !allowed[id] {
			return Unit{}, fmt.Errorf("source id %d is not in the input", id)
		}
	}
	u.SourceIDs = slices.Clone(*w.SourceIDs)
	for j, a := range *w.ActionItems {
		if a.Owner == nil || a.Task == nil || a.Due == nil {
			return Unit{}, fmt.Errorf("action_items[%d]: owner, task and due are required", j)
		}
		ai := ActionItem{Owner: *a.Owner, Task: *a.Task}
		if *a.Due != "" {
			if ai.Due, err = time.Parse(time.RFC3339Nano, *a.Due); err != nil {
				return Unit{}, fmt.Errorf("action_items[%d].due %q is not RFC 3339", j, *a.Due)
			}
		}
		u.ActionItems = append(u.ActionItems, ai)
	}
	if len(u.Participants) == 0 {
		u.Participants = nil
	}
	u.Normalize()
	if err := u.Validate(); err != nil {
		return Unit{}, err
	}
	return u, nil
}
