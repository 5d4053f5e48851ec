package version

import (
	"runtime/debug"
	"strings"
)

// String returns the version line of the command name: the module version
// of the build (a tagged release when built with "go install ...@vX"), or
// "(devel)" followed by the VCS revision and a "+modified" mark when the
// binary was built from a work tree.
func String(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (unknown: built without module support)"
	}
	return Format(name, bi)
}

// Format is String for a given build: split out so that it can be tested
// with the build infos of a release and of a dirty work tree.
func Format(name string, bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(v)
	var rev, modified, at string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			at = s.Value
		}
	}
	if rev != "" {
		b.WriteString(" ")
		b.WriteString(rev)
		if modified == "true" {
			b.WriteString("+modified")
		}
		if at != "" {
			b.WriteString(" ")
			b.WriteString(at)
		}
	}
	if bi.GoVersion != "" {
		b.WriteString(" ")
		b.WriteString(bi.GoVersion)
	}
	return b.String()
}
