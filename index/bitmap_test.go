package index

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestReadBitmapGarbage: damaged bitmap bytes give an error or a bitmap,
// never a panic or a hang.
func TestReadBitmapGarbage(t *testing.T) {
	bm := roaring.New()
	for i := 0; i < 300; i++ {
		bm.Add(uint32(i * 3))
	}
	bm.AddRange(100000, 100500)
	bm.RunOptimize()
	good, _ := bm.ToBytes()
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 20000; iter++ {
		b := append([]byte(nil), good...)
		for j := 0; j < 1+rng.IntN(3); j++ {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		done := make(chan bool, 1)
		go func() {
			_, _ = readBitmap(b)
			done <- true
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("hang on %x", b)
		}
	}
}
