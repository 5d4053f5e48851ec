package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// A Forget changes three structures (log, index, embedding cache) that
// cannot share one atomic write. It first writes what it will do to
// dir/FORGET, durably (temp file, fsync, rename, fsync of the directory),
// then applies it, then removes the file. Open finds a FORGET left by a
// crash and applies it again (every step is idempotent), so a crash leaves
// each forgotten record either wholly forgotten or wholly present.
//
//	+----------+-------+--------+------------------+-------+--------------+---------+
//	| LZMFGT01 | flags | idsLen | ids (roaring32,  | nKeys | nKeys x 16 B | crc32c  |
//	| 8 bytes  | u32   | u32    | portable format) | u32   | cache keys   | u32     |
//	+----------+-------+--------+------------------+-------+--------------+---------+
//	integers little-endian; flags bit 0: rebuild the index; crc32c
//	(Castagnoli) covers every byte before it. Wire constants: never change.
const (
	intentFile    = "FORGET"
	intentMagic   = "LZMFGT01"
	intentReindex = 1
)

// intent is one Forget: the records, the cache keys to drop and whether
// the index must be rebuilt (successors inherited forgotten words).
type intent struct {
	ids     *roaring.Bitmap
	keys    []string // cacheKey values, cacheHashLen bytes each
	reindex bool
	// sessions holds the sessions of the records and their lowest id
	// (not stored: used by Forget to find successors).
	sessions []sessionLow
}

func (in *intent) encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(intentMagic)
	var flags uint32
	if in.reindex {
		flags |= intentReindex
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, flags))
	in.ids.RunOptimize()
	ids, err := in.ids.ToBytes()
	if err != nil {
		return nil, err
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(ids))))
	b.Write(ids)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(in.keys))))
	for _, k := range in.keys {
		b.WriteString(k)
	}
	out := b.Bytes()
	return binary.LittleEndian.AppendUint32(out, codec.Checksum(out)), nil
}

func decodeIntent(b []byte) (*intent, error) {
	bad := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrCorrupt, intentFile, why) }
	if len(b) < len(intentMagic)+16 || string(b[:len(intentMagic)]) != intentMagic {
		return nil, bad("bad magic or short")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if codec.Checksum(body) != sum {
		return nil, bad("checksum mismatch")
	}
	p := body[len(intentMagic):]
	flags := binary.LittleEndian.Uint32(p)
	n := binary.LittleEndian.Uint32(p[4:])
	p = p[8:]
	if uint64(n)+4 > uint64(len(p)) {
		return nil, bad("ids overrun")
	}
	in := &intent{ids: roaring.New(), reindex: flags&intentReindex != 0}
	if _, err := in.ids.FromBuffer(bytes.Clone(p[:n])); err != nil {
		return nil, bad(err.Error())
	}
	p = p[n:]
	nk := binary.LittleEndian.Uint32(p)
	p = p[4:]
	if uint64(nk)*cacheHashLen != uint64(len(p)) {
		return nil, bad("keys length")
	}
	for i := 0; i < int(nk); i++ {
		in.keys = append(in.keys, string(p[i*cacheHashLen:(i+1)*cacheHashLen]))
	}
	return in, nil
}

func writeIntent(fs vfs.FS, dir string, in *intent) error {
	b, err := in.encode()
	if err != nil {
		return fmt.Errorf("lazymem: engine: forget: encode intent: %w", err)
	}
	name := fs.PathJoin(dir, intentFile)
	tmp := name + ".tmp"
	if err := writeFileSync(fs, tmp, b); err != nil {
		return fmt.Errorf("lazymem: engine: forget: write intent: %w", err)
	}
	if err := fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("lazymem: engine: forget: write intent: %w", err)
	}
	return syncDir(fs, dir)
}

func removeIntent(fs vfs.FS, dir string) error {
	if err := fs.Remove(fs.PathJoin(dir, intentFile)); err != nil && !isNotExist(err) {
		return fmt.Errorf("lazymem: engine: forget: remove intent: %w", err)
	}
	return syncDir(fs, dir)
}

func isNotExist(err error) bool { return oserror.IsNotExist(err) }

// finishIntent applies a Forget a crash interrupted (Open calls it once
// the log, the index and the cache are open). A half-written temp file is
// a Forget that had not started: it is removed.
func (db *DB) finishIntent() error {
	fs := db.opts.FS
	name := fs.PathJoin(db.dir, intentFile)
	_ = fs.Remove(name + ".tmp")
	b, err := readFile(fs, name)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("lazymem: engine: read %s: %w", intentFile, err)
	}
	in, err := decodeIntent(b)
	if err != nil {
		return err
	}
	if err := db.applyForget(context.Background(), in, true); err != nil {
		return err
	}
	if in.reindex {
		if _, err := db.rebuildIndex(); err != nil {
			return err
		}
	}
	return removeIntent(fs, db.dir)
}
