//go:build diag

package engine

import (
	"os"
	"strconv"
	"strings"
)

// In a diagnostic build LAZYMEM_CHANGE=FACTOR sets changeDemote
// (recall_change.go; 1 turns the rule off), and
// LAZYMEM_ALIASES (any value) turns the alias expansion on and
// LAZYMEM_NO_ALIASES off
// (recall_alias.go) and LAZYMEM_ALIAS_REPS sets its weight, and LAZYMEM_SUPERSEDE="RATIO,OVERLAP,SIM" sets
// supersession's thresholds (recall_newer.go), LAZYMEM_SUPERSEDE_CURRENT
// (any value) narrows supersession to questions about the current state,
// LAZYMEM_SETTLE=N sets the settling window (0: off), and
// LAZYMEM_NO_SLOT (any value) turns supersession by slot off and
// LAZYMEM_SLOT="RATIO,OVERLAP,TYPEBOOST" sets its thresholds and the
// answer type's factor (recall_slot.go),
// LAZYMEM_NO_NAMED_I (any value) keeps the first person to the role "user"
// (recall_parse.go), so that one build can sweep them.
func init() {
	if n, err := strconv.Atoi(os.Getenv("LAZYMEM_SUPERSEDE_LEVEL")); err == nil {
		supersedeLevel = n
	}
	if n, err := strconv.Atoi(os.Getenv("LAZYMEM_SETTLE_MODE")); err == nil {
		settleMode = n
	}
	if n, err := strconv.Atoi(os.Getenv("LAZYMEM_SETTLE")); err == nil {
		settleWindow = n
	}
	if os.Getenv("LAZYMEM_NO_NAMED_I") != "" {
		namedFirstPerson = false
	}
	if v := os.Getenv("LAZYMEM_CHANGE"); v != "" {
		if d, err := strconv.ParseFloat(v, 32); err == nil {
			changeDemote = float32(d)
		}
	}
	envFloats("LAZYMEM_SUPERSEDE",
		func(x float64) { supersedeRatio = x },
		func(x float64) { supersedeOverlap = x },
		func(x float64) { supersedeSim = x })
	if os.Getenv("LAZYMEM_NO_SLOT") != "" {
		slotOn = false
	}
	envFloats("LAZYMEM_SLOT",
		func(x float64) { slotRatio = x },
		func(x float64) { slotOverlap = x },
		func(x float64) { slotTypeBoost = float32(x) })
	if n, err := strconv.Atoi(os.Getenv("LAZYMEM_ALIAS_REPS")); err == nil {
		aliasReps = n
	}
	if os.Getenv("LAZYMEM_ALIASES") != "" {
		useAliases = true
	}
	if os.Getenv("LAZYMEM_NO_ALIASES") != "" {
		useAliases = false
	}
}

// envFloats hands the comma-separated numbers of the environment variable
// name to set, the i-th number to set[i]; a number that does not parse is
// passed over, so "1.2,,0.5" leaves the second setting as it was.
func envFloats(name string, set ...func(float64)) {
	v := os.Getenv(name)
	if v == "" {
		return
	}
	for i, f := range strings.Split(v, ",") {
		if x, err := strconv.ParseFloat(f, 64); err == nil && i < len(set) {
			set[i](x)
		}
	}
}
