package segment

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestZstdLevels: Options.ZstdLevel's four values are the encoder's four
// levels, each compressing differently and round-tripping. (They went
// through the C library's 1-22 scale before: 3 and 4 were both the
// default level, 1 and 2 both the fastest, so their outputs were equal.)
func TestZstdLevels(t *testing.T) {
	want := []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression}
	var text []byte
	for i := 0; len(text) < 64<<10; i++ {
		text = fmt.Appendf(text, "turn %d: we moved the release of build %d to the %dth after the budget review with team %d; ", i, i*7919%1000, i%28+1, i%13)
	}
	var prev []byte
	for i, w := range want {
		if got := encoderLevel(i + 1); got != w {
			t.Fatalf("ZstdLevel %d: encoder level %v, want %v", i+1, got, w)
		}
		c, err := newCompressor(CompressionZstd, i+1)
		if err != nil {
			t.Fatal(err)
		}
		z, err := c.compress(nil, text, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.decompress(CompressionZstd, 0, nil, z)
		if err != nil || !bytes.Equal(back, text) {
			t.Fatalf("ZstdLevel %d: round trip failed (%v)", i+1, err)
		}
		if bytes.Equal(z, prev) {
			t.Errorf("ZstdLevel %d compresses exactly as level %d", i+1, i)
		}
		t.Logf("ZstdLevel %d (%v): %d -> %d bytes", i+1, w, len(text), len(z))
		prev = z
	}
}
