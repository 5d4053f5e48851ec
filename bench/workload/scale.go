package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// Scales are the corpus sizes the benchmark suite reports.
var Scales = []int{10_000, 100_000, 1_000_000}

// ParseScale parses a record count as written on a command line: "10k",
// "100K", "1m", "2.5M", "250000" or "1_000_000".
func ParseScale(s string) (int, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult, t = 1e3, t[:len(t)-1]
		case 'm', 'M':
			mult, t = 1e6, t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "eEpPxXnN") {
		return 0, fmt.Errorf("%w: scale %q: want a count like 10k, 1m or 250000", ErrInvalidConfig, s)
	}
	n := f * mult
	if n < 0 || n > 1<<40 || n != float64(int64(n)) {
		return 0, fmt.Errorf("%w: scale %q: not a whole count in [0, 2^40]", ErrInvalidConfig, s)
	}
	return int(n), nil
}
