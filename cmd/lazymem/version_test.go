package main

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: code %d, stderr %s", args, code, errs)
		}
		if !strings.HasPrefix(out, "lazymem ") || strings.Count(out, "\n") != 1 {
			t.Fatalf("%v printed %q, want one line starting with lazymem", args, out)
		}
	}
	if code, _, errs := runCLI(t, "", "version", "extra"); code != 2 || !strings.Contains(errs, "no arguments") {
		t.Fatalf("version extra: code %d, stderr %s", code, errs)
	}
}
