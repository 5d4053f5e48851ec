package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// The store's FORMAT marker names the version of everything under the
// store directory that carries no version of its own: the directory
// layout, the log's keyspace (segment values and codec records carry
// version bytes, the tail and summary keys do not) and the embedding
// cache's layout (its keys start "v1/"). The index has its own versioned
// MANIFEST and segment headers.
//
//	dir/FORMAT (16 bytes, replaced atomically: temp + fsync + rename + fsync dir)
//	+----------+---------+---------+
//	| LZMSTORE | version | crc32c  |
//	| 8 bytes  | u32 LE  | u32 LE  |
//	+----------+---------+---------+
//	crc32c (Castagnoli) covers the 12 bytes before it.
//
// A store without the file was written before the marker existed: it is
// format 1. Format 2 adds the log's name table (its 'n' keys, read by
// segment version 4), which a format-1 engine would take for damage.
// Format 3 adds index segments of version 3 (packed term frequencies),
// which a format-2 engine would take for damage, and the lists of the
// records each zstd dictionary of the log holds ('z' keys), without
// which a format-2 engine's Compact would keep a forgotten record's
// pieces in the dictionary. Format 4 adds index segments of version 4
// (packed gaps and each block's document lengths), which a format-3
// engine would take for damage. Format 5 adds index segments of version
// 5 (version 4's blocks without the lengths) and the log's segments of
// version 5 (text frames coded as words of the log's vocabulary, its 'w'
// keys): a format-4 engine would take either for damage, and its Compact
// would not purge the vocabulary of a forgotten record's words. Format 6
// adds the log's segments of version 6 (version 5 with bit-packed times
// and text lengths in the head), which a format-5 engine would take for
// damage.
// Open marks a store of an older format with this engine's before the
// log opens, since the log may write version-6 segments from then on;
// a store of a newer format than this engine knows is refused
// (ErrFormat) before anything is opened. Wire constants: never change.
const (
	formatName    = "FORMAT"
	formatTemp    = "FORMAT.tmp"
	formatMagic   = "LZMSTORE"
	formatSize    = 8 + 4 + codec.ChecksumSize
	formatVersion = 6 // the format this engine writes and the newest it reads
)

// appendFormat appends the FORMAT file of version v.
func appendFormat(dst []byte, v uint32) []byte {
	start := len(dst)
	dst = append(dst, formatMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, v)
	return codec.AppendChecksum(dst, dst[start:])
}

// decodeFormat reads a FORMAT file.
func decodeFormat(b []byte) (uint32, error) {
	if len(b) != formatSize || string(b[:8]) != formatMagic {
		return 0, fmt.Errorf("%w: %s: bad magic or size (%d bytes)", ErrFormat, formatName, len(b))
	}
	if _, err := codec.VerifyChecksum(b); err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrFormat, formatName, err)
	}
	v := binary.LittleEndian.Uint32(b[8:])
	if v < 1 {
		return 0, fmt.Errorf("%w: %s: version %d", ErrFormat, formatName, v)
	}
	return v, nil
}

// openFormat creates dir if needed, reads its FORMAT marker (absent: format
// 1), refuses a format newer than this engine's and writes this engine's
// marker when it is missing or older. It returns the store's format.
func openFormat(fs vfs.FS, dir string) (uint32, error) {
	if _, err := fs.Stat(dir); oserror.IsNotExist(err) {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return 0, fmt.Errorf("lazymem: engine: create %s: %w", dir, err)
		}
		// The new directory entry must survive a crash with the files in it.
		if err := syncDir(fs, fs.PathDir(dir)); err != nil {
			return 0, fmt.Errorf("lazymem: engine: create %s: %w", dir, err)
		}
	} else if err != nil {
		return 0, fmt.Errorf("lazymem: engine: %s: %w", dir, err)
	}
	name := fs.PathJoin(dir, formatName)
	b, err := readFile(fs, name)
	switch {
	case err == nil:
		v, err := decodeFormat(b)
		if err != nil {
			return 0, err
		}
		if v > formatVersion {
			return 0, fmt.Errorf("%w: %s says store format %d; this engine reads formats 1 to %d", ErrFormat, name, v, formatVersion)
		}
		if v == formatVersion {
			return v, nil
		}
	case !oserror.IsNotExist(err):
		return 0, fmt.Errorf("lazymem: engine: read %s: %w", name, err)
	}
	// No marker (a new store, or one written before the marker existed)
	// or an older one: every older format is read as it is, and the
	// store is this engine's format from now on.
	tmp := fs.PathJoin(dir, formatTemp)
	if err := writeFileSync(fs, tmp, appendFormat(nil, formatVersion)); err != nil {
		return 0, fmt.Errorf("lazymem: engine: write %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, name); err != nil {
		return 0, fmt.Errorf("lazymem: engine: write %s: %w", name, err)
	}
	if err := syncDir(fs, dir); err != nil {
		return 0, fmt.Errorf("lazymem: engine: write %s: %w", name, err)
	}
	return formatVersion, nil
}

// readFile reads a whole file of fs.
func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeFileSync creates name with data and syncs it.
func writeFileSync(fs vfs.FS, name string, data []byte) error {
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	// vfs.File.Write may modify its argument (Pebble's invariant builds
	// mangle it): write a copy.
	if _, err := f.Write(append([]byte(nil), data...)); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return errors.Join(err, d.Close())
	}
	return d.Close()
}
