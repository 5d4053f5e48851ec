package segment

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCorruptSegment flips bytes inside one stored segment and checks that
// reads of it fail with a *CorruptionError naming that segment and an
// offset, that Verify reports it, and that every other segment and the
// tail stay readable.
func TestCorruptSegment(t *testing.T) {
	for _, algo := range []Compression{CompressionNone, CompressionZstd, CompressionS2} {
		for _, where := range []string{"header", "body", "checksum"} {
			t.Run(algo.String()+"/"+where, func(t *testing.T) {
				fs := vfs.NewMem()
				opts := Options{SegmentRecords: 10, Compression: algo, NoCompression: algo == CompressionNone, DisableBackgroundSeal: true}
				l := openMem(t, fs, opts)
				var batch [][]byte
				for i := 0; i < 45; i++ {
					batch = append(batch, payload(i))
				}
				if _, err := l.AppendBatch(ctx, batch); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 4; i++ { // segments 1, 11, 21, 31; ids 41-45 stay in the tail
					if _, err := l.sealOne(false); err != nil {
						t.Fatal(err)
					}
				}
				const victim = 11
				key := makeKey(prefixSegment, victim)
				v, closer, err := l.db.Get(key)
				if err != nil {
					t.Fatal(err)
				}
				bad := append([]byte(nil), v...)
				closer.Close()
				off := map[string]int{"header": 2, "body": len(bad) / 2, "checksum": len(bad) - 2}[where]
				bad[off] ^= 0x5a
				if err := l.db.Set(key, bad, pebble.Sync); err != nil {
					t.Fatal(err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = openMem(t, fs, opts) // also proves Open does not choke on it
				defer l.Close()

				for id := uint64(victim); id < victim+10; id++ {
					_, err := l.Get(id, nil)
					var ce *CorruptionError
					if !errors.As(err, &ce) {
						t.Fatalf("id %d: want *CorruptionError, got %v", id, err)
					}
					if ce.Segment != victim || ce.Offset < 0 || ce.Offset > int64(len(bad)) {
						t.Fatalf("id %d: corruption error names segment %d offset %d", id, ce.Segment, ce.Offset)
					}
					if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) {
						t.Fatalf("id %d: cause %v", id, err)
					}
				}
				for id := uint64(1); id <= 45; id++ {
					if id >= victim && id < victim+10 {
						continue
					}
					if got := mustGet(t, l, id); !bytes.Equal(got, payload(int(id-1))) {
						t.Fatalf("id %d: other segment damaged", id)
					}
				}
				err = l.Scan(1, 100, func(uint64, []byte) error { return nil })
				if !IsCorruption(err) {
					t.Fatalf("scan over the damaged segment: %v", err)
				}
				verr := l.Verify(ctx)
				var ce *CorruptionError
				if !errors.As(verr, &ce) || ce.Segment != victim {
					t.Fatalf("verify: %v", verr)
				}
				// Repair refuses a healthy segment, then replaces the damaged
				// one: its records read as deleted, the rest are untouched.
				if _, err := l.Repair(ctx, &CorruptionError{Segment: 1}); err == nil {
					t.Fatal("repair of a clean segment accepted")
				}
				n, err := l.Repair(ctx, ce)
				if err != nil || n != 10 {
					t.Fatalf("repair: %d %v", n, err)
				}
				if err := l.Verify(ctx); err != nil {
					t.Fatalf("verify after repair: %v", err)
				}
				if _, err := l.Get(victim, nil); !errors.Is(err, ErrDeleted) {
					t.Fatalf("repaired record: %v", err)
				}
				var live int
				if err := l.Scan(1, 100, func(uint64, []byte) error { live++; return nil }); err != nil || live != 35 {
					t.Fatalf("scan after repair: %d %v", live, err)
				}
			})
		}
	}
}
