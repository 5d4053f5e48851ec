package vecmath

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lazymem/lazymem/internal/testenv"
)

// locomoDir holds the LoCoMo USE-lite embeddings (see docs/DESIGN.md, Evaluation data).
// LAZYMEM_LOCOMO overrides the default location next to the work tree.
func locomoDir() string {
	if d := os.Getenv("LAZYMEM_LOCOMO"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "data", "locomo")
}

// readFvecs parses the .fvecs format: per vector a little-endian int32
// dimension then that many float32. (codec owns the production reader; this
// test keeps vecmath free of dependencies.)
func readFvecs(t *testing.T, path string) [][]float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		testenv.Missing(t, "LoCoMo embeddings not available: %v", err)
	}
	var vs [][]float32
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("%s: truncated", path)
		}
		d := int(binary.LittleEndian.Uint32(b))
		if d <= 0 || len(b) < 4+4*d {
			t.Fatalf("%s: bad dimension %d", path, d)
		}
		v := make([]float32, d)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4+4*i:]))
		}
		vs = append(vs, v)
		b = b[4+4*d:]
	}
	return vs
}

// quantizeInt8 is symmetric per-vector int8: x ~= scale * q, q in [-127, 127].
func quantizeInt8(v []float32) ([]int8, float32) {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	q := make([]int8, len(v))
	if m == 0 {
		return q, 0
	}
	s := m / 127
	for i, x := range v {
		q[i] = int8(math.RoundToEven(float64(x / s)))
	}
	return q, s
}

// TestQuantizationRecallLoCoMo measures what storing the candidate vectors
// as binary16 or int8 does to retrieval: for every question of the six
// LoCoMo conversations, the top-10 turns by dot product (the embeddings are
// unit length) with float32 storage against the top-10 with quantized
// storage. It logs the agreement and fails if binary16 drops below 0.99
// (measured: see docs/benchmarks/vecmath.md).
func TestQuantizationRecallLoCoMo(t *testing.T) {
	if testing.Short() {
		// 1 s natively, but ~40 s under qemu-aarch64.
		t.Skip("reads 15 MB of embeddings and scores 1.7M pairs")
	}
	const k = 10
	var n, same16, same8 int
	var maxErr16, maxErr8 float64
	for _, conv := range []string{"26", "30", "41", "42", "43", "44"} {
		turns := readFvecs(t, filepath.Join(locomoDir(), conv+".turns.fvecs"))
		qs := readFvecs(t, filepath.Join(locomoDir(), conv+".questions.fvecs"))
		dim := len(turns[0])
		// The stored forms, widened back to float32 once: scoring them with
		// Dot gives the quantized storage's scores (up to float32 summation
		// order) at float32 kernel speed on every implementation.
		h16 := make([][]float32, len(turns))
		i8 := make([][]float32, len(turns))
		for i, v := range turns {
			h16[i] = AppendFromFloat16(nil, AppendFloat16(nil, v))
			q, sc := quantizeInt8(v)
			i8[i] = make([]float32, dim)
			for j := range q {
				i8[i][j] = sc * float32(q[j])
			}
		}
		s32 := make([]float32, len(turns))
		s16 := make([]float32, len(turns))
		s8 := make([]float32, len(turns))
		for _, q := range qs {
			for i := range turns {
				s32[i] = Dot(q, turns[i])
				s16[i] = Dot(q, h16[i])
				s8[i] = Dot(q, i8[i])
				maxErr16 = max(maxErr16, math.Abs(float64(s16[i]-s32[i])))
				maxErr8 = max(maxErr8, math.Abs(float64(s8[i]-s32[i])))
			}
			ref := TopK(s32, k)
			in := make(map[int]bool, k)
			for _, i := range ref {
				in[i] = true
			}
			for _, i := range TopK(s16, k) {
				if in[i] {
					same16++
				}
			}
			for _, i := range TopK(s8, k) {
				if in[i] {
					same8++
				}
			}
			n += k
		}
	}
	r16, r8 := float64(same16)/float64(n), float64(same8)/float64(n)
	t.Logf("top-%d agreement with float32 over %d questions: binary16 %.4f (max |score error| %.2e), int8 %.4f (max |score error| %.2e)",
		k, n/k, r16, maxErr16, r8, maxErr8)
	if r16 < 0.99 {
		t.Errorf("binary16 top-%d agreement %.4f < 0.99", k, r16)
	}
}
