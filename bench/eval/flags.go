package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lazymem/lazymem/engine"
)

// ParseModes reads a comma-separated list of modes ("lazy,sparse,dense"),
// as given to `lazymem eval locomo --mode`. "all" or "" is DefaultModes.
func ParseModes(s string) ([]engine.Mode, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return append([]engine.Mode(nil), DefaultModes...), nil
	}
	var ms []engine.Mode
	for i, f := range strings.Split(s, ",") {
		m := engine.Mode(strings.TrimSpace(f))
		switch m {
		case engine.ModeLazy, engine.ModeSparse, engine.ModeDense:
		default:
			return nil, fmt.Errorf("%w: mode %d: %q (want lazy, sparse, dense or all)", ErrConfig, i+1, f)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// ParseKs reads a comma-separated list of cut-offs ("1,5,10,25"), as given
// to `lazymem eval locomo --k`. "" is DefaultKs.
func ParseKs(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return append([]int(nil), DefaultKs...), nil
	}
	var ks []int
	for i, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > engine.MaxK {
			return nil, fmt.Errorf("%w: k %d: %q (want an integer in [1, %d])", ErrConfig, i+1, f, engine.MaxK)
		}
		ks = append(ks, k)
	}
	return ks, nil
}
