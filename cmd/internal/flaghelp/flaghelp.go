package flaghelp

import (
	"fmt"
	"regexp"
	"strings"
)

// flagLine is a flag line of flag.PrintDefaults: "  -name PLACEHOLDER", or
// "  -name" for a boolean.
var flagLine = regexp.MustCompile(`^  -([a-z0-9-]+)(?: (\S+))?$`)

// placeholder is what a flag's value reads as: an upper-case word (N,
// DIR, HALF_LIFE, KEY=VALUE) or the name of a basic type. "value", the
// flag package's name for a flag.Value, says nothing and is refused.
var placeholder = regexp.MustCompile(`^(?:[A-Z][A-Z0-9_]*(?:[=:][A-Z][A-Z0-9_]*)?|string|int|uint|int64|uint64|float|duration)$`)

// Check returns the number of flags the help lists and one problem per
// flag line whose placeholder is not a value.
func Check(help string) (flags int, problems []string) {
	for _, line := range strings.Split(help, "\n") {
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "  -") {
				flags++
				problems = append(problems, fmt.Sprintf("flag line %q is not -name or -name PLACEHOLDER", line))
			}
			continue
		}
		flags++
		if m[2] != "" && !placeholder.MatchString(m[2]) {
			problems = append(problems, fmt.Sprintf("-%s shows placeholder %q, want an upper-case word or a type name", m[1], m[2]))
		}
	}
	return flags, problems
}
