package segment

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"testing"
)

// TestSegmentValueBytes pins the stored form of a segment value, checksum
// included: the framing is computed here with hash/crc32 directly, so a
// change of the framing helpers that altered a byte on disk fails.
func TestSegmentValueBytes(t *testing.T) {
	c, err := newCompressor(CompressionNone, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	body := []byte("three records' body")
	got, err := c.appendSegment([]byte("prefix"), segmentVersionRows, 3, body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[:6]) != "prefix" {
		t.Fatalf("prefix overwritten: %q", got[:6])
	}
	v := got[6:]
	n := len(v)
	if sum := crc32.Checksum(v[:n-4], crc32.MakeTable(crc32.Castagnoli)); binary.LittleEndian.Uint32(v[n-4:]) != sum {
		t.Fatalf("stored crc %08x, want CRC32-C %08x of the value's other bytes (the caller's prefix excluded)",
			binary.LittleEndian.Uint32(v[n-4:]), sum)
	}
	const want = "010003137468726565207265636f7264732720626f64797118e3ea"
	if hex.EncodeToString(v) != want {
		t.Fatalf("segment value\n%x\nwant\n%s", v, want)
	}
}
