package logbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBuffer: concurrent writes all land, and reads during them see whole
// writes (run under -race by make test's race pass of its users).
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "x\n"); n != 800 {
		t.Fatalf("%d writes landed, want 800", n)
	}
}
