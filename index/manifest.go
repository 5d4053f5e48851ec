package index

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// Manifest constants. Never change.
const (
	manifestName  = "MANIFEST"
	manifestTemp  = "MANIFEST.tmp"
	manifestMagic = "LZMMAN01"
	manifestVer   = 1
	// manifestVer2 adds the amended documents (amend.go) after the
	// tombstones; a manifest with none is written as version 1, which
	// older readers take.
	manifestVer2 = 2
)

type manifestSeg struct {
	num    uint64
	lo, hi uint32
}

type manifest struct {
	nextNum uint64
	segs    []manifestSeg
	tomb    *roaring.Bitmap
	amended *roaring.Bitmap // nil or empty: none (version 1)
	sig     string          // analyzer signature the segments were built with
}

func appendManifest(dst []byte, m *manifest) ([]byte, error) {
	start := len(dst)
	dst = append(dst, manifestMagic...)
	v2 := m.amended != nil && !m.amended.IsEmpty()
	if v2 {
		dst = binary.LittleEndian.AppendUint32(dst, manifestVer2)
	} else {
		dst = binary.LittleEndian.AppendUint32(dst, manifestVer)
	}
	dst = binary.LittleEndian.AppendUint64(dst, m.nextNum)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m.segs)))
	for _, s := range m.segs {
		dst = binary.LittleEndian.AppendUint64(dst, s.num)
		dst = binary.LittleEndian.AppendUint32(dst, s.lo)
		dst = binary.LittleEndian.AppendUint32(dst, s.hi)
	}
	tb, err := m.tomb.ToBytes()
	if err != nil {
		return nil, err
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(tb)))
	dst = append(dst, tb...)
	if v2 {
		ab, err := m.amended.ToBytes()
		if err != nil {
			return nil, err
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(ab)))
		dst = append(dst, ab...)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m.sig)))
	dst = append(dst, m.sig...)
	return codec.AppendChecksum(dst, dst[start:]), nil
}

func decodeManifest(b []byte) (*manifest, error) {
	bad := func(off int, msg string) (*manifest, error) {
		return nil, &CorruptionError{File: manifestName, Offset: int64(off), Err: errors.New(msg)}
	}
	if len(b) < 8+4+8+4+4+4 || string(b[:8]) != manifestMagic {
		return bad(0, "bad magic or size")
	}
	if _, err := codec.VerifyChecksum(b); err != nil {
		return nil, &CorruptionError{File: manifestName, Offset: int64(len(b) - codec.ChecksumSize), Err: err}
	}
	ver := binary.LittleEndian.Uint32(b[8:])
	if ver != manifestVer && ver != manifestVer2 {
		return bad(8, "unknown version")
	}
	m := &manifest{nextNum: binary.LittleEndian.Uint64(b[12:]), amended: roaring.New()}
	n := int(binary.LittleEndian.Uint32(b[20:]))
	pos := 24
	if n < 0 || n > (len(b)-pos)/16 {
		return bad(20, "segment count")
	}
	var prevHi uint32
	for i := 0; i < n; i++ {
		s := manifestSeg{num: binary.LittleEndian.Uint64(b[pos:]), lo: binary.LittleEndian.Uint32(b[pos+8:]),
			hi: binary.LittleEndian.Uint32(b[pos+12:])}
		if s.hi < s.lo || (i > 0 && s.lo <= prevHi) {
			return bad(pos, "segment ranges out of order")
		}
		prevHi = s.hi
		m.segs = append(m.segs, s)
		pos += 16
	}
	if pos+4 > len(b)-4 {
		return bad(pos, "truncated")
	}
	tl := int(binary.LittleEndian.Uint32(b[pos:]))
	pos += 4
	if tl > len(b)-4-pos {
		return bad(pos, "tombstones truncated")
	}
	var err error
	if m.tomb, err = readBitmap(b[pos : pos+tl]); err != nil {
		return nil, &CorruptionError{File: manifestName, Offset: int64(pos), Err: err}
	}
	pos += tl
	if ver == manifestVer2 {
		if pos+4 > len(b)-4 {
			return bad(pos, "amended truncated")
		}
		al := int(binary.LittleEndian.Uint32(b[pos:]))
		pos += 4
		if al > len(b)-4-pos {
			return bad(pos, "amended truncated")
		}
		if m.amended, err = readBitmap(b[pos : pos+al]); err != nil {
			return nil, &CorruptionError{File: manifestName, Offset: int64(pos), Err: err}
		}
		pos += al
	}
	if pos+4 > len(b)-4 {
		return bad(pos, "signature truncated")
	}
	sl := int(binary.LittleEndian.Uint32(b[pos:]))
	pos += 4
	if sl != len(b)-4-pos {
		return bad(pos, "signature length")
	}
	m.sig = string(b[pos : pos+sl])
	return m, nil
}

// writeFileSync writes a whole file and syncs it.
func writeFileSync(fs vfs.FS, name string, data []byte) error {
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	// vfs.File.Write may modify its argument (pebble mangles it in
	// invariant builds): write copies, in chunks, so data stays intact.
	chunk := make([]byte, min(len(data), 1<<20))
	for off := 0; off < len(data); off += len(chunk) {
		n := copy(chunk, data[off:])
		if _, err := f.Write(chunk[:n]); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// readFile reads a whole file.
func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
		return nil, err
	}
	return buf, nil
}

// writeManifest replaces the manifest atomically: write a temp file, sync
// it, rename it over the manifest, sync the directory.
func writeManifest(fs vfs.FS, dir string, m *manifest) error {
	data, err := appendManifest(nil, m)
	if err != nil {
		return err
	}
	tmp := fs.PathJoin(dir, manifestTemp)
	if err := writeFileSync(fs, tmp, data); err != nil {
		return err
	}
	if err := fs.Rename(tmp, fs.PathJoin(dir, manifestName)); err != nil {
		return err
	}
	return syncDir(fs, dir)
}
