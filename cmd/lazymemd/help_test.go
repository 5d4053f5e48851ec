package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/lazymem/lazymem/cmd/internal/flaghelp"
)

// TestHelpPlaceholders: every flag of lazymemd -h shows a placeholder
// that reads as a value.
func TestHelpPlaceholders(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runOut(context.Background(), []string{"-h"}, &out, &errb); code != 0 {
		t.Fatalf("-h: code %d, stderr %s", code, errb.String())
	}
	n, problems := flaghelp.Check(errb.String())
	for _, p := range problems {
		t.Error(p)
	}
	if n < 10 {
		t.Fatalf("-h lists %d flags:\n%s", n, errb.String())
	}
}
