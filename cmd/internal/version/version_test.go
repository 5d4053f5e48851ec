package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.24.0", Main: debug.Module{Version: "v1.2.3"}},
			"lazymem v1.2.3 go1.24.0"},
		{"devel clean", debug.BuildInfo{GoVersion: "go1.24.0", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			"lazymem (devel) abc123 go1.24.0"},
		{"devel dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"lazymem (devel) abc123+modified 2026-12-01T10:00:00Z"},
		{"no version", debug.BuildInfo{}, "lazymem (devel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Format("lazymem", &tc.bi); got != tc.want {
				t.Errorf("Format = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestString checks the running test binary's own build info: it names
// the command and carries the Go version the binary was built with.
func TestString(t *testing.T) {
	s := String("lazymemd")
	if !strings.HasPrefix(s, "lazymemd ") {
		t.Fatalf("String = %q, want the command name first", s)
	}
	bi, ok := debug.ReadBuildInfo()
	if ok && !strings.Contains(s, bi.GoVersion) {
		t.Fatalf("String = %q, want the Go version %s", s, bi.GoVersion)
	}
}
