//go:build diag

package engine

import (
	"os"
	"strconv"
)

// In a diagnostic build LAZYMEM_CATEGORY_SCALE and LAZYMEM_CATEGORY_REPS
// set the category weight (recall_parse.go), so that one build can sweep
// it (bench/eval's TestDiagPerConversation); a value that is not a
// non-negative integer is ignored. LAZYMEM_CATEGORY_ANY expands every
// category the question names, asked for or not (categories.go).
func init() {
	if os.Getenv("LAZYMEM_CATEGORY_ANY") != "" {
		categoryAsked = false
	}
	for env, v := range map[string]*int{"LAZYMEM_CATEGORY_SCALE": &categoryScale, "LAZYMEM_CATEGORY_REPS": &categoryReps} {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n >= 0 {
			*v = n
		}
	}
}
