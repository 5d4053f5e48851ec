package storetest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Image is one file of a store: its raw bytes and whatever the zstd frames
// inside it decompress to.
type Image struct {
	Path string
	Raw  []byte
	Zstd []byte
}

// Images reads every file under dir and decompresses every zstd frame
// found in it.
func Images(t testing.TB, dir string) []Image {
	t.Helper()
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
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
		im := Image{Path: p, Raw: raw}
		for off := 0; ; {
			i := bytes.Index(raw[off:], magic)
			if i < 0 {
				break
			}
			off += i
			if r, err := zstd.NewReader(bytes.NewReader(raw[off:])); err == nil {
				b, _ := io.ReadAll(r) // a partial frame still yields its blocks
				im.Zstd = append(im.Zstd, b...)
				r.Close()
			}
			off += len(magic)
		}
		out = append(out, im)
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
	}
	return where
}
