package storetest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/lazymem/lazymem/segment"
)

// DamageLogBlock seals the whole tail of the closed log in logDir, moves it
// into sstables, and flips 8 bytes in the middle of the largest one: one
// data block, whose records then read as *segment.CorruptionError.
func DamageLogBlock(t testing.TB, logDir string, opts segment.Options) {
	t.Helper()
	l, err := segment.Open(logDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(logDir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no sstable in the log")
	}
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	sort.Slice(ssts, func(i, j int) bool { return size(ssts[i]) > size(ssts[j]) })
	b, err := os.ReadFile(ssts[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+8; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(ssts[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
}
