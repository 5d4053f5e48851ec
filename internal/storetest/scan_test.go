package storetest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable/block"
)

// TestImagesSeeThroughPebbleBlocks: a text that a block Pebble compressed
// with MinLZ (Snappy, its fallback, for older table formats) holds only
// as back-references is neither in the file's raw bytes nor in a zstd
// frame, and Images still finds it (through Pebble's reader); with zstd
// blocks it is found in the zstd frames as before.
func TestImagesSeeThroughPebbleBlocks(t *testing.T) {
	for _, c := range []struct {
		name    string
		profile *block.CompressionProfile
		where   string
	}{{"minlz", block.MinLZCompression, " (table)"}, {"zstd", block.ZstdCompression, " (zstd)"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := &pebble.Options{Logger: quietLogger{t}}
			opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.UniformDBCompressionSettings(c.profile) })
			db, err := pebble.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			needle := []byte("marigold-quartz-lantern")
			// The needle's two halves come first, elsewhere: LZ codes the
			// needle as two back-references, and the file holds no copy of
			// it whole.
			filler := strings.Repeat("the team agreed on the budget again and again ", 40)
			value := []byte(filler + "one marigold-qua two " + filler + "three rtz-lantern four " + filler + string(needle))
			if err := db.Set([]byte("k"), value, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			ims := Images(t, dir)
			var sst *Image
			for i := range ims {
				if strings.HasSuffix(ims[i].Path, ".sst") {
					sst = &ims[i]
				}
			}
			if sst == nil {
				t.Fatal("no sstable after the flush")
			}
			if bytes.Contains(sst.Raw, needle) {
				t.Fatalf("the value lies raw in %s: its block was not compressed, the test proves nothing", sst.Path)
			}
			where := Find(ims, needle)
			found := false
			for _, w := range where {
				found = found || w == sst.Path+c.where
			}
			if !found {
				t.Fatalf("the needle was found in %q, want %q among them", where, sst.Path+c.where)
			}
		})
	}
}

// quietLogger keeps Pebble's informational lines out of the test's output
// and fails the test on its errors.
type quietLogger struct{ t *testing.T }

func (quietLogger) Infof(string, ...any)           {}
func (l quietLogger) Errorf(f string, args ...any) { l.t.Errorf(f, args...) }
func (l quietLogger) Fatalf(f string, args ...any) { l.t.Fatalf(f, args...) }
