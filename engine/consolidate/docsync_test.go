package consolidate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// drawing returns the lines of an ASCII layout drawing in text: those
// starting with '+' or '|' once indentation and comment markers are gone.
func drawing(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimPrefix(line, "//")
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "+") || strings.HasPrefix(line, "|") {
			out = append(out, line)
		}
	}
	return out
}

// TestFormatDocInSync: the unit layout drawn in the package comment and in
// docs/format/unit.md is the same drawing.
func TestFormatDocInSync(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "format", "unit.md"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := drawing(string(doc)), drawing(string(md))
	if len(a) < 20 {
		t.Fatalf("doc.go drawing has %d lines", len(a))
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("docs/format/unit.md and doc.go draw different layouts:\n%s\n---\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
}
