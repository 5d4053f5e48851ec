package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/cmd/internal/flaghelp"
)

// helpCommands returns the commands the top-level usage lists, so that a
// new command is checked without editing this test.
func helpCommands(t *testing.T) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(usage, "\nCommands:\n")
	if !ok {
		t.Fatal("usage has no Commands: section")
	}
	section, _, _ = strings.Cut(section, "\n\n")
	name := regexp.MustCompile(`^  ([a-z]+)\s`)
	var cmds [][]string
	for _, line := range strings.Split(section, "\n") {
		if m := name.FindStringSubmatch(line); m != nil {
			cmds = append(cmds, []string{m[1]})
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("found %d commands in usage, want the whole list", len(cmds))
	}
	// eval takes its dataset as a subcommand.
	return append(cmds, []string{"eval", "locomo"})
}

// TestHelpPlaceholders renders every command's help and fails on a flag
// whose placeholder does not read as a value ("-embedder make use-model").
func TestHelpPlaceholders(t *testing.T) {
	noFlags := map[string]bool{"version": true, "eval": true} // eval's flags are its dataset's
	for _, cmd := range helpCommands(t) {
		code, out, errs := runCLI(t, "", append(cmd, "-h")...)
		if code != 0 {
			t.Errorf("%v -h: code %d, stderr %s", cmd, code, errs)
			continue
		}
		n, problems := flaghelp.Check(out + errs)
		for _, p := range problems {
			t.Errorf("%v: %s", cmd, p)
		}
		if n == 0 && !(len(cmd) == 1 && noFlags[cmd[0]]) {
			t.Errorf("%v -h lists no flags:\n%s", cmd, out+errs)
		}
	}
}
