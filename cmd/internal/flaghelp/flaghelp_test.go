package flaghelp

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage string
		bad   bool
	}{
		{"placeholder", "store `DIR`", false},
		{"key=value", "filter `KEY=VALUE`", false},
		{"type name", "store directory", false},
		{"command in quotes", "model files from `make use-model`", true},
		{"lower-case word", "the `dir` to use", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.String("db", "", tc.usage)
			fs.Bool("quiet", false, "no log")
			var b strings.Builder
			fs.SetOutput(&b)
			fs.PrintDefaults()
			n, problems := Check(b.String())
			if n != 2 {
				t.Fatalf("counted %d flags in %q, want 2", n, b.String())
			}
			if (len(problems) > 0) != tc.bad {
				t.Fatalf("usage %q: problems %q, want bad=%v", tc.usage, problems, tc.bad)
			}
		})
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("origin", "an origin", func(string) error { return nil })
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	if _, problems := Check(b.String()); len(problems) != 1 {
		t.Fatalf("a flag.Func without placeholder shows %q; problems %q, want one", b.String(), problems)
	}
}
