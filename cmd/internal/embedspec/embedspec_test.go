package embedspec

import (
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine/embed/gloss"
)

func TestOpen(t *testing.T) {
	for _, spec := range []string{"", "hash"} {
		if e, err := Open(spec); e != nil || err != nil {
			t.Errorf("%q: %v, %v; want nil, nil (the engine's default)", spec, e, err)
		}
	}
	// An openai endpoint is probed for its dimension: engine.Open needs it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[0.6,0.8,0]}]}`))
	}))
	defer srv.Close()
	e, err := Open("openai:nomic-embed-text@" + srv.URL + "/v1")
	if err != nil || e.Name() != "openai:nomic-embed-text" || e.Dim() != 3 {
		t.Fatalf("openai: %v, %v", e, err)
	}
	// An endpoint that refuses the model is an error at Open, not at the
	// first append.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
	}))
	defer bad.Close()
	if _, err := Open("openai:nope@" + bad.URL + "/v1"); err == nil {
		t.Error("openai endpoint answering 404: no error")
	}
	for _, spec := range []string{"hash:x", "openai", "openai:", "openai:m@localhost:11434", "bert", "use:/nonexistent/dir", "gloss:/nonexistent/dir"} {
		if _, err := Open(spec); err == nil {
			t.Errorf("%q: no error", spec)
		} else if spec != "use:/nonexistent/dir" && spec != "gloss:/nonexistent/dir" && !errors.Is(err, ErrSpec) {
			t.Errorf("%q: %v does not wrap ErrSpec", spec, err)
		}
	}
}

// TestUsagePlaceholder: the flag package shows the first back-quoted word
// of Usage as the placeholder of --embedder; it must be SPEC.
func TestUsagePlaceholder(t *testing.T) {
	if name, _ := flag.UnquoteUsage(&flag.Flag{Name: "embedder", Usage: Usage, Value: new(stringValue)}); name != "SPEC" {
		t.Fatalf("--embedder shows placeholder %q, want SPEC", name)
	}
}

// TestOpenGlossMissing: a gloss spec without the dictionary fails at Open
// and says how to fetch it.
func TestOpenGlossMissing(t *testing.T) {
	_, err := Open("gloss:" + t.TempDir())
	if !errors.Is(err, gloss.ErrMissing) || !strings.Contains(err.Error(), "make cedict") {
		t.Fatalf("gloss without the dictionary: %v, want gloss.ErrMissing naming make cedict", err)
	}
}

type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
