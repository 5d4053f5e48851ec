//go:build diag

package engine

import (
	"os"
	"strconv"
	"strings"
)

// In a diagnostic build LAZYMEM_ECHO_OFF turns off the assistant-turn
// rules it lists (comma-separated numbers 1-3, recall_echo.go), and
// LAZYMEM_ECHO_ANY_PROMPT (any value) lets rule 3 follow any pure
// question, not only a bare prompt, and LAZYMEM_NO_EXPANSION (any value) turns off the built-in lexicon's and
// the categories' expansion of every query, so that one build can measure
// each rule on a set (bench/zhmem's TestDiagRules, lazymem evalzh).
func init() {
	for _, f := range strings.Split(os.Getenv("LAZYMEM_ECHO_OFF"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n >= 1 && n <= len(echoRule) {
			echoRule[n-1] = false
		}
	}
	if os.Getenv("LAZYMEM_ECHO_ANY_PROMPT") != "" {
		promptOnly = false
	}
	if os.Getenv("LAZYMEM_NO_EXPANSION") != "" {
		noExpansion = true
	}
}

// LAZYMEM_NO_ASK_ASSISTANT (any value) turns asksAssistant off
// (recall_you.go).
func init() {
	if os.Getenv("LAZYMEM_NO_ASK_ASSISTANT") != "" {
		askAssistant = false
	}
}
