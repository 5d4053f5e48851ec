package use

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A tiny model of the USE-lite graph, with random weights, so the loader
// and the forward pass are tested without the real files: embeddings 8
// wide, layer 0 8 -> 12 (2 heads of 4), layer 1 12 -> 12 (2 heads of 6),
// FFN 10 wide, at most 6 tokens.
const (
	tinyEmb    = 8
	tinyWidth  = 12
	tinyHidden = 10
	tinyHeads  = 2
	tinyMaxLen = 6
	tinyRows   = 22 // embedding rows: more than the 20 pieces, as in the real model
)

type tinyWeight struct {
	name  string
	shape []int
	dtype string
	f     []float32
	i     []int32
}

// tinyWeights builds the weights from an explicit seed.
func tinyWeights(seed uint64) []*tinyWeight {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ws []*tinyWeight
	randf := func(name string, scale float32, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		w := &tinyWeight{name: name, shape: shape, dtype: "float32", f: make([]float32, n)}
		for k := range w.f {
			w.f[k] = scale * float32(rng.NormFloat64())
		}
		ws = append(ws, w)
	}
	constf := func(name string, v ...float32) {
		shape := []int{}
		if len(v) > 1 {
			shape = []int{1, len(v)}
		}
		ws = append(ws, &tinyWeight{name: name, shape: shape, dtype: "float32", f: v})
	}
	consti := func(name string, v int32) {
		ws = append(ws, &tinyWeight{name: name, shape: []int{}, dtype: "int32", i: []int32{v}})
	}
	randf(wEmbeddings, 1, tinyRows, tinyEmb)
	inv := make([]float32, tinyEmb/2)
	for k := range inv {
		inv[k] = float32(math.Pow(1e4, -float64(k)/float64(len(inv)-1)))
	}
	constf(wInvTime, inv...)
	consti(wMaxLen, tinyMaxLen)
	constf(wLNEpsilon, 1e-6)
	consti(wHeads, tinyHeads)
	constf(wL2Epsilon, 1e-12)
	width := tinyEmb
	for l := 0; l < 2; l++ {
		n := layerNames(l)
		randf(n.lnScale, 1, width)
		randf(n.lnBias, 0.1, width)
		randf(n.qkv, 0.5, 1, 1, width, 3*width)
		randf(n.qkvBias, 0.1, 3*width)
		randf(n.out, 0.3, 1, 1, width, tinyWidth)
		randf(n.outBias, 0.1, tinyWidth)
		hd := width / tinyHeads
		constf(n.scale, float32(1/math.Sqrt(float64(hd))))
		consti(n.headDim, int32(hd))
		if width != tinyWidth {
			randf(n.resid, 0.3, width, tinyWidth)
			randf(n.residBias, 0.1, tinyWidth)
		}
		randf(n.ffnScale, 1, tinyWidth)
		randf(n.ffnBias, 0.1, tinyWidth)
		randf(n.conv1, 0.3, tinyWidth, tinyHidden)
		randf(n.conv1Bias, 0.1, tinyHidden)
		randf(n.conv2, 0.3, tinyHidden, tinyWidth)
		randf(n.conv2Bias, 0.1, tinyWidth)
		width = tinyWidth
	}
	randf(wTanh, 0.3, tinyWidth, tinyWidth)
	randf(wTanhBias, 0.1, tinyWidth)
	return ws
}

// writeTinyModel writes the weights as a TF.js graph model split over two
// shards, and the tiny vocabulary, into a new directory.
func writeTinyModel(t testing.TB, ws []*tinyWeight) string {
	t.Helper()
	dir := t.TempDir()
	var data []byte
	var specs []map[string]any
	for _, w := range ws {
		specs = append(specs, map[string]any{"name": w.name, "shape": w.shape, "dtype": w.dtype})
		for _, v := range w.f {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		for _, v := range w.i {
			data = binary.LittleEndian.AppendUint32(data, uint32(v))
		}
	}
	cut := len(data) / 3 // not on a weight boundary
	mustWrite(t, filepath.Join(dir, "group1-shard1of2"), data[:cut])
	mustWrite(t, filepath.Join(dir, "group1-shard2of2"), data[cut:])
	mj, err := json.Marshal(map[string]any{
		"modelTopology": map[string]any{"node": []map[string]any{{"name": "indices", "op": "Placeholder"}}},
		"weightsManifest": []map[string]any{{
			"paths":   []string{"group1-shard1of2", "group1-shard2of2"},
			"weights": specs,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "model.json"), mj)
	vocab := make([][2]any, len(tinyPieces))
	for i := range tinyPieces {
		vocab[i] = [2]any{tinyPieces[i], tinyScores[i]}
	}
	vj, err := json.Marshal(vocab)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "vocab.json"), vj)
	return dir
}

func mustWrite(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// refForward is the network computed naively in float64 from the
// untransposed weights: one text at a time, no blocking, no batching.
func refForward(ws []*tinyWeight, ids []int32) []float64 {
	W := map[string][]float64{}
	I := map[string]int{}
	for _, w := range ws {
		for _, v := range w.f {
			W[w.name] = append(W[w.name], float64(v))
		}
		if w.i != nil {
			I[w.name] = int(w.i[0])
		}
	}
	if len(ids) > I[wMaxLen] {
		ids = ids[:I[wMaxLen]]
	}
	T := len(ids)
	eps := W[wLNEpsilon][0]
	matmul := func(x [][]float64, k, b []float64, in, out int) [][]float64 {
		y := make([][]float64, len(x))
		for t := range x {
			y[t] = make([]float64, out)
			for o := 0; o < out; o++ {
				s := 0.0
				for i := 0; i < in; i++ {
					s += x[t][i] * k[i*out+o]
				}
				y[t][o] = s + b[o]
			}
		}
		return y
	}
	ln := func(x [][]float64, scale, bias []float64) [][]float64 {
		y := make([][]float64, len(x))
		for t, r := range x {
			mean, vr := 0.0, 0.0
			for _, v := range r {
				mean += v
			}
			mean /= float64(len(r))
			for _, v := range r {
				vr += (v - mean) * (v - mean)
			}
			vr /= float64(len(r))
			y[t] = make([]float64, len(r))
			for i, v := range r {
				y[t][i] = (v-mean)/math.Sqrt(vr+eps)*scale[i] + bias[i]
			}
		}
		return y
	}
	x := make([][]float64, T)
	half := tinyEmb / 2
	for p, id := range ids {
		x[p] = make([]float64, tinyEmb)
		for k := 0; k < tinyEmb; k++ {
			e := W[wEmbeddings][int(id)*tinyEmb+k]
			a := float64(p) * W[wInvTime][k%half]
			sig := math.Sin(a)
			if k >= half {
				sig = math.Cos(a)
			}
			x[p][k] = 2*e + sig
		}
	}
	width := tinyEmb
	for l := 0; l < 2; l++ {
		n := layerNames(l)
		h := ln(x, W[n.lnScale], W[n.lnBias])
		qkv := matmul(h, W[n.qkv], W[n.qkvBias], width, 3*width)
		hd := I[n.headDim]
		ctx := make([][]float64, T)
		for i := range ctx {
			ctx[i] = make([]float64, width)
		}
		for hh := 0; hh < tinyHeads; hh++ {
			for i := 0; i < T; i++ {
				sc := make([]float64, T)
				mx := math.Inf(-1)
				for j := 0; j < T; j++ {
					for d := 0; d < hd; d++ {
						sc[j] += qkv[i][hh*hd+d] * W[n.scale][0] * qkv[j][width+hh*hd+d]
					}
					mx = max(mx, sc[j])
				}
				sum := 0.0
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					sum += sc[j]
				}
				for j := range sc {
					for d := 0; d < hd; d++ {
						ctx[i][hh*hd+d] += sc[j] / sum * qkv[j][2*width+hh*hd+d]
					}
				}
			}
		}
		y := matmul(ctx, W[n.out], W[n.outBias], width, tinyWidth)
		r := x
		if width != tinyWidth {
			r = matmul(x, W[n.resid], W[n.residBias], width, tinyWidth)
		}
		for t := range y {
			for k := range y[t] {
				y[t][k] += r[t][k]
			}
		}
		f := matmul(ln(y, W[n.ffnScale], W[n.ffnBias]), W[n.conv1], W[n.conv1Bias], tinyWidth, tinyHidden)
		for t := range f {
			for k := range f[t] {
				f[t][k] = max(f[t][k], 0)
			}
		}
		f = matmul(f, W[n.conv2], W[n.conv2Bias], tinyHidden, tinyWidth)
		for t := range y {
			for k := range y[t] {
				y[t][k] += f[t][k]
			}
		}
		x = y
		width = tinyWidth
	}
	pool := make([]float64, tinyWidth)
	for _, r := range x {
		for k, v := range r {
			pool[k] += v / float64(max(T, 1))
		}
	}
	out := matmul([][]float64{pool}, W[wTanh], W[wTanhBias], tinyWidth, tinyWidth)[0]
	ss := 0.0
	for k := range out {
		out[k] = math.Tanh(out[k])
		ss += out[k] * out[k]
	}
	for k := range out {
		out[k] /= math.Sqrt(ss)
	}
	return out
}

// tinyTexts cover the empty text, unknowns, truncation at 6 tokens and
// texts of every length in between.
var tinyTexts = []string{"", "a", "ab", "abc ca", "zz a", "😀 b", "a a a a a a a a a", "bc bc bc ab", "é", "c", "  ", "ab ab ab"}

func TestTinyModelMatchesReference(t *testing.T) {
	ws := tinyWeights(7)
	dir := writeTinyModel(t, ws)
	defer func(b, m int) { blockBytes, minParallelMACs = b, m }(blockBytes, minParallelMACs)
	var first [][]float32
	for _, bb := range []int{96 << 10, 64} { // one block; blocks of 4 rows
		blockBytes = bb
		// minParallelMACs 0 lets the tiny products split across workers.
		minParallelMACs = 0
		for _, opts := range []Options{{Workers: 1}, {Workers: 1, BatchTokens: 1}, {Workers: 2, BatchTokens: 5}, {Workers: 3, SplitProducts: true}} {
			u, err := load(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := u.Embed(context.Background(), tinyTexts)
			if err != nil {
				t.Fatal(err)
			}
			if opts.SplitProducts {
				// One text per call: one batch, its products split
				// across the workers.
				for i, text := range tinyTexts {
					one, err := u.Embed(context.Background(), []string{text})
					if err != nil {
						t.Fatal(err)
					}
					got[i] = one[0]
				}
			}
			if len(got) != len(tinyTexts) {
				t.Fatalf("%d vectors for %d texts", len(got), len(tinyTexts))
			}
			for i, text := range tinyTexts {
				ids := u.Tokenizer().Encode(text)
				want := refForward(ws, ids)
				for k := range want {
					if d := math.Abs(float64(got[i][k]) - want[k]); d > 2e-5 || math.IsNaN(float64(got[i][k])) {
						t.Fatalf("block %d, %+v, %q (ids %v): [%d] = %g, reference %g", bb, opts, text, ids, k, got[i][k], want[k])
					}
				}
			}
			// Batching, workers and blocking change no bit: each text
			// is computed on its own rows in a fixed order.
			if first == nil {
				first = got
				continue
			}
			for i := range got {
				for k := range got[i] {
					if got[i][k] != first[i][k] {
						t.Fatalf("block %d, %+v, %q: [%d] = %g, first run %g", bb, opts, tinyTexts[i], k, got[i][k], first[i][k])
					}
				}
			}
		}
	}
}

func TestTinyModelTruncates(t *testing.T) {
	u, err := load(writeTinyModel(t, tinyWeights(3)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u.MaxTokens() != tinyMaxLen {
		t.Fatalf("MaxTokens %d", u.MaxTokens())
	}
	// "a b c a b c a" tokenizes to more than 6 ids; only the first 6
	// count, so appending more text changes nothing.
	a, err := u.Embed(context.Background(), []string{"a b c a b c a", "a b c a b c a b c b"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(u.Tokenizer().Encode("a b c a b c a")); n <= tinyMaxLen {
		t.Fatalf("test text has %d tokens, want > %d", n, tinyMaxLen)
	}
	for k := range a[0] {
		if a[0][k] != a[1][k] {
			t.Fatalf("[%d]: %g vs %g: tokens past MaxTokens changed the vector", k, a[0][k], a[1][k])
		}
	}
}

func TestEmbedConcurrent(t *testing.T) {
	u, err := load(writeTinyModel(t, tinyWeights(11)), Options{Workers: 2, BatchTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	want, err := u.Embed(context.Background(), tinyTexts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				// Each goroutine embeds a rotation of the texts.
				in := append(append([]string{}, tinyTexts[(g+r)%len(tinyTexts):]...), tinyTexts[:(g+r)%len(tinyTexts)]...)
				got, err := u.Embed(context.Background(), in)
				if err != nil {
					errs <- err
					return
				}
				for i := range in {
					j := (i + g + r) % len(tinyTexts)
					for k := range got[i] {
						if got[i][k] != want[j][k] {
							errs <- fmt.Errorf("%q: [%d] = %g, want %g", in[i], k, got[i][k], want[j][k])
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls, so
// cancellation in the middle of a call is tested without timing.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestEmbedCancelled(t *testing.T) {
	u, err := load(writeTinyModel(t, tinyWeights(5)), Options{Workers: 2, BatchTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := u.Embed(ctx, tinyTexts); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v", err)
	}
	for _, workers := range []int{1, 2} {
		u.opts.Workers = workers
		c := &cancelAfter{Context: context.Background()}
		c.n.Store(3) // the call's first check and two batches
		if _, err := u.Embed(c, tinyTexts); !errors.Is(err, context.Canceled) {
			t.Fatalf("workers %d: cancelled during: %v", workers, err)
		}
	}
	got, err := u.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("no texts: %v, %v", got, err)
	}
}

func TestNameAndDigest(t *testing.T) {
	ws := tinyWeights(1)
	a, err := load(writeTinyModel(t, ws), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := load(writeTinyModel(t, ws), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != b.Name() || !strings.HasPrefix(a.Name(), Name+"-x") || a.Name() == Name {
		t.Fatalf("names %q, %q", a.Name(), b.Name())
	}
	ws[0].f[0] += 1e-3
	c, err := load(writeTinyModel(t, ws), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() == a.Name() {
		t.Fatalf("other weights, same name %q", c.Name())
	}
	if a.Dim() != tinyWidth {
		t.Fatalf("Dim %d", a.Dim())
	}
	// New insists on the real model's width.
	if _, err := New(writeTinyModel(t, ws), Options{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("New on a 12-wide model: %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{Workers: -1}, {BatchTokens: -1}, {BatchTokens: 1 << 17}} {
		if _, err := New(t.TempDir(), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	var o Options
	o.EnsureDefaults()
	if o.Workers < 1 || o.BatchTokens != DefaultBatchTokens || o.Validate() != nil {
		t.Errorf("defaults %+v", o)
	}
}

func TestLoadErrors(t *testing.T) {
	type mut func(t *testing.T, dir string)
	rewrite := func(file string, f func(b []byte) []byte) mut {
		return func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, file), f(b))
		}
	}
	replace := func(file, old, new string) mut {
		return rewrite(file, func(b []byte) []byte {
			s := strings.Replace(string(b), old, new, 1)
			if s == string(b) {
				t.Fatalf("%s: %q not found", file, old)
			}
			return []byte(s)
		})
	}
	remove := func(file string) mut {
		return func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, file)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		mut  mut
		want error
		file string // the message must name it
	}{
		{"no model.json", remove("model.json"), ErrMissing, "model.json"},
		{"no vocab.json", remove("vocab.json"), ErrMissing, "vocab.json"},
		{"no shard", remove("group1-shard2of2"), ErrMissing, "group1-shard2of2"},
		{"short shard", rewrite("group1-shard2of2", func(b []byte) []byte { return b[:len(b)-1] }), ErrCorrupt, "group1-shard"},
		{"long shard", rewrite("group1-shard2of2", func(b []byte) []byte { return append(b, 0) }), ErrCorrupt, "group1-shard2of2"},
		{"model.json not JSON", rewrite("model.json", func(b []byte) []byte { return b[:len(b)/2] }), ErrCorrupt, "model.json"},
		{"vocab.json not JSON", rewrite("vocab.json", func(b []byte) []byte { return b[1:] }), ErrCorrupt, "vocab.json"},
		{"quantized", replace("model.json", `"dtype":"float32"`, `"dtype":"float32","quantization":{"dtype":"uint8","min":0,"scale":1}`), ErrUnsupported, "model.json"},
		{"float16", replace("model.json", `"dtype":"float32"`, `"dtype":"float16"`), ErrUnsupported, "model.json"},
		{"path escapes", replace("model.json", `"group1-shard1of2"`, `"../group1-shard1of2"`), ErrCorrupt, "model.json"},
		{"missing weight", replace("model.json", wTanhBias, wTanhBias+"_renamed"), ErrUnsupported, "model.json"},
		{"wrong shape", replace("model.json", `"shape":[22,8]`, `"shape":[8,22]`), ErrCorrupt, "model.json"},
		{"empty vocabulary", rewrite("vocab.json", func([]byte) []byte { return []byte("[]") }), ErrCorrupt, "vocab.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTinyModel(t, tinyWeights(2))
			tc.mut(t, dir)
			_, err := load(dir, Options{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("%v does not name %s", err, tc.file)
			}
		})
	}
	if _, err := New(filepath.Join(t.TempDir(), "absent"), Options{}); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "fetch.sh") {
		t.Fatalf("absent directory: %v", err)
	}
	// A vocabulary larger than the embedding table.
	dir := writeTinyModel(t, tinyWeights(2))
	var vocab [][2]any
	for i := 0; i < tinyRows+1; i++ {
		vocab = append(vocab, [2]any{fmt.Sprintf("p%d", i), -1.0})
	}
	vj, _ := json.Marshal(vocab)
	mustWrite(t, filepath.Join(dir, "vocab.json"), vj)
	if _, err := load(dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("vocabulary larger than the embeddings: %v", err)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"modelTopology":{"node":[{"name":"a","op":"Const"}]},"weightsManifest":[{"paths":["s1"],"weights":[{"name":"w","shape":[2,3],"dtype":"float32"}]}]}`))
	f.Add([]byte(`{"modelTopology":{"node":[{"name":"a"}]},"weightsManifest":[{"paths":["s1","s2"],"weights":[{"name":"w","shape":[],"dtype":"int32"},{"name":"v","shape":[1,1,4,4],"dtype":"float32"}]}]}`))
	f.Add([]byte(`{"weightsManifest":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		// What parses is bounded and names plain files.
		total := 0
		for _, g := range m.Groups {
			for _, p := range g.Paths {
				if p != filepath.Base(p) || strings.ContainsAny(p, `/\`) || p == ".." {
					t.Fatalf("path %q accepted", p)
				}
			}
			for i := range g.Weights {
				n := g.Weights[i].elems()
				if n < 0 || n > maxWeightElems {
					t.Fatalf("weight %q of %d elements accepted", g.Weights[i].Name, n)
				}
				total += 4 * n
			}
		}
		if total > maxTotalBytes {
			t.Fatalf("%d bytes accepted", total)
		}
	})
}

func TestAppendVector(t *testing.T) {
	u, err := load(writeTinyModel(t, tinyWeights(13)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := u.Embed(context.Background(), tinyTexts)
	if err != nil {
		t.Fatal(err)
	}
	dst := []float32{42}
	for i, text := range tinyTexts {
		dst, err = u.AppendVector(dst, text)
		if err != nil {
			t.Fatal(err)
		}
		got := dst[1+i*tinyWidth:]
		for k := range want[i] {
			if got[k] != want[i][k] {
				t.Fatalf("%q: [%d] = %g, Embed %g", text, k, got[k], want[i][k])
			}
		}
	}
	if dst[0] != 42 || len(dst) != 1+len(tinyTexts)*tinyWidth {
		t.Fatalf("dst prefix or length wrong: %v, %d", dst[0], len(dst))
	}
	buf := make([]float32, 0, tinyWidth)
	allocs := testing.AllocsPerRun(50, func() {
		buf, _ = u.AppendVector(buf[:0], "abc ca zz")
	})
	if allocs != 0 && !raceEnabled {
		t.Errorf("AppendVector allocates %.1f times per call in steady state", allocs)
	}
}
