package testwatch

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNamesTheHungTest runs itself in a child binary with a short
// timeout, where it hangs: the output's last line names it, and the
// watchdog, not Go's timeout panic, ends the child.
func TestNamesTheHungTest(t *testing.T) {
	if os.Getenv("TESTWATCH_CHILD") != "" {
		hangHere() // in the child: the test that hangs
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestNamesTheHungTest$", "-test.timeout", "3s")
	cmd.Env = append(os.Environ(), "TESTWATCH_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the hung child passed:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "TestNamesTheHungTest") || !strings.Contains(string(out), "hangHere") {
		t.Fatalf("the last line %q does not name the hung test, or its stack is missing:\n%s", last, out)
	}
	if strings.Contains(string(out), "panic: test timed out") {
		t.Fatalf("Go's own timeout fired first:\n%s", out)
	}
}

// hangHere is where the child's test hangs.
func hangHere() { time.Sleep(time.Hour) }

func TestMain(m *testing.M) {
	if os.Getenv("TESTWATCH_CHILD") != "" {
		Start()
	}
	os.Exit(m.Run())
}
