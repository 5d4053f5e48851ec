package embedspec

import (
	"errors"
	"flag"
	"testing"
)

func TestOpen(t *testing.T) {
	for _, spec := range []string{"", "hash"} {
		if e, err := Open(spec); e != nil || err != nil {
			t.Errorf("%q: %v, %v; want nil, nil (the engine's default)", spec, e, err)
		}
	}
	e, err := Open("openai:nomic-embed-text@http://localhost:11434/v1")
	if err != nil || e.Name() != "openai:nomic-embed-text" {
		t.Fatalf("openai: %v, %v", e, err)
	}
	for _, spec := range []string{"hash:x", "openai", "openai:", "openai:m@localhost:11434", "bert", "use:/nonexistent/dir"} {
		if _, err := Open(spec); err == nil {
			t.Errorf("%q: no error", spec)
		} else if spec != "use:/nonexistent/dir" && !errors.Is(err, ErrSpec) {
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

type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
