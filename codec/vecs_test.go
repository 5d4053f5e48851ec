package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/internal/testenv"
)

func randF32s(rng *rand.Rand, n, dim int) [][]float32 {
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = make([]float32, dim)
		for j := range vs[i] {
			vs[i][j] = float32(rng.NormFloat64())
		}
	}
	return vs
}

func TestVecsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t.Run("format=fvecs", func(t *testing.T) {
		vs := randF32s(rng, 50, 17)
		vs = append(vs, []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32})
		var buf bytes.Buffer
		w := NewFvecsWriter(&buf, VecOptions{BufferSize: 64}) // small buffer: exercise bufio
		for _, v := range vs {
			if err := w.Write(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil || w.Count() != len(vs) {
			t.Fatal(err)
		}
		if buf.Len() != 50*(4+17*4)+4+4*4 {
			t.Fatalf("size %d", buf.Len())
		}
		// The writer's bytes are AppendFvec's bytes.
		var want []byte
		for _, v := range vs {
			want = AppendFvec(want, v)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatal("writer and AppendFvec disagree")
		}
		got, err := ReadAll(NewFvecsReader(&buf, VecOptions{}))
		if err != nil || len(got) != len(vs) {
			t.Fatalf("ReadAll: %d vectors, %v", len(got), err)
		}
		for i := range vs {
			for j := range vs[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(vs[i][j]) {
					t.Fatalf("vector %d[%d]: bits %x want %x", i, j, math.Float32bits(got[i][j]), math.Float32bits(vs[i][j]))
				}
			}
		}
	})
	t.Run("format=ivecs", func(t *testing.T) {
		vs := [][]int32{{1}, {-1, math.MaxInt32, math.MinInt32}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}
		path := filepath.Join(t.TempDir(), "gt.ivecs")
		if err := WriteAllIvecs(path, vs); err != nil {
			t.Fatal(err)
		}
		got, err := ReadAllIvecs(path)
		if err != nil || !slices.EqualFunc(got, vs, slices.Equal) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("format=bvecs", func(t *testing.T) {
		vs := [][]uint8{{0, 255, 128}, {1, 2, 3}, {9, 9, 9}}
		path := filepath.Join(t.TempDir(), "b.bvecs")
		if err := WriteAllBvecs(path, vs); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		if !bytes.Equal(raw[:7], []byte{3, 0, 0, 0, 0, 255, 128}) {
			t.Fatalf("bvecs layout %x", raw[:7])
		}
		got, err := ReadAllBvecs(path)
		if err != nil || !slices.EqualFunc(got, vs, slices.Equal) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("format=fvecs/file", func(t *testing.T) {
		vs := randF32s(rng, 10, 8)
		path := filepath.Join(t.TempDir(), "x.fvecs")
		if err := WriteAllFvecs(path, vs); err != nil {
			t.Fatal(err)
		}
		got, err := ReadAllFvecs(path)
		if err != nil || !slices.EqualFunc(got, vs, slices.Equal) {
			t.Fatalf("got %v, %v", got, err)
		}
		if _, err := ReadAllFvecs(filepath.Join(t.TempDir(), "missing.fvecs")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("missing file err %v", err)
		}
	})
	t.Run("empty stream", func(t *testing.T) {
		r := NewFvecsReader(bytes.NewReader(nil), VecOptions{})
		if r.Next() || r.Err() != nil {
			t.Fatalf("empty stream: err %v", r.Err())
		}
	})
}

func TestVecReaderReusesBuffers(t *testing.T) {
	var b []byte
	for range 100 {
		b = AppendFvec(b, make([]float32, 64))
	}
	r := NewFvecsReader(bytes.NewReader(b), VecOptions{Dim: 64})
	if !r.Next() || r.Dim() != 64 || r.Count() != 1 || r.Offset() != 0 {
		t.Fatalf("first vector: dim %d count %d err %v", r.Dim(), r.Count(), r.Err())
	}
	allocs := testing.AllocsPerRun(50, func() {
		if !r.Next() {
			t.Fatal(r.Err())
		}
	})
	if allocs != 0 {
		t.Fatalf("Next allocated %.1f times per vector", allocs)
	}
	// Reset starts a new stream with the same buffers; errors and counts clear.
	r.Reset(bytes.NewReader(hdr(-1)))
	if r.Next() || !errors.Is(r.Err(), ErrDimension) {
		t.Fatalf("after Reset: %v", r.Err())
	}
	r.Reset(bytes.NewReader(b[:2*(4+64*4)]))
	allocs = testing.AllocsPerRun(5, func() {
		r.Reset(bytes.NewReader(b))
		for r.Next() {
		}
	})
	if r.Err() != nil || r.Count() != 100 || r.Offset() != int64(len(b)) {
		t.Fatalf("after Reset: err %v count %d offset %d", r.Err(), r.Count(), r.Offset())
	}
	if allocs > 1 { // the bytes.Reader
		t.Fatalf("Reset+read allocated %.1f times", allocs)
	}
}

// hdr is a raw vector header with any dimension, including invalid ones.
func hdr(d int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(d)) }

func TestVecReaderMalformed(t *testing.T) {
	ok3 := AppendFvec(nil, []float32{1, 2, 3}) // 16 bytes
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name   string
		src    []byte
		opts   VecOptions
		good   int    // vectors read before the error
		want   error  // nil: clean end
		what   string // substring of What
		offset int
	}{
		{"negative dim", cat(ok3, hdr(-3)), VecOptions{}, 1, ErrDimension, "vector 1 dimension -3", 16},
		{"zero dim", cat(ok3, ok3, hdr(0)), VecOptions{}, 2, ErrDimension, "vector 2 dimension 0", 32},
		{"huge dim", cat(hdr(math.MaxInt32), make([]byte, 64)), VecOptions{}, 0, ErrDimension, "dimension 2147483647 (want 1..1048576)", 0},
		{"dim above MaxDim", cat(ok3), VecOptions{MaxDim: 2}, 0, ErrDimension, "dimension 3 (want 1..2)", 0},
		{"fixed dim", cat(ok3, AppendFvec(nil, []float32{1, 2})), VecOptions{Dim: 3}, 1, ErrDimension, "vector 1 dimension 2 (want 3)", 16},
		{"same dim", cat(ok3, ok3, AppendFvec(nil, []float32{1, 2, 3, 4})), VecOptions{SameDim: true}, 2, ErrDimension, "vector 2 dimension 4 (first vector has 3)", 32},
		{"varying dim allowed", cat(ok3, AppendFvec(nil, []float32{1})), VecOptions{}, 2, nil, "", 0},
		{"truncated header", cat(ok3, []byte{3, 0}), VecOptions{}, 1, ErrTruncated, "vector 1 header", 16},
		{"truncated values", cat(ok3, ok3[:10]), VecOptions{}, 1, ErrTruncated, "vector 1 values (dimension 3, 6 of 12 bytes present)", 16},
		{"header only", hdr(3), VecOptions{}, 0, ErrTruncated, "vector 0 values", 0},
	} {
		r := NewFvecsReader(bytes.NewReader(tc.src), tc.opts)
		n := 0
		for r.Next() {
			n++
		}
		if n != tc.good {
			t.Errorf("%s: read %d vectors, want %d", tc.name, n, tc.good)
		}
		err := r.Err()
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: err %v", tc.name, err)
			}
			continue
		}
		var de *DecodeError
		if !errors.Is(err, tc.want) || !errors.As(err, &de) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
			continue
		}
		if !strings.Contains(de.What, tc.what) || de.Offset != tc.offset || r.Offset() != int64(tc.offset) {
			t.Errorf("%s: What %q Offset %d, want %q at %d", tc.name, de.What, de.Offset, tc.what, tc.offset)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("at byte %d", tc.offset)) || !strings.Contains(err.Error(), "fvecs") {
			t.Errorf("%s: message %q", tc.name, err)
		}
		if r.Next() || r.Vec() != nil && len(r.Vec()) != 0 {
			t.Errorf("%s: reader continued after error", tc.name)
		}
	}
	// A malformed file through ReadAllFvecs names the path and the offset.
	path := filepath.Join(t.TempDir(), "bad.fvecs")
	if err := os.WriteFile(path, cat(ok3, ok3, hdr(-1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadAllFvecs(path)
	if !errors.Is(err, ErrDimension) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "at byte 32") {
		t.Fatalf("ReadAllFvecs: %v", err)
	}
	// Other formats name themselves.
	rb := NewBvecsReader(bytes.NewReader(cat(hdr(4), []byte{1, 2})), VecOptions{})
	if rb.Next() || !errors.Is(rb.Err(), ErrTruncated) || !strings.Contains(rb.Err().Error(), "bvecs vector 0 values") {
		t.Fatalf("bvecs: %v", rb.Err())
	}
	ri := NewIvecsReader(bytes.NewReader(hdr(0)), VecOptions{})
	if ri.Next() || !errors.Is(ri.Err(), ErrDimension) || !strings.Contains(ri.Err().Error(), "ivecs") {
		t.Fatalf("ivecs: %v", ri.Err())
	}
}

type failingIO struct {
	n   int // bytes before failing
	err error
}

func (f *failingIO) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	for i := range k {
		p[i] = 0
	}
	p[0] = 1 // a dimension of 1 when this is a header's first byte
	f.n -= k
	return k, nil
}

func (f *failingIO) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

func TestVecIOErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	r := NewFvecsReader(&failingIO{n: 6, err: boom}, VecOptions{BufferSize: 16})
	for r.Next() {
	}
	if !errors.Is(r.Err(), boom) {
		t.Fatalf("reader I/O error lost: %v", r.Err())
	}

	w := NewFvecsWriter(&failingIO{n: 20, err: boom}, VecOptions{BufferSize: 16})
	var err error
	for range 10 {
		if err = w.Write([]float32{1, 2, 3}); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if !errors.Is(err, boom) || !errors.Is(w.Write([]float32{1}), boom) || !errors.Is(w.Flush(), boom) {
		t.Fatalf("writer I/O error not sticky: %v", err)
	}

	var buf bytes.Buffer
	w = NewFvecsWriter(&buf, VecOptions{SameDim: true, MaxDim: 4})
	for _, tc := range []struct {
		v    []float32
		want error
	}{
		{nil, ErrInvalidVector},
		{[]float32{1, 2}, nil},
		{[]float32{1, 2, 3}, ErrInvalidVector}, // not the first vector's dimension
		{make([]float32, 5), ErrInvalidVector}, // above MaxDim
		{[]float32{3, 4}, nil},                 // writer stays usable after a rejected vector
	} {
		if err := w.Write(tc.v); !errors.Is(err, tc.want) {
			t.Errorf("Write(len %d) = %v, want %v", len(tc.v), err, tc.want)
		}
	}
	if err := w.Flush(); err != nil || buf.Len() != 2*(4+8) || w.Count() != 2 {
		t.Fatalf("flush %v, %d bytes, count %d", err, buf.Len(), w.Count())
	}
	if err := NewIvecsWriter(io.Discard, VecOptions{Dim: 2}).Write([]int32{1}); !errors.Is(err, ErrInvalidVector) {
		t.Fatalf("fixed-dim writer: %v", err)
	}

	for _, o := range []VecOptions{{Dim: -1}, {MaxDim: -5}, {Dim: 10, MaxDim: 5}, {BufferSize: 3}} {
		r := NewBvecsReader(bytes.NewReader(nil), o)
		if r.Next() || !errors.Is(r.Err(), ErrInvalidOptions) {
			t.Errorf("options %+v: reader err %v", o, r.Err())
		}
		if err := NewBvecsWriter(io.Discard, o).Write([]uint8{1}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("options %+v: writer err %v", o, err)
		}
	}
}

// sharedDataDir finds the LoCoMo data directory beside the repository
// (shared/data/locomo, two levels up from the package directory). Tests
// that need it skip without it.
func sharedDataDir(t testing.TB) string {
	dir := filepath.Join("..", "..", "shared", "data", "locomo")
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "LoCoMo data not found at %s (expected ../../shared/data/locomo from the codec package): %v", dir, err)
	}
	return dir
}

var sessionKey = regexp.MustCompile(`^session_[0-9]+$`)

// TestLocomoFvecs reads the real LoCoMo embedding files: every vector has
// dimension 512 and unit norm, and there is one vector per turn (turns,
// speaker_turns) and per question, counted from the conversation's JSON.
// Writing the vectors back reproduces the file byte for byte.
func TestLocomoFvecs(t *testing.T) {
	dir := sharedDataDir(t)
	jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(jsons) == 0 {
		testenv.Missing(t, "no LoCoMo conversations in %s", dir)
	}
	for _, jpath := range jsons {
		conv := strings.TrimSuffix(filepath.Base(jpath), ".json")
		var doc map[string]json.RawMessage
		raw, err := os.ReadFile(jpath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", jpath, err)
		}
		turns := 0
		for k, v := range doc {
			if sessionKey.MatchString(k) {
				var s []json.RawMessage
				if err := json.Unmarshal(v, &s); err != nil {
					t.Fatalf("%s %s: %v", jpath, k, err)
				}
				turns += len(s)
			}
		}
		var qa []json.RawMessage
		if err := json.Unmarshal(doc["qa"], &qa); err != nil {
			t.Fatalf("%s qa: %v", jpath, err)
		}
		for kind, want := range map[string]int{"turns": turns, "speaker_turns": turns, "questions": len(qa)} {
			path := filepath.Join(dir, conv+"."+kind+".fvecs")
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r := NewFvecsReader(f, VecOptions{Dim: 512})
			var rewritten bytes.Buffer
			w := NewFvecsWriter(&rewritten, VecOptions{Dim: 512})
			for r.Next() {
				var ss float64
				for _, x := range r.Vec() {
					ss += float64(x) * float64(x)
				}
				if n := math.Sqrt(ss); math.Abs(n-1) > 1e-3 {
					t.Fatalf("%s vector %d: norm %.6f, want ~1", path, r.Count()-1, n)
				}
				if err := w.Write(r.Vec()); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			if r.Err() != nil {
				t.Fatalf("%s: %v", path, r.Err())
			}
			if r.Count() != want {
				t.Fatalf("%s: %d vectors, want %d from %s", path, r.Count(), want, jpath)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			orig, _ := os.ReadFile(path)
			if !bytes.Equal(orig, rewritten.Bytes()) {
				t.Fatalf("%s: rewriting the vectors does not reproduce the file", path)
			}
		}
	}
	// ReadAllFvecs on one real file, as callers use it.
	vs, err := ReadAllFvecs(filepath.Join(dir, "26.turns.fvecs"))
	if err != nil || len(vs) != 419 || len(vs[0]) != 512 || cap(vs[0]) != 512 {
		t.Fatalf("26.turns.fvecs: %d vectors, %v", len(vs), err)
	}
}

// TestVecsPortablePath runs the vector tests through the conversion loop that
// big-endian machines use, so it is tested on every machine.
func TestVecsPortablePath(t *testing.T) {
	if !nativeLittleEndian {
		t.Skip("the portable path is the only path on this machine")
	}
	portableVecDecode = true
	defer func() { portableVecDecode = false }()
	t.Run("roundtrip", TestVecsRoundTrip)
	t.Run("malformed", TestVecReaderMalformed)
	t.Run("reuse", TestVecReaderReusesBuffers)
	t.Run("locomo", TestLocomoFvecs)
}
