package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeLibraryExample runs the README's library example as a
// program (the block between "As a library:" and the next heading) and
// checks that its recall prints the record it appended: the example
// once appended a record stamped now and asked about "yesterday", and
// printed nothing.
func TestReadmeLibraryExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not in -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH to build the README's example")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "As a library:\n\n```go\n")
	if !ok {
		t.Fatal(`README.md: no "As a library:" followed by a go block: the test no longer finds the example`)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README.md: the library example's block is not closed")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n\n\t\"github.com/lazymem/lazymem/engine\"\n)\n\n" +
		"var _, _ = fmt.Sprint, time.Now\n\nfunc main() {\n\tctx := context.Background()\n" + block +
		"\t_, _, _, _ = db, ids, err, res\n}\n"
	mod := "module example.com/readme\n\ngo 1.26\n\nrequire github.com/lazymem/lazymem v0.0.0\n\nreplace github.com/lazymem/lazymem => " + repo + "\n"
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"main.go": prog, "go.mod": mod, "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = dir
	// The module cache holds every dependency (this package was built
	// from it): no network.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's library example does not run: %v\n%s\n--- the program:\n%s", err, out, prog)
	}
	if !strings.Contains(string(out), "connection pool size to 32") {
		t.Fatalf("the README's library example recalls nothing of what it appended; it printed:\n%s", out)
	}
}
