//go:build unix

package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiskUsageCountsBlocks: du counts allocated blocks, so a sparse file
// of 8 MiB with 4 KiB written counts about 4 KiB, and the skipped name
// not at all.
func TestDiskUsageCountsBlocks(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, reserveFile), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	noReserve, err := diskUsage(dir, reserveFile)
	if err != nil {
		t.Fatal(err)
	}
	if noReserve < 4096 || noReserve >= 1<<20 {
		t.Errorf("sparse 8 MiB file with 4 KiB written: %d bytes allocated", noReserve)
	}
	if all-noReserve < 64<<10 {
		t.Errorf("with the reserve %d, without %d", all, noReserve)
	}
}
