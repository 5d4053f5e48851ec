package engine_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/internal/testenv"
)

// TestNoBenchDependency: layers point down. The engine and its
// sub-packages are a library that benchmarks are built on, so no package
// they import (tests aside) may be one of the bench packages.
func TestNoBenchDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "no go command: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/lazymem/lazymem/engine/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 || !strings.Contains(string(out), "github.com/lazymem/lazymem/engine\n") {
		t.Fatalf("go list -deps printed %d packages, not the engine's graph:\n%s", len(pkgs), out)
	}
	for _, p := range pkgs {
		if strings.Contains(p, "/bench") {
			t.Errorf("the engine depends on %s", p)
		}
	}
}
