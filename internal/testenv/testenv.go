package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run under continuous integration (CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends t because a prerequisite is absent: t.Skipf by hand, t.Fatalf
// under CI. The message should say what is missing and how to provide it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf("prerequisite missing under CI=true: "+format, args...)
	}
	t.Skipf(format, args...)
}
