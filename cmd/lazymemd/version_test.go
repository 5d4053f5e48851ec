package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestVersionFlag: --version prints the version line on standard output
// and exits 0 without needing --db or opening anything.
func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runOut(context.Background(), []string{"--version"}, &out, &errb); code != 0 {
		t.Fatalf("--version: code %d, stderr %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "lazymemd ") || !strings.HasSuffix(out.String(), "\n") {
		t.Fatalf("--version printed %q, want a line starting with lazymemd", out.String())
	}
	if errb.Len() != 0 {
		t.Fatalf("--version wrote to stderr: %s", errb.String())
	}
}
