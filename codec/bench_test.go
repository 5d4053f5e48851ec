package codec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatRecords returns n chat-like records from a seeded generator: ~200-byte
// texts from a small vocabulary, one agent, a few sessions, two meta fields.
func chatRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := strings.Fields("the a we pool connection database timeout retry deploy" +
		" yesterday decided should could latency cache index query user assistant" +
		" meeting notes budget plan release bug fix test review merge branch config")
	roles := []string{"user", "assistant", "tool"}
	recs := make([]Record, n)
	t0 := int64(1767225600_000000000)
	for i := range recs {
		var sb strings.Builder
		for sb.Len() < 200 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		recs[i] = Record{
			Time:    t0 + int64(i)*1_500_000_000,
			Agent:   "agent-42",
			Session: fmt.Sprintf("session-%03d", i/50),
			Role:    roles[rng.IntN(len(roles))],
			Text:    sb.String(),
			Meta: []Field{
				{Key: "channel", Values: []string{"slack"}},
				{Key: "topic", Values: []string{words[rng.IntN(len(words))]}},
			},
		}
	}
	return recs
}

func BenchmarkRecord(b *testing.B) {
	recs := chatRecords(1024, 1)
	var stream []byte
	for i := range recs {
		stream = AppendRecord(stream, &recs[i])
	}
	avg := int64(len(stream) / len(recs))

	b.Run("op=encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(avg)
		buf := make([]byte, 0, 4096)
		i := 0
		for b.Loop() {
			buf = AppendRecord(buf[:0], &recs[i&1023])
			i++
		}
	})
	b.Run("op=decode", func(b *testing.B) {
		// A scan: consecutive records into one reused Record, the way a
		// segment reader decodes a block.
		b.ReportAllocs()
		b.SetBytes(avg)
		var r Record
		src := stream
		for b.Loop() {
			if len(src) == 0 {
				src = stream
			}
			var err error
			if src, err = DecodeRecord(src, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=skip", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(avg)
		src := stream
		for b.Loop() {
			if len(src) == 0 {
				src = stream
			}
			var err error
			if src, err = skipRecord(src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=size", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_ = RecordSize(&recs[i&1023])
			i++
		}
	})
}

func BenchmarkFvecsReader(b *testing.B) {
	for _, dim := range []int{128, 512, 1536} {
		rng := rand.New(rand.NewPCG(uint64(dim), 7))
		var file []byte
		const n = 256
		for range n {
			v := make([]float32, dim)
			for j := range v {
				v[j] = rng.Float32()
			}
			file = AppendFvec(file, v)
		}
		for _, impl := range []string{"direct", "portable"} {
			b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, impl), func(b *testing.B) {
				// direct: little-endian read into the vector's memory;
				// portable: staging buffer + conversion loop (big-endian path).
				portableVecDecode = impl == "portable"
				defer func() { portableVecDecode = false }()
				b.ReportAllocs()
				b.SetBytes(int64(len(file) / n)) // per vector
				rd := bytes.NewReader(file)
				r := NewFvecsReader(rd, VecOptions{Dim: dim})
				for b.Loop() {
					if !r.Next() {
						if r.Err() != nil {
							b.Fatal(r.Err())
						}
						rd.Reset(file)
						r.Reset(rd)
						if !r.Next() {
							b.Fatal(r.Err())
						}
					}
				}
			})
		}
	}
}

func BenchmarkDeltaUint64s(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]uint64, 1000)
	var id uint64
	for i := range ids {
		id += 1 + uint64(rng.IntN(200)) // a posting list: sparse ascending ids
		ids[i] = id
	}
	enc := appendDeltaUint64s(nil, ids)
	b.Run("op=encode/n=1000", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(8 * len(ids)))
		buf := make([]byte, 0, len(enc))
		for b.Loop() {
			buf = appendDeltaUint64s(buf[:0], ids)
		}
	})
	b.Run("op=decode/n=1000", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(8 * len(ids)))
		out := make([]uint64, 0, len(ids))
		for b.Loop() {
			var err error
			if out, _, err = decodeDeltaUint64s(enc, out[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkChecksum(b *testing.B) {
	for _, size := range []int{256, 32 << 10} {
		buf := make([]byte, size)
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = Checksum(buf)
			}
		})
	}
}

// BenchmarkReadAllFvecs reads a real LoCoMo embedding file (419 x 512-d,
// 860 KB) from the page cache into memory, the way the bench loaders do.
func BenchmarkReadAllFvecs(b *testing.B) {
	path := filepath.Join(sharedDataDir(b), "26.turns.fvecs")
	st, err := os.Stat(path)
	if err != nil {
		b.Skip(err)
	}
	b.Run("file=26.turns", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(st.Size())
		for b.Loop() {
			vs, err := ReadAllFvecs(path)
			if err != nil || len(vs) != 419 {
				b.Fatal(err)
			}
		}
	})
}
