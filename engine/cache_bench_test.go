package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/embed"
)

// BenchmarkCacheLookupDisk is the disk tier's part of a warm recall whose
// vectors the memory tier does not hold: lookup of 30 keys (records of
// 20,000, 29 MiB of vectors, more than Pebble's block cache) by the keys
// their facts hold. Run with -cpu 1,2 to see what splitting the reads
// between the cores gives.
func BenchmarkCacheLookupDisk(b *testing.B) {
	emb, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := newVecCache(cacheConfig{fs: vfs.Default, dir: b.TempDir(), emb: emb, timeout: DefaultEmbedTimeout})
	if err != nil {
		b.Fatal(err)
	}
	defer c.close()
	const n = 20_000
	keys := make([]string, n)
	for lo := 0; lo < n; lo += 1000 {
		texts, ns := make([]string, 1000), make([]string, 1000)
		for i := range texts {
			texts[i], ns[i] = fmt.Sprintf("record %d says something about topic %d", lo+i, (lo+i)%97), "a"
			keys[lo+i] = cacheKey(ns[i], texts[i])
		}
		if _, _, err := c.get(context.Background(), ns, texts, nil); err != nil {
			b.Fatal(err)
		}
	}
	c.settle() // every vector in Pebble: the lookups below read the disk
	r := rand.New(rand.NewPCG(1, 2))
	batch := make([]string, 30)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for j := range batch {
			batch[j] = keys[r.IntN(n)]
		}
		got, st, err := c.lookup(batch, nil)
		if err != nil || st.diskHits != len(batch) || got[0] == nil {
			b.Fatalf("%d disk hits of %d: %v", st.diskHits, len(batch), err)
		}
	}
}
