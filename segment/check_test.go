package segment

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCheckQuarantine damages one sealed segment and one tail record:
// Check reads every other record and reports both with their id ranges;
// Quarantine writes their stored bytes aside and leaves deleted slots, after
// which Check finds nothing.
func TestCheckQuarantine(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, Options{SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: -1})
	defer l.Close()
	var batch [][]byte
	for i := 0; i < 35; i++ {
		batch = append(batch, payload(i))
	}
	if _, err := l.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // segments 1, 11, 21; ids 31-35 in the tail
		if _, err := l.sealOne(false); err != nil {
			t.Fatal(err)
		}
	}
	damage := func(key []byte, off int) {
		v, closer, err := l.db.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		bad := append([]byte(nil), v...)
		closer.Close()
		bad[off] ^= 0xff
		if err := l.db.Set(key, bad, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	damage(makeKey(prefixSegment, 11), 5)
	damage(makeKey(prefixTail, 33), 0) // the state byte
	l.cache.reset()

	type span struct{ first, end uint64 }
	var bad []span
	var ces []*CorruptionError
	var live []uint64
	var progressed uint64
	err := l.Check(ctx, func(id uint64, p []byte) error {
		if !bytes.Equal(p, payload(int(id-1))) {
			t.Fatalf("id %d: wrong payload", id)
		}
		live = append(live, id)
		return nil
	}, func(ce *CorruptionError, first, end uint64) {
		bad = append(bad, span{first, end})
		ces = append(ces, ce)
	}, func(done, total uint64) { progressed = done })
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || bad[0] != (span{11, 21}) || bad[1] != (span{33, 34}) {
		t.Fatalf("damage reported: %v", bad)
	}
	if len(live) != 35-11 || progressed != 35 {
		t.Fatalf("%d live records read, progress %d", len(live), progressed)
	}
	for _, ce := range ces {
		file, n, err := l.Quarantine(ctx, ce, "quarantine")
		if err != nil {
			t.Fatalf("quarantine %v: %v", ce, err)
		}
		if file == "" || n == 0 {
			t.Fatalf("quarantine %v: file %q, %d records", ce, file, n)
		}
		if _, err := fs.Stat(file); err != nil {
			t.Fatal(err)
		}
	}
	bad = bad[:0]
	live = live[:0]
	if err := l.Check(ctx, func(id uint64, _ []byte) error { live = append(live, id); return nil },
		func(ce *CorruptionError, first, end uint64) { bad = append(bad, span{first, end}) }, nil); err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 || len(live) != 35-11 {
		t.Fatalf("after quarantine: damage %v, %d live", bad, len(live))
	}
	if _, err := l.Get(33, nil); !errors.Is(err, ErrDeleted) {
		t.Fatalf("quarantined tail record: %v", err)
	}
}
