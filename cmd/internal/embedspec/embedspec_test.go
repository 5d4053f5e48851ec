package embedspec

import (
	"errors"
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
