package segment

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestDeleteDurableAcrossCrash: a deletion Delete acknowledged survives a
// crash that drops every unsynced write, for tail and sealed records alike.
// It fails if Delete's batch is committed without sync (pebble.NoSync): the
// crash image then still holds the records as live.
func TestDeleteDurableAcrossCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := Options{SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: -1}
	l := openMem(t, fs, opts)
	defer l.Close()
	var batch [][]byte
	for i := 0; i < 25; i++ {
		batch = append(batch, payload(i))
	}
	if _, err := l.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // ids 1-20 sealed, 21-25 in the tail
		if _, err := l.sealOne(false); err != nil {
			t.Fatal(err)
		}
	}
	// Sealing commits without sync; make the seals durable first so the
	// crash below can only drop the deletion.
	if _, err := l.Append(ctx, []byte("sync point")); err != nil {
		t.Fatal(err)
	}
	gone := []uint64{3, 14, 22}
	if err := l.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{}) // synced data only

	l2, err := Open("db", Options{FS: crashed, SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: -1})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer l2.Close()
	for _, id := range gone {
		if _, err := l2.Get(id, nil); !errors.Is(err, ErrDeleted) {
			t.Fatalf("id %d deleted and acknowledged before the crash: after it %v", id, err)
		}
	}
	for _, id := range []uint64{1, 4, 13, 15, 21, 23, 25} {
		if string(mustGet(t, l2, id)) != string(payload(int(id-1))) {
			t.Fatalf("id %d: wrong payload after crash", id)
		}
	}
}
