package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// TestBlockCorners: every posting lies under one of its block's corners,
// the bounds hold for every posting, and a block whose (tf, dl) frontier
// has at most two points is bounded by its exact maximum.
func TestBlockCorners(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for n := 0; n < 3000; n++ {
		np := 1 + rng.IntN(blockSize)
		tfs, dls := make([]uint32, np), make([]uint32, np)
		for j := range tfs {
			tfs[j] = 1 + uint32(rng.IntN(1+rng.IntN(6)))
			dls[j] = 1 + uint32(rng.IntN(1+rng.IntN(200)))
		}
		c := blockCorners(tfs, dls)
		sc := scorer{k1: 0.5 + 2*rng.Float64(), b: rng.Float64(), avgdl: 1 + 100*rng.Float64()}
		w := 0.1 + 5*rng.Float64()
		exact := 0.0
		for j := range tfs {
			if !(tfs[j] <= c.a.tf && dls[j] >= c.a.dl) && !(tfs[j] <= c.b.tf && dls[j] >= c.b.dl) {
				t.Fatalf("posting (%d, %d) under no corner of %+v", tfs[j], dls[j], c)
			}
			s := sc.score(w, tfs[j], dls[j])
			exact = max(exact, s)
			if bt := c.boundTF(&sc, w, tfs[j]); bt < s {
				t.Fatalf("boundTF(%d) = %v < score %v (corners %+v, dl %d)", tfs[j], bt, s, c, dls[j])
			}
		}
		ub := c.bound(&sc, w)
		if ub < exact {
			t.Fatalf("bound %v < exact block max %v (corners %+v)", ub, exact, c)
		}
		if frontierSize(tfs, dls) <= 2 && ub != exact {
			t.Fatalf("frontier of at most 2 points: bound %v, exact max %v (corners %+v)", ub, exact, c)
		}
	}
	// 16-bit fields: a tf past the field reads as unbounded, a length as
	// the largest the field holds (both still bounds).
	var b [2]byte
	putCorner16(b[:], 70000)
	if got := cornerTF16(b[:]); got != math.MaxUint32 {
		t.Fatalf("tf 70000 reads back as %d, want MaxUint32", got)
	}
	putCorner16(b[:], 65534)
	if got := cornerTF16(b[:]); got != 65534 {
		t.Fatalf("tf 65534 reads back as %d", got)
	}
	putCorner16(b[:], 1<<20)
	if got := binary.LittleEndian.Uint16(b[:]); got != cornerSat {
		t.Fatalf("length 2^20 stored as %d, want %d", got, cornerSat)
	}
}

// frontierSize counts the (tf, dl) pairs no other posting dominates.
func frontierSize(tfs, dls []uint32) int {
	seen := map[tfdl]bool{}
	for j := range tfs {
		p := tfdl{tfs[j], dls[j]}
		dominated := false
		for k := range tfs {
			q := tfdl{tfs[k], dls[k]}
			if q != p && q.tf >= p.tf && q.dl <= p.dl {
				dominated = true
				break
			}
		}
		if !dominated {
			seen[p] = true
		}
	}
	return len(seen)
}

// writeVersion makes flushes and merges write format version ver until
// the function it returns is called.
func writeVersion(ver uint32) func() {
	old := segWriteVersion
	segWriteVersion = ver
	return func() { segWriteVersion = old }
}

// toV1 rewrites a version 2 segment image as version 1 wrote it: block
// metas hold (maxTF u32, minDL u32) where version 2 holds the corners.
func toV1(tb testing.TB, img []byte) []byte {
	b := append([]byte(nil), img...)
	ft := len(b) - segFooterSize
	termsOff := binary.LittleEndian.Uint64(b[ft+8*5:])
	postsOff := binary.LittleEndian.Uint64(b[ft+8*6:])
	for e := termsOff; e < postsOff; e += termEntrySize {
		df := binary.LittleEndian.Uint32(b[e+8:])
		po := postsOff + binary.LittleEndian.Uint64(b[e+20:])
		for bi := range (int(df) + blockSize - 1) / blockSize {
			m := b[int(po)+bi*blockMetaSize:]
			maxTF, minDL := cornerTF16(m[8:]), binary.LittleEndian.Uint16(m[14:])
			if maxTF == math.MaxUint32 {
				tb.Fatal("toV1: a saturated tf has no version 1 form here")
			}
			binary.LittleEndian.PutUint32(m[8:], maxTF)
			binary.LittleEndian.PutUint32(m[12:], uint32(minDL))
		}
	}
	binary.LittleEndian.PutUint32(b[8:], segVersion1)
	binary.LittleEndian.PutUint32(b[len(b)-8:], codec.Checksum(b[:len(b)-8]))
	return b
}

// TestSegmentV1Bytes: toV1 of the sample segment gives, byte for byte, the
// image version 1 wrote (pinned by TestSegmentImageBytes before version 2),
// so the version 1 files the next test reads are real ones.
func TestSegmentV1Bytes(t *testing.T) {
	const want = "8ae12e23b670464bab8d957a39345c9eedca038cb9b3b42d656f8d9157cf08b2"
	img := toV1(t, sampleSegmentV(t, segVersion2))
	if sum := sha256.Sum256(img); hex.EncodeToString(sum[:]) != want {
		t.Fatalf("version 1 image sha256 %x, want %s", sum, want)
	}
}

// TestOldSegmentsReadable: an index whose segments are version 1, 2, 3
// or 4 files opens, answers every query as it did when it wrote them (the same
// hits, bit for bit), pruned equal to exhaustive, and merges them into
// the current version, whose answers are again the same.
func TestOldSegmentsReadable(t *testing.T) {
	for _, ver := range []uint32{segVersion1, segVersion2, segVersion3, segVersion4} {
		t.Run(fmt.Sprintf("version=%d", ver), func(t *testing.T) { testOldSegmentsReadable(t, ver) })
	}
}

func testOldSegmentsReadable(t *testing.T, ver uint32) {
	restore := writeVersion(max(ver, segVersion2)) // version 1 files are made from version 2's
	defer restore()
	rng := rand.New(rand.NewPCG(11, 5))
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: -1, DisableBackgroundMerge: true}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := genCorpus(rng, 3000, 1, 150)
	for i := 0; i < len(docs); i += 1000 {
		if err := x.Add(docs[i : i+1000]); err != nil {
			t.Fatal(err)
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	queries := make([]string, 200)
	want := make([][]Hit, len(queries))
	for i := range queries {
		queries[i] = randQuery(rng, 150)
		if want[i], err = x.Search(queries[i], nil, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	restore()
	names, err := fs.List("idx")
	if err != nil {
		t.Fatal(err)
	}
	nOld := 0
	for _, n := range names {
		if !strings.HasSuffix(n, ".lzi") {
			continue
		}
		nOld++
		if ver != segVersion1 {
			continue
		}
		p := fs.PathJoin("idx", n)
		f, err := fs.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, err := fs.Create(p, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(toV1(t, img)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if nOld != 3 {
		t.Fatalf("%d segment files, want 3", nOld)
	}
	x, err = Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, s := range x.segs {
		if s.v1 != (ver == segVersion1) || s.v3 != (ver >= segVersion3) || s.pg != (ver >= segVersion4) || s.v4 != (ver == segVersion4) {
			t.Fatalf("segment %d not read as version %d", s.num, ver)
		}
	}
	check := func(stage string) {
		for i, q := range queries {
			got, err := x.Search(q, nil, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("%s: query %q against the old files", stage, q), got, want[i], 0)
			ex, err := x.SearchExhaustive(q, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("%s: query %q pruned vs exhaustive", stage, q), got, ex, 0)
		}
	}
	check(fmt.Sprintf("version %d", ver))
	if _, err := x.mergeOnce(true); err != nil {
		t.Fatal(err)
	}
	for _, s := range x.segs {
		if !s.pg || s.v4 {
			t.Fatalf("merged segment %d is not version 5", s.num)
		}
	}
	check("merged")
}
