//go:build amd64 && !purego

package vecmath

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/lazymem/lazymem/internal/testenv"
)

// TestGeneratedAsmIsCurrent re-runs the avo generator in _asm and compares
// its output with the committed dot_amd64.s. It needs avo and its
// dependencies in the module cache and never touches the network
// (GOPROXY=off); when they are missing it skips and says how to fix that.
func TestGeneratedAsmIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the avo generator; skipped in -short mode")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "go command not found")
	}
	out := filepath.Join(t.TempDir(), "dot_amd64.s")
	cmd := exec.Command(goBin, "run", ".", "-out", out, "-pkg", "vecmath")
	cmd.Dir = "_asm"
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if msg, err := cmd.CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot run the avo generator offline (run `cd vecmath/_asm && go mod download` once to cache avo v0.5.0): %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("dot_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	// The first line names the command line, which differs in -out.
	body := func(b []byte) []byte {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return b[i+1:]
		}
		return b
	}
	if !bytes.Equal(body(got), body(want)) {
		t.Fatal("dot_amd64.s is stale: run `go generate ./vecmath/` and commit the result")
	}
}

// TestAsmAVX512NeedsOnlyF: platformKernels enables the AVX-512 tier on
// AVX512F alone, so the generated code must not touch X16-X31/Y16-Y31 (VEX
// cannot encode them; EVEX on 128/256-bit registers needs AVX512VL) and must
// not need DQ/BW/VL instructions.
func TestAsmAVX512NeedsOnlyF(t *testing.T) {
	src, err := os.ReadFile("dot_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`\b[XY](1[6-9]|2[0-9]|3[01])\b`).Find(src); m != nil {
		t.Fatalf("dot_amd64.s uses %s, which needs AVX512VL", m)
	}
	if m := regexp.MustCompile(`Requires:.*AVX512(DQ|BW|VL|CD)`).Find(src); m != nil {
		t.Fatalf("dot_amd64.s: %s", m)
	}
}
