//go:build diag

// The cold read of a real log against its whole-segment read:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestColdReadDiag -v

package segment

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
)

// TestColdReadDiag reads records of the log in LAZYMEM_LOG_DIR (every
// segment of at most 2000 spread over the log) through GetMany with a
// cache too small to keep a segment (each read a cold candidate's: the
// head, and each text frame from its record's token on) alone and in
// random subsets of their segment, and compares every payload with Get's
// (the whole segment decoded).
func TestColdReadDiag(t *testing.T) {
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_LOG_DIR to a log directory")
	}
	cold, err := Open(dir, Options{CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	segs := sealedSegments(cold)
	r := rand.New(rand.NewPCG(1, 2))
	step := max(1, (len(segs)+1999)/2000)
	want := map[uint64][]byte{}
	var picked [][]uint64
	for i := 0; i < len(segs); i += step {
		m := segs[i]
		var ids []uint64
		for id := m.first; id < m.first+uint64(m.count); id++ {
			if r.IntN(3) == 0 {
				ids = append(ids, id)
			}
		}
		picked = append(picked, ids)
	}
	read, words := 0, 0 // words: the log's vocabulary (none: no version-5 segment)
	for _, ids := range picked {
		for _, id := range ids {
			if err := cold.GetMany([]uint64{id}, func(id uint64, p []byte) error {
				want[id] = bytes.Clone(p)
				return nil
			}); err != nil {
				t.Fatalf("id %d alone: %v", id, err)
			}
		}
		got := 0
		if err := cold.GetMany(ids, func(id uint64, p []byte) error {
			got++
			if !bytes.Equal(p, want[id]) {
				t.Fatalf("id %d: in a run %x, alone %x", id, p, want[id])
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		read += got
	}
	words = cold.words.snap.Load().size()
	if err := cold.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	for id, p := range want {
		q, err := whole.Get(id, nil)
		if err != nil {
			t.Fatalf("id %d: Get: %v", id, err)
		}
		if !bytes.Equal(p, q) {
			t.Fatalf("id %d: GetMany %x, Get %x", id, p, q)
		}
	}
	t.Logf("%d records of %d of the log's %d segments (vocabulary of %d words) read cold alone and in runs, equal to Get's", len(want), len(picked), len(segs), words)
	if read != len(want) {
		t.Fatalf("%d records in runs, %d alone", read, len(want))
	}
}
