package segment

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestTailMirrorSealsLikePebble runs the same appends, tail deletions, seals
// and reopens on two logs, one sealing from the tail mirror where it can and
// one always reading Pebble's tail keys, and requires byte-identical stored
// segments. Small segments make the mirror restart (overflow) and reopen
// makes it start late, so both ways of sealing alternate in the first log.
func TestTailMirrorSealsLikePebble(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	opts := Options{SegmentRecords: 6, SegmentBytes: 200, DisableBackgroundSeal: true}
	fsA, fsB := vfs.NewMem(), vfs.NewMem()
	a, b := openMem(t, fsA, opts), openMem(t, fsB, opts)
	noMirror := func(l *Log) { l.tail.max = -1 } // every add overflows
	noMirror(b)
	mirrorSeals := 0
	for step := range 600 {
		switch r := rng.IntN(100); {
		case r < 55:
			var batch [][]byte
			for range 1 + rng.IntN(6) {
				p := make([]byte, rng.IntN(60))
				for j := range p {
					p[j] = byte('a' + rng.IntN(26))
				}
				batch = append(batch, p)
			}
			fa, errA := a.AppendBatch(ctx, batch)
			fb, errB := b.AppendBatch(ctx, batch)
			if errA != nil || errB != nil || fa != fb {
				t.Fatalf("step %d: append %d %v / %d %v", step, fa, errA, fb, errB)
			}
		case r < 70 && a.Next() > 1:
			id := 1 + uint64(rng.IntN(int(a.Next()-1)))
			if errA, errB := a.Delete(ctx, []uint64{id}), b.Delete(ctx, []uint64{id}); errA != nil || errB != nil {
				t.Fatalf("step %d: delete %v / %v", step, errA, errB)
			}
		case r < 95:
			force := rng.IntN(3) == 0
			na, errA := a.sealOne(force)
			nb, errB := b.sealOne(force)
			if errA != nil || errB != nil || na != nb {
				t.Fatalf("step %d: seal %d %v / %d %v", step, na, errA, nb, errB)
			}
		default:
			mirrorSeals += a.mirrorSeals
			for _, l := range []*Log{a, b} {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			a, b = openMem(t, fsA, opts), openMem(t, fsB, opts)
			noMirror(b)
		}
	}
	if err := a.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	if mirrorSeals += a.mirrorSeals; mirrorSeals == 0 || b.mirrorSeals != 0 {
		t.Fatalf("seals from the mirror: %d and %d, want some and none", mirrorSeals, b.mirrorSeals)
	}
	segs := func(l *Log) map[string][]byte {
		it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixSegment}, UpperBound: []byte{prefixSegment + 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		m := map[string][]byte{}
		for ok := it.First(); ok; ok = it.Next() {
			m[string(it.Key())] = bytes.Clone(it.Value())
		}
		return m
	}
	sa, sb := segs(a), segs(b)
	if len(sa) == 0 || len(sa) != len(sb) {
		t.Fatalf("%d segments vs %d", len(sa), len(sb))
	}
	for k, v := range sa {
		if !bytes.Equal(v, sb[k]) {
			t.Fatalf("segment %x differs", k)
		}
	}
	for _, l := range []*Log{a, b} {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
