//go:build diag

package engine

import (
	"os"
	"strconv"
)

// In a diagnostic build LAZYMEM_CATEGORY_SCALE and LAZYMEM_CATEGORY_REPS
// set the category weight (recall_parse.go), so that one build can sweep
// it (bench/eval's TestDiagPerConversation). A value that is not a
// positive integer is ignored.
func init() {
	for env, v := range map[string]*int{"LAZYMEM_CATEGORY_SCALE": &categoryScale, "LAZYMEM_CATEGORY_REPS": &categoryReps} {
		if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n >= 0 {
			*v = n
		}
	}
}
