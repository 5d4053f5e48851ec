package index

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
)

func sampleSegment(tb testing.TB) []byte { return sampleSegmentV(tb, segVersion) }

// sampleSegmentV is sampleSegment written as format version ver.
func sampleSegmentV(tb testing.TB, ver uint32) []byte {
	defer writeVersion(ver)()
	rng := rand.New(rand.NewPCG(1, 1))
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer x.Close()
	if err := x.Add(genCorpus(rng, 300, 5, 40)); err != nil {
		tb.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		tb.Fatal(err)
	}
	return x.segs[0].buf
}

// FuzzOpenSegment: the segment decoder must reject or accept any input
// without panicking, and an accepted segment must be safe to read fully.
func FuzzOpenSegment(f *testing.F) {
	img := sampleSegment(f)
	f.Add(img)
	f.Add(img[:len(img)/2])
	v2 := sampleSegmentV(f, segVersion2)
	f.Add(v2) // versions 1 and 2 are still read
	f.Add(toV1(f, v2))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Fix the checksum up so the fuzzer reaches the structural checks
		// (a random mutation would almost always stop at the CRC).
		b = append([]byte(nil), b...) // never modify the fuzzer's input
		if len(b) >= segHeaderSize+segFooterSize {
			binary.LittleEndian.PutUint32(b[len(b)-8:], codec.Checksum(b[:len(b)-8]))
		}
		s, err := openSegment("fuzz", 1, b)
		if err != nil {
			return
		}
		var ti termInfo
		var p postingsIter
		for i := 0; i < s.nTerms; i++ {
			s.entry(i, &ti)
			_ = ti.corners0()
			_ = s.frontier(string(s.termAt(i)), &ti, &p, nil)
			p.reset(&ti)
			for p.Next() {
				_ = p.TF()
				_ = s.docLen(p.At())
			}
			p.reset(&ti)
			p.Seek(s.lo + (s.hi-s.lo)/2)
		}
		it := s.present.Iterator()
		for it.HasNext() {
			id := it.Next()
			_ = s.docTime(id)
		}
		_ = s.forEachField(func(k, v string, bm *roaring.Bitmap) error { return nil })
	})
}

// FuzzManifest: the manifest decoder never panics and round-trips what it
// accepts.
func FuzzManifest(f *testing.F) {
	tb := roaring.BitmapOf(3, 9, 100000)
	good, err := appendManifest(nil, &manifest{nextNum: 7, segs: []manifestSeg{{1, 0, 99}, {4, 100, 250}}, tomb: tb})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:20])
	v2, err := appendManifest(nil, &manifest{nextNum: 7, segs: []manifestSeg{{1, 0, 99}}, tomb: tb, amended: roaring.BitmapOf(4, 50)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v2)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		again, err := appendManifest(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := decodeManifest(again)
		if err != nil || m2.nextNum != m.nextNum || len(m2.segs) != len(m.segs) || !m2.tomb.Equals(m.tomb) || !m2.amended.Equals(m.amended) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestSegmentRoundTrip(t *testing.T) {
	img := sampleSegment(t)
	s, err := openSegment("x", 1, img)
	if err != nil {
		t.Fatal(err)
	}
	if s.nDocs != 300 || s.lo != 5 {
		t.Fatalf("nDocs %d lo %d", s.nDocs, s.lo)
	}
	// any single corrupted byte is caught by the checksum
	for _, off := range []int{0, 10, len(img) / 3, len(img) / 2, len(img) - 9} {
		bad := append([]byte(nil), img...)
		bad[off] ^= 0x40
		if _, err := openSegment("x", 1, bad); err == nil {
			t.Fatalf("corruption at %d not detected", off)
		}
	}
}
