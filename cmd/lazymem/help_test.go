package main

import (
	"os"
	"path/filepath"
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

// TestDocsFlagsExist: every flag the docs give a lazymem command
// ("lazymem recall --db DIR --since 7d") is a flag of that command, so a
// renamed flag cannot leave a newcomer's first command failing. Read:
// README.md, docs/*.md (docs/benchmarks keeps the commands of their day)
// and the clients' READMEs.
func TestDocsFlagsExist(t *testing.T) {
	var files []string
	for _, g := range []string{"../../README.md", "../../docs/*.md", "../../clients/*/README.md"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	helps := map[string]string{}
	help := func(cmd []string) string {
		k := strings.Join(cmd, " ")
		if h, ok := helps[k]; ok {
			return h
		}
		_, out, errs := runCLI(t, "", append(cmd, "-h")...)
		helps[k] = out + errs
		return helps[k]
	}
	subs := map[string]bool{}
	for _, c := range helpCommands(t) {
		subs[strings.Join(c, " ")] = true
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range docCommands(string(b)) {
			words := cmd
			sub := []string{words[0]}
			if len(words) > 1 && subs[words[0]+" "+words[1]] {
				sub = append(sub, words[1])
			}
			if !subs[strings.Join(sub, " ")] {
				continue // not a command ("lazymem: engine: ..." in an error text)
			}
			for _, w := range words[len(sub):] {
				name, ok := strings.CutPrefix(w, "--")
				if !ok || name == "" {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				n++
				if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).MatchString(help(sub)) {
					t.Errorf("%s: lazymem %s --%s: no such flag (%q)", f, strings.Join(sub, " "), name, strings.Join(cmd, " "))
				}
			}
		}
	}
	t.Logf("%d flags of the docs checked", n)
	if n < 20 {
		t.Errorf("%d flags checked in the docs, want the docs' commands: the test no longer reads them", n)
	}
}

// docCommands returns the words after "lazymem " of every command the
// markdown text md shows, in code spans and fenced blocks, up to a
// shell operator or a comment.
func docCommands(md string) [][]string {
	var out [][]string
	re := regexp.MustCompile("(?:^|[`\\s(])lazymem ([^`|&;#\\n]+)")
	for _, m := range re.FindAllStringSubmatch(md, -1) {
		if f := strings.Fields(m[1]); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}
