package storetest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/internal/tablescan"
)

// Image is one file of a store: its raw bytes, whatever the zstd frames
// inside it decompress to, and for an sstable its keys and values as
// Pebble's own reader returns them (Table), so whatever compression
// Pebble chose for each block.
type Image struct {
	Path  string
	Raw   []byte
	Zstd  []byte
	Table []byte
}

// Images reads every file under dir and decompresses every zstd frame
// found in it, and the frames nested in those (unzstd).
func Images(t testing.TB, dir string) []Image {
	t.Helper()
	var out []Image
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			// Removed while the walk ran (an open store's background
			// compaction deleting an obsolete file): it holds nothing now.
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		im := Image{Path: p, Raw: raw, Zstd: unzstd(raw, maxNesting)}
		if strings.HasSuffix(p, ".sst") {
			im.Table = tableContents(p)
			// The values' own zstd frames (a log segment's), wherever
			// Pebble's block compression had hidden them.
			im.Zstd = append(im.Zstd, unzstd(im.Table, maxNesting)...)
		}
		out = append(out, im)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// maxNesting bounds how deep unzstd looks for frames inside frames.
const maxNesting = 3

// unzstd decompresses every zstd frame found in b and, up to depth more
// levels, the frames found inside what they decompress to: a log segment
// is a zstd frame of its own inside a Pebble block that Pebble may have
// compressed again (whether it does depends on how well the block
// compresses), and a scan that stopped at the outer frame would miss
// whatever the inner one holds.
func unzstd(b []byte, depth int) []byte {
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	var out []byte
	for off := 0; ; {
		i := bytes.Index(b[off:], magic)
		if i < 0 {
			break
		}
		off += i
		if r, err := zstd.NewReader(bytes.NewReader(b[off:]), zstd.WithDecoderConcurrency(1)); err == nil {
			d, _ := io.ReadAll(r) // a partial frame still yields its blocks
			r.Close()
			out = append(out, d...)
			if depth > 1 {
				out = append(out, unzstd(d, depth-1)...)
			}
		}
		off += len(magic)
	}
	return out
}

// Find reports the files (raw or decompressed) holding needle.
func Find(ims []Image, needle []byte) []string {
	var where []string
	for _, im := range ims {
		if bytes.Contains(im.Raw, needle) {
			where = append(where, im.Path)
		}
		if bytes.Contains(im.Zstd, needle) {
			where = append(where, im.Path+" (zstd)")
		}
		if bytes.Contains(im.Table, needle) {
			where = append(where, im.Path+" (table)")
		}
	}
	return where
}

// tableContents returns every point key and value of the sstable at p,
// one after the other, read through Pebble's own sstable reader: every
// block decompressed, whatever its algorithm. A file the reader refuses
// (removed meanwhile, or damaged on purpose by a test) yields what it
// read before the damage, perhaps nothing: its raw bytes are still
// scanned. TestImagesSeeThroughPebbleBlocks and the segment package's
// TestSegmentValuesVisibleToScans fail if the reader reads nothing of
// the tables Pebble writes.
func tableContents(p string) []byte { return tablescan.Contents(vfs.Default, p) }
