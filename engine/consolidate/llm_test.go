package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chatServer answers POST /v1/chat/completions with the wire format of
// OpenAI's API; reply returns the status and the assistant content (or a
// raw body when raw is set) for the n-th request (from 1).
type chatServer struct {
	srv   *httptest.Server
	calls atomic.Int32
	last  atomic.Value // the last request body
}

type reply struct {
	status  int
	content string
	raw     string
	wait    bool // block until the client gives up
	header  map[string]string
}

func newChatServer(t *testing.T, reply func(n int) reply) *chatServer {
	cs := &chatServer{}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(cs.calls.Add(1))
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		cs.last.Store(b)
		rp := reply(n)
		if rp.wait {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		if rp.status != 0 && rp.status != http.StatusOK {
			w.WriteHeader(rp.status)
			io.WriteString(w, `{"error": {"message": "upstream overloaded", "type": "server_error"}}`)
			return
		}
		if rp.raw != "" {
			io.WriteString(w, rp.raw)
			return
		}
		content, _ := json.Marshal(rp.content)
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1764583200,"model":"test-model",
			"choices":[{"index":0,"message":{"role":"assistant","content":`+string(content)+`,"refusal":null},"logprobs":null,"finish_reason":"stop"}],
			"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}`)
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func newTestLLM(t *testing.T, cs *chatServer, timeout time.Duration) *LLM {
	c, err := NewLLM(LLMOptions{BaseURL: cs.srv.URL + "/v1", Model: "test-model", APIKey: "k", Timeout: timeout,
		MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const goodOutput = `{"units": [
 {"type": "decision", "topic": "上线时间", "content": "产品上线时间定在十二月十五号", "action_items": [],
  "participants": ["王磊"], "source_ids": [10], "time": "2026-12-01T10:05:00+08:00", "confidence": 0.9},
 {"type": "action_item", "topic": "更新定价页面", "content": "赵强负责更新定价页面", 
  "action_items": [{"owner": "赵强", "task": "更新定价页面", "due": "2026-12-07T14:00:00+08:00"}],
  "participants": ["王磊", "赵强"], "source_ids": [31, 30], "time": "2026-12-01T10:12:00+08:00", "confidence": 0.7}
]}`

func TestLLMGoodOutput(t *testing.T) {
	cs := newChatServer(t, func(int) reply { return reply{content: goodOutput} })
	c := newTestLLM(t, cs, 5*time.Second)
	units, err := c.Consolidate(context.Background(), meetingInput())
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 2 || units[0].Type != TypeDecision || units[1].ActionItems[0].Owner != "赵强" {
		t.Fatalf("units %+v", units)
	}
	if got := units[1].SourceIDs; len(got) != 2 || got[0] != 30 || got[1] != 31 {
		t.Errorf("source ids %v, want sorted [30 31]", got)
	}
	if !units[1].ActionItems[0].Due.Equal(time.Date(2026, 12, 7, 14, 0, 0, 0, cst)) || units[0].Agent != "meeting" {
		t.Errorf("due %v agent %q", units[1].ActionItems[0].Due, units[0].Agent)
	}
	// The request speaks the wire format: model, two messages, a strict
	// json_schema response format, the records as JSON with context turns.
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(cs.last.Load().([]byte), &req); err != nil {
		t.Fatal(err)
	}
	if req.Model != "test-model" || len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.ResponseFormat.Type != "json_schema" ||
		!req.ResponseFormat.JSONSchema.Strict || !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"source_ids"`) {
		t.Fatalf("request %+v", req)
	}
	var user struct {
		Agent   string      `json:"agent"`
		Records []llmRecord `json:"records"`
	}
	if err := json.Unmarshal([]byte(req.Messages[1].Content), &user); err != nil {
		t.Fatal(err)
	}
	if user.Agent != "meeting" || len(user.Records) != 7 || user.Records[2].ID != 30 || user.Records[2].Selected || !user.Records[3].Selected {
		t.Fatalf("user message %+v", user)
	}
	if n := cs.calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestLLMRejectsWhole(t *testing.T) {
	unit := `{"type": "decision", "topic": "t", "content": "c", "action_items": [], "participants": [], "source_ids": [10], "time": "2026-12-01T10:05:00Z", "confidence": 0.5}`
	for _, tc := range []struct {
		name, content, want string
	}{
		{"invalid JSON", `{"units": [`, "not JSON"},
		{"prose", `Here are the units: none.`, "not JSON"},
		{"trailing data", `{"units": []} {}`, "data after"},
		{"unknown top field", `{"units": [], "notes": "x"}`, `unknown field "notes"`},
		{"unknown unit field", `{"units": [` + strings.Replace(unit, `"topic"`, `"mood": "ok", "topic"`, 1) + `]}`, `unknown field "mood"`},
		{"wrong type", `{"units": [` + strings.Replace(unit, `0.5`, `"high"`, 1) + `]}`, "confidence"},
		{"source id not a number", `{"units": [` + strings.Replace(unit, `[10]`, `["10"]`, 1) + `]}`, "source_ids"},
		{"missing required", `{"units": [` + strings.Replace(unit, `"topic": "t", `, ``, 1) + `]}`, `"topic" is missing`},
		{"missing units", `{}`, `"units" is missing`},
		{"bad enum", `{"units": [` + strings.Replace(unit, `"decision"`, `"idea"`, 1) + `]}`, `type "idea"`},
		{"bad time", `{"units": [` + strings.Replace(unit, `2026-12-01T10:05:00Z`, `yesterday`, 1) + `]}`, "RFC 3339"},
		{"confidence out of range", `{"units": [` + strings.Replace(unit, `0.5`, `1.5`, 1) + `]}`, "confidence"},
		{"foreign source id", `{"units": [` + unit + `, ` + strings.Replace(unit, `[10]`, `[10, 999]`, 1) + `]}`, "units[1]: source id 999 is not in the input"},
		{"empty sources", `{"units": [` + strings.Replace(unit, `[10]`, `[]`, 1) + `]}`, "source_ids is empty"},
		{"empty content", `{"units": [` + strings.Replace(unit, `"c"`, `""`, 1) + `]}`, "content is empty"},
		{"action item missing due", `{"units": [` + strings.Replace(unit, `"action_items": []`, `"action_items": [{"owner": "a", "task": "b"}]`, 1) + `]}`, "action_items[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newChatServer(t, func(int) reply { return reply{content: tc.content} })
			c := newTestLLM(t, cs, 5*time.Second)
			units, err := c.Consolidate(context.Background(), meetingInput())
			if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), tc.want) || units != nil {
				t.Fatalf("units %v, err %v, want ErrResponse mentioning %q", units, err, tc.want)
			}
			// Invalid output is retried: MaxRetries 2 means 3 attempts.
			if n := cs.calls.Load(); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
		})
	}
}

func TestLLMInvalidThenValid(t *testing.T) {
	cs := newChatServer(t, func(n int) reply {
		if n == 1 {
			return reply{content: `{"units": [{"type": "decision"}]}`}
		}
		return reply{content: goodOutput}
	})
	units, err := newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if err != nil || len(units) != 2 {
		t.Fatalf("units %v err %v", units, err)
	}
}

func TestLLM5xxThenSuccess(t *testing.T) {
	cs := newChatServer(t, func(n int) reply {
		switch n {
		case 1:
			return reply{status: http.StatusServiceUnavailable}
		case 2:
			return reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After-Ms": "1"}}
		}
		return reply{content: goodOutput}
	})
	units, err := newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if err != nil || len(units) != 2 {
		t.Fatalf("units %v err %v", units, err)
	}
	if n := cs.calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestLLMHTTPErrors(t *testing.T) {
	cs := newChatServer(t, func(int) reply { return reply{status: http.StatusInternalServerError} })
	_, err := newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if !errors.Is(err, ErrHTTP) || !strings.Contains(err.Error(), "upstream overloaded") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("err %v", err)
	}
	cs = newChatServer(t, func(int) reply { return reply{status: http.StatusBadRequest} })
	_, err = newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if !errors.Is(err, ErrHTTP) || cs.calls.Load() != 1 {
		t.Fatalf("400: err %v after %d requests, want ErrHTTP after 1", err, cs.calls.Load())
	}
	cs = newChatServer(t, func(int) reply {
		return reply{raw: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}
	})
	_, err = newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("refusal: %v", err)
	}
	cs = newChatServer(t, func(int) reply {
		return reply{raw: `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"units\": ["},"finish_reason":"length"}]}`}
	})
	_, err = newTestLLM(t, cs, 5*time.Second).Consolidate(context.Background(), meetingInput())
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "token limit") {
		t.Fatalf("length: %v", err)
	}
}

func TestLLMTimeout(t *testing.T) {
	cs := newChatServer(t, func(int) reply { return reply{wait: true} })
	// Attempts are counted as the client sends them: on a loaded machine
	// the server may not see a request before its 20 ms are up.
	var sent atomic.Int64
	c, err := NewLLM(LLMOptions{BaseURL: cs.srv.URL + "/v1", Model: "test-model", APIKey: "k", Timeout: 20 * time.Millisecond,
		MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return http.DefaultTransport.RoundTrip(r)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Consolidate(context.Background(), meetingInput())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no response within 20ms") {
		t.Fatalf("err %v", err)
	}
	if n := sent.Load(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	// The caller's deadline ends the retries too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	c = newTestLLM(t, cs, time.Minute)
	if _, err := c.Consolidate(ctx, meetingInput()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller deadline: %v", err)
	}
}

func TestLLMRefused(t *testing.T) {
	// A port nobody listens on: connection refused, named as such.
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	c, err := NewLLM(LLMOptions{BaseURL: u, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Consolidate(context.Background(), meetingInput()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err %v", err)
	}
}

func TestLLMOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    LLMOptions
		want string
	}{
		{LLMOptions{BaseURL: "ftp://x", Model: "m"}, "BaseURL"},
		{LLMOptions{}, "Model is required"},
		{LLMOptions{Model: "m", Temperature: 3}, "Temperature"},
		{LLMOptions{Model: "m", BackoffBase: time.Minute, BackoffMax: time.Second}, "BackoffBase"},
	} {
		if _, err := NewLLM(tc.o); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLLM(%+v): %v, want %q", tc.o, err, tc.want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
