package use

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/lazymem/lazymem/vecmath"
)

// blockBytes is the size of the slice of a weight matrix that one pass
// over a batch's tokens keeps hot in cache: every token's row is
// multiplied by it before the next slice is loaded, so the weights stream
// from memory once per batch instead of once per token.
var blockBytes = 96 << 10 // a variable so tests can force many blocks

// tokenChunk is how many tokens' rows one vecmath.MatMulT call multiplies
// by a weight block: 64 rows of 512 floats (128 KB) stay in L2 beside the
// block, and the scratch for the products stays small.
const tokenChunk = 64

// work holds one forward pass's buffers; a pool keeps one per worker.
type work struct {
	x, h, qkv, ctx, f []float32
	tmp               []float32
	tmps              [][]float32 // one per part of a split apply
	par               int         // goroutines apply may use; <= 1: none
	q, keys, vals     []float32
	scores            []float32
	pooled            []float64
	row               []float32
	spans             []span
	ids               []int32
	one               [1][]float32
	tok               tokScratch
}

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// span is one text's tokens within a batch: rows [start, start+n).
type span struct{ start, n int }

// minParallelMACs is the smallest matrix product apply splits across
// goroutines (about 50 us of work): below it, waking another thread costs
// more than it saves.
var minParallelMACs = 1 << 21 // a variable so tests can force the split

// apply computes dst = x W + b for rows tokens of x (lin.in floats each):
// with add, dst += x W + b (the residual connection). dst has lin.out
// floats per row. With w.par > 1 the output columns are split, by weight
// block, across w.par goroutines (the caller runs the first part); every
// output is computed as in the sequential loop, so the result is the same
// bit for bit.
func (w *work) apply(dst, x []float32, rows int, lin *linear, add bool) error {
	in, out := lin.in, lin.out
	nb := blockBytes / (4 * in)
	nb = max(4, nb&^3)
	blocks := (out + nb - 1) / nb
	par := min(w.par, blocks)
	if par <= 1 || rows*in*out < minParallelMACs {
		w.tmp = grow32(w.tmp, min(rows, tokenChunk)*min(nb, out))
		return applyBlocks(dst, x, rows, lin, add, nb, 0, out, w.tmp)
	}
	return w.applyParallel(dst, x, rows, lin, add, nb, blocks, par)
}

// applyParallel is apply split across par goroutines. It is a function of
// its own so that the sequential path's arguments do not escape to the heap.
func (w *work) applyParallel(dst, x []float32, rows int, lin *linear, add bool, nb, blocks, par int) error {
	out := lin.out
	for len(w.tmps) < par {
		w.tmps = append(w.tmps, nil)
	}
	errs := make([]error, par)
	var wg sync.WaitGroup
	for p := par - 1; p >= 0; p-- {
		// Part p gets blocks [p*blocks/par, (p+1)*blocks/par).
		lo := min(p*blocks/par*nb, out)
		hi := min((p+1)*blocks/par*nb, out)
		w.tmps[p] = grow32(w.tmps[p], min(rows, tokenChunk)*min(nb, out))
		tmp := w.tmps[p]
		if p == 0 {
			errs[0] = applyBlocks(dst, x, rows, lin, add, nb, lo, hi, tmp)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = applyBlocks(dst, x, rows, lin, add, nb, lo, hi, tmp)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// applyBlocks is apply over the output columns [lo, hi), nb at a time.
// Within a block, tokens go through vecmath.MatMulT tokenChunk at a time,
// so each weight vector loaded into a register serves several tokens;
// MatMulT's results depend only on the token's row and the weight row, so
// batching still changes no bit.
func applyBlocks(dst, x []float32, rows int, lin *linear, add bool, nb, lo, hi int, tmpBuf []float32) error {
	in, out := lin.in, lin.out
	for o0 := lo; o0 < hi; o0 += nb {
		o1 := min(o0+nb, hi)
		nr := o1 - o0
		blk := lin.wt[o0*in : o1*in]
		bias := lin.b[o0:o1]
		for t0 := 0; t0 < rows; t0 += tokenChunk {
			t1 := min(t0+tokenChunk, rows)
			tmp := tmpBuf[:(t1-t0)*nr]
			if err := vecmath.MatMulT(x[t0*in:t1*in], t1-t0, blk, nr, in, tmp); err != nil {
				return fmt.Errorf("lazymem: use: %w", err)
			}
			for t := t0; t < t1; t++ {
				d := dst[t*out+o0 : t*out+o1]
				r := tmp[(t-t0)*nr : (t-t0+1)*nr]
				if add {
					for j, v := range r {
						d[j] += v + bias[j]
					}
				} else {
					for j, v := range r {
						d[j] = v + bias[j]
					}
				}
			}
		}
	}
	return nil
}

// layerNorm writes scale * (x - mean) / sqrt(var + eps) + bias for each
// row of width floats, as the graph computes it.
func layerNorm(dst, x []float32, rows, width int, scale, bias []float32, eps float32) {
	for t := 0; t < rows; t++ {
		r := x[t*width : (t+1)*width]
		d := dst[t*width : (t+1)*width]
		var s float64
		for _, v := range r {
			s += float64(v)
		}
		mean := float32(s / float64(width))
		var ss float64
		for _, v := range r {
			c := v - mean
			ss += float64(c * c)
		}
		variance := float32(ss / float64(width))
		rs := float32(1 / math.Sqrt(float64(variance+eps)))
		for i, v := range r {
			d[i] = scale[i]*rs*(v-mean) + bias[i]
		}
	}
}

// attention runs multi-head self-attention over each text of the batch
// separately (a text attends to its own tokens only, which is what the
// graph's padding mask achieves), reading q, k and v from w.qkv and
// writing the heads side by side into w.ctx.
func (w *work) attention(ly *layer, spans []span) error {
	width, hd := ly.width, ly.headDim
	stride := 3 * width
	w.q = grow32(w.q, hd)
	for _, sp := range spans {
		if sp.n == 0 {
			continue
		}
		w.keys = grow32(w.keys, sp.n*hd)
		w.vals = grow32(w.vals, sp.n*hd)
		w.scores = grow32(w.scores, sp.n)
		for h := 0; h < ly.heads; h++ {
			// Keys row by row, values transposed (one row per
			// dimension), so both products are DotBatch calls.
			n := sp.n
			for j := 0; j < n; j++ {
				row := w.qkv[(sp.start+j)*stride:]
				copy(w.keys[j*hd:(j+1)*hd], row[width+h*hd:width+(h+1)*hd])
				for d, v := range row[2*width+h*hd : 2*width+(h+1)*hd] {
					w.vals[d*n+j] = v
				}
			}
			for i := 0; i < sp.n; i++ {
				qrow := w.qkv[(sp.start+i)*stride+h*hd:]
				for d := range w.q {
					w.q[d] = qrow[d] * ly.scale
				}
				if err := vecmath.DotBatch(w.q, w.keys, hd, w.scores); err != nil {
					return fmt.Errorf("lazymem: use: %w", err)
				}
				softmax(w.scores)
				c := w.ctx[(sp.start+i)*width+h*hd : (sp.start+i)*width+(h+1)*hd]
				if err := vecmath.DotBatch(w.scores, w.vals, n, c); err != nil {
					return fmt.Errorf("lazymem: use: %w", err)
				}
			}
		}
	}
	return nil
}

// softmax replaces s by exp(s - max) / sum.
func softmax(s []float32) {
	mx := s[0]
	for _, v := range s[1:] {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range s {
		e := float32(math.Exp(float64(v - mx)))
		s[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range s {
		s[i] *= inv
	}
}

// forward embeds the texts whose ids are concatenated in ids, spans giving
// each text's rows, and writes one model.dim vector per text to out.
func (m *model) forward(w *work, ids []int32, spans []span, out [][]float32) error {
	rows := len(ids)
	maxW := m.embDim
	maxF := 0
	for i := range m.layers {
		maxW = max(maxW, m.layers[i].width, m.layers[i].out.out)
		maxF = max(maxF, m.layers[i].conv1.out)
	}
	w.x = grow32(w.x, rows*maxW)
	w.h = grow32(w.h, rows*maxW)
	w.ctx = grow32(w.ctx, rows*maxW)
	w.qkv = grow32(w.qkv, rows*3*maxW)
	w.f = grow32(w.f, rows*maxF)

	// Input: the graph adds the embedding twice (AddTimingSignal returns
	// embedding + signal, and Layer_0/add adds that to the embedding
	// again), then runs the stack.
	half := m.embDim / 2
	for _, sp := range spans {
		for p := 0; p < sp.n; p++ {
			id := ids[sp.start+p]
			e := m.emb[int(id)*m.embDim : (int(id)+1)*m.embDim]
			x := w.x[(sp.start+p)*m.embDim : (sp.start+p+1)*m.embDim]
			fp := float32(p)
			for k := 0; k < half; k++ {
				a := float64(fp * m.invTime[k])
				x[k] = e[k] + (e[k] + float32(math.Sin(a)))
				x[half+k] = e[half+k] + (e[half+k] + float32(math.Cos(a)))
			}
		}
	}

	for li := range m.layers {
		ly := &m.layers[li]
		width, outW := ly.width, ly.out.out
		layerNorm(w.h, w.x, rows, width, ly.lnScale, ly.lnBias, m.lnEps)
		if err := w.apply(w.qkv, w.h, rows, &ly.qkv, false); err != nil {
			return err
		}
		if err := w.attention(ly, spans); err != nil {
			return err
		}
		// The residual stream y lives in w.h once LN(x) is consumed.
		y := w.h[:rows*outW]
		if ly.resid != nil {
			if err := w.apply(y, w.x, rows, ly.resid, false); err != nil {
				return err
			}
		} else {
			copy(y, w.x[:rows*width])
		}
		if err := w.apply(y, w.ctx, rows, &ly.out, true); err != nil {
			return err
		}
		// FFN on LN'(y), added to y; the result becomes the next x.
		x := w.x[:rows*outW]
		layerNorm(x, y, rows, outW, ly.ffnScale, ly.ffnBias, m.lnEps)
		if err := w.apply(w.f, x, rows, &ly.conv1, false); err != nil {
			return err
		}
		for i, v := range w.f[:rows*ly.conv1.out] {
			w.f[i] = max(v, 0)
		}
		if err := w.apply(y, w.f, rows, &ly.conv2, true); err != nil {
			return err
		}
		copy(x, y)
	}

	// Mean over each text's tokens, tanh layer, L2 normalization.
	w.pooled = w.pooled[:0]
	for range m.dim {
		w.pooled = append(w.pooled, 0)
	}
	w.row = grow32(w.row, m.dim)
	for si, sp := range spans {
		clear(w.pooled)
		for p := 0; p < sp.n; p++ {
			r := w.x[(sp.start+p)*m.dim : (sp.start+p+1)*m.dim]
			for k, v := range r {
				w.pooled[k] += float64(v)
			}
		}
		div := float64(max(sp.n, 1))
		for k := range w.row {
			w.row[k] = float32(w.pooled[k] / div)
		}
		v := out[si]
		if err := w.apply(v, w.row, 1, &m.tanh, false); err != nil {
			return err
		}
		var ss float64
		for k, a := range v {
			t := float32(math.Tanh(float64(a)))
			v[k] = t
			ss += float64(t * t)
		}
		rs := float32(1 / math.Sqrt(max(ss, float64(m.l2Epsilon))))
		for k := range v {
			v[k] *= rs
		}
	}
	return nil
}
