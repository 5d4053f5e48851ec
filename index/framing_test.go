package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// The bytes of a segment image and of a MANIFEST are a contract: these
// tests pin them (checksummed framing included) so that a refactoring of
// the encoders cannot change what is on disk. The checksum is recomputed
// here with hash/crc32 directly, independently of the package's helpers.

func castagnoliSum(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

func TestSegmentImageBytes(t *testing.T) {
	t.Run("version=5", func(t *testing.T) {
		checkSegmentImage(t, sampleSegment(t), "9c75c2dbd04f979f3c43672bc2ac0d9dd2ea57e08ee33377fda42324eb449503")
	})
	t.Run("version=4", func(t *testing.T) {
		checkSegmentImage(t, sampleSegmentV(t, segVersion4), "b9b378e4624c4af1b6fd270108ae1575ad2886171d02ba95ac4e2da99c2c88d0")
	})
	t.Run("version=3", func(t *testing.T) {
		checkSegmentImage(t, sampleSegmentV(t, segVersion3), "575ebeaadf7e5d3d70238555a7770fc59f84086817ff8bc83eeeeade9e62edc4")
	})
	t.Run("version=2", func(t *testing.T) {
		checkSegmentImage(t, sampleSegmentV(t, segVersion2), "1e73fcc24ab916b5922bd5e9a2fd2067906fba780e081166973ce28fc00e12c2")
	})
}

// checkSegmentImage checks img's framing and pins its sha256.
func checkSegmentImage(t *testing.T, img []byte, want string) {
	n := len(img)
	if got := binary.LittleEndian.Uint32(img[n-8:]); got != castagnoliSum(img[:n-8]) {
		t.Fatalf("segment footer crc %08x, want CRC32-C of the %d bytes before it", got, n-8)
	}
	if got := binary.LittleEndian.Uint32(img[n-4:]); got != segFooterMagic {
		t.Fatalf("footer magic %08x", got)
	}
	// TestSegmentV1Bytes pins version 1's.
	if sum := sha256.Sum256(img); hex.EncodeToString(sum[:]) != want {
		t.Fatalf("segment image sha256 %x (%d bytes), want %s", sum, n, want)
	}
}

func TestManifestBytes(t *testing.T) {
	tomb := roaring.New()
	tomb.AddMany([]uint32{3, 70000})
	m := &manifest{nextNum: 9, tomb: tomb, sig: "simple/1",
		segs: []manifestSeg{{num: 4, lo: 0, hi: 99}, {num: 8, lo: 100, hi: 70001}}}
	b, err := appendManifest(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b)
	if got := binary.LittleEndian.Uint32(b[n-4:]); got != castagnoliSum(b[:n-4]) {
		t.Fatalf("manifest crc %08x, want CRC32-C of the %d bytes before it", got, n-4)
	}
	const want = "4c5a4d4d414e30310100000009000000000000000200000004000000000000000000000063000000080000000000000064000000711101001c0000003a300000020000000000000001000000180000001a000000030070110800000073696d706c652f31d5eec264"
	if hex.EncodeToString(b) != want {
		t.Fatalf("manifest bytes\n%x\nwant\n%s", b, want)
	}
	// Append style: a caller's prefix is neither changed nor checksummed.
	if pb, err := appendManifest([]byte("prefix"), m); err != nil || string(pb) != "prefix"+string(b) {
		t.Fatalf("appendManifest after a prefix = %x, %v; want prefix then the same bytes", pb, err)
	}
	got, err := decodeManifest(b)
	if err != nil || got.nextNum != 9 || len(got.segs) != 2 || got.sig != m.sig || !got.tomb.Equals(tomb) {
		t.Fatalf("decodeManifest = %+v, %v", got, err)
	}
}
