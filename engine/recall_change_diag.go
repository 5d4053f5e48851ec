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
	if v := os.Getenv("LAZYMEM_SUPERSEDE"); v != "" {
		for i, f := range strings.Split(v, ",") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				continue
			}
			switch i {
			case 0:
				supersedeRatio = x
			case 1:
				supersedeOverlap = x
			case 2:
				supersedeSim = x
			}
		}
	}
	if os.Getenv("LAZYMEM_NO_SLOT") != "" {
		slotOn = false
	}
	if v := os.Getenv("LAZYMEM_SLOT"); v != "" {
		for i, f := range strings.Split(v, ",") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				continue
			}
			switch i {
			case 0:
				slotRatio = x
			case 1:
				slotOverlap = x
			case 2:
				slotTypeBoost = float32(x)
			}
		}
	}
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
