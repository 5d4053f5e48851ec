package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileSizes holds the house rule for engine and index (sub-packages
// included): no non-test Go file passes 600 lines unless it is one role
// and says so in a comment ("This file is one role, ...").
func TestFileSizes(t *testing.T) {
	for _, root := range []string{".", filepath.Join("..", "index")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if n := strings.Count(string(b), "\n"); n > 600 && !strings.Contains(string(b), "// This file is one role") {
				t.Errorf("%s: %d lines: split it by role, or say in a comment why it is one role", path, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
