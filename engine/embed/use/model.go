package use

import (
	"fmt"
	"strconv"
)

// Weight names of the KonaTransformer graph in model.json. The forward pass
// reads every weight by name and checks its shape: a graph that lacks one
// is ErrUnsupported, one of the wrong shape ErrCorrupt.
const (
	apply   = "module_apply_default/Encoder_en/KonaTransformer/"
	encode  = apply + "Encode/"
	stack   = encode + "TransformerStack/"
	varBase = "module/Encoder_en/KonaTransformer/Encode/"

	wEmbeddings = "module/Embeddings_en"
	wInvTime    = stack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"
	wMaxLen     = apply + "ClipToMaxLength/Less/y"
	wLNEpsilon  = stack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"
	wHeads      = stack + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"
	wTanh       = "module/Encoder_en/hidden_layers/tanh_layer_0/weights"
	wTanhBias   = "module/Encoder_en/hidden_layers/tanh_layer_0/bias"
	wL2Epsilon  = "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"
)

// layerNames returns the weight names of transformer layer l.
func layerNames(l int) (n struct {
	lnScale, lnBias, qkv, qkvBias, out, outBias, scale, headDim string
	resid, residBias                                            string
	ffnScale, ffnBias, conv1, conv1Bias, conv2, conv2Bias       string
}) {
	L := "Layer_" + strconv.Itoa(l) + "/TransformerLayer/"
	n.lnScale = encode + L + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"
	n.lnBias = encode + L + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"
	n.qkv = varBase + L + "MultiheadAttention/qkv_transform_single/kernel/part_0"
	n.qkvBias = encode + L + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat"
	n.out = varBase + L + "MultiheadAttention/output_transform_single/kernel/part_0"
	n.outBias = encode + L + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat"
	n.scale = stack + L + "MultiheadAttention/mul/y"
	n.headDim = stack + L + "MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3"
	n.resid = encode + L + "dense/kernel/ConcatPartitions/concat"
	n.residBias = encode + L + "dense/bias/ConcatPartitions/concat"
	n.ffnScale = encode + L + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"
	n.ffnBias = encode + L + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"
	n.conv1 = stack + L + "FFN/conv1/Tensordot/Reshape_1"
	n.conv1Bias = encode + L + "FFN/conv1/bias/ConcatPartitions/concat"
	n.conv2 = stack + L + "FFN/conv2/Tensordot/Reshape_1"
	n.conv2Bias = encode + L + "FFN/conv2/bias/ConcatPartitions/concat"
	return n
}

// linear is y = x W + b with W stored transposed (out rows of in floats),
// so each output is one dot product over a contiguous row.
type linear struct {
	in, out int
	wt      []float32 // out x in
	b       []float32 // out
}

// layer is one KonaTransformer layer (pre-norm):
//
//	r = x                      (or x Wd + bd when the width changes)
//	y = r + MHA(LN(x)) Wo + bo
//	y = y + relu(LN'(y) W1 + b1) W2 + b2
type layer struct {
	width    int // input width
	heads    int
	headDim  int
	scale    float32 // multiplies q before q.k
	lnScale  []float32
	lnBias   []float32
	qkv      linear // width -> 3 width
	out      linear // width -> model width
	resid    *linear
	ffnScale []float32
	ffnBias  []float32
	conv1    linear
	conv2    linear
}

// model is the whole network, read from the weights.
type model struct {
	vocab     int
	embDim    int
	emb       []float32 // vocab x embDim
	invTime   []float32 // embDim/2 inverse timescales
	maxLen    int       // tokens beyond it are dropped
	lnEps     float32
	layers    []layer
	dim       int // output width
	tanh      linear
	l2Epsilon float32
}

type weightReader struct {
	w   map[string]*tensor
	err error
}

func (r *weightReader) get(name string, shape ...int) *tensor {
	if r.err != nil {
		return nil
	}
	t, ok := r.w[name]
	if !ok {
		r.err = fmt.Errorf("%w: model.json: no weight %q: not the USE-lite graph", ErrUnsupported, name)
		return nil
	}
	if len(t.shape) != len(shape) {
		r.err = fmt.Errorf("%w: model.json: weight %q has shape %v, want %v", ErrCorrupt, name, t.shape, shape)
		return nil
	}
	for i, d := range shape {
		if d >= 0 && t.shape[i] != d {
			r.err = fmt.Errorf("%w: model.json: weight %q has shape %v, want %v", ErrCorrupt, name, t.shape, shape)
			return nil
		}
	}
	return t
}

func (r *weightReader) floats(name string, shape ...int) []float32 {
	t := r.get(name, shape...)
	if t == nil {
		return nil
	}
	if t.f == nil {
		r.err = fmt.Errorf("%w: model.json: weight %q is not float32", ErrCorrupt, name)
	}
	return t.f
}

func (r *weightReader) scalarF(name string) float32 {
	f := r.floats(name)
	if len(f) != 1 {
		return 0
	}
	return f[0]
}

func (r *weightReader) scalarI(name string) int {
	t := r.get(name)
	if t == nil {
		return 0
	}
	if len(t.i) != 1 {
		r.err = fmt.Errorf("%w: model.json: weight %q is not an int32 scalar", ErrCorrupt, name)
		return 0
	}
	return int(t.i[0])
}

// has reports whether a weight exists, without recording an error.
func (r *weightReader) has(name string) bool { _, ok := r.w[name]; return ok }

// linear reads a [in, out] kernel (or [1, 1, in, out] for the 1x1
// convolutions) and its bias, and transposes the kernel.
func (r *weightReader) linear(kernel, bias string, conv bool, in, out int) linear {
	var k []float32
	if conv {
		k = r.floats(kernel, 1, 1, in, out)
	} else {
		k = r.floats(kernel, in, out)
	}
	b := r.floats(bias, out)
	if r.err != nil {
		return linear{}
	}
	wt := make([]float32, in*out)
	for i := 0; i < in; i++ {
		row := k[i*out : (i+1)*out]
		for o, v := range row {
			wt[o*in+i] = v
		}
	}
	return linear{in: in, out: out, wt: wt, b: b}
}

// buildModel reads the network from the loaded weights, checking every
// shape against the ones the first layer and the embedding table imply.
func buildModel(w map[string]*tensor) (*model, error) {
	r := &weightReader{w: w}
	m := &model{}
	et := r.get(wEmbeddings, -1, -1)
	if r.err != nil {
		return nil, r.err
	}
	m.vocab, m.embDim = et.shape[0], et.shape[1]
	m.emb = r.floats(wEmbeddings, m.vocab, m.embDim)
	if m.embDim%2 != 0 || m.embDim == 0 || m.vocab == 0 {
		return nil, fmt.Errorf("%w: model.json: embeddings of shape %v", ErrCorrupt, et.shape)
	}
	m.invTime = r.floats(wInvTime, 1, m.embDim/2)
	m.maxLen = r.scalarI(wMaxLen)
	m.lnEps = r.scalarF(wLNEpsilon)
	heads := r.scalarI(wHeads)
	m.l2Epsilon = r.scalarF(wL2Epsilon)
	if r.err != nil {
		return nil, r.err
	}
	if m.maxLen < 1 || m.maxLen > 1<<16 {
		return nil, fmt.Errorf("%w: model.json: max length %d", ErrCorrupt, m.maxLen)
	}
	width := m.embDim
	for l := 0; ; l++ {
		n := layerNames(l)
		if !r.has(n.qkv) {
			if l == 0 {
				return nil, fmt.Errorf("%w: model.json: no weight %q: not the USE-lite graph", ErrUnsupported, n.qkv)
			}
			break
		}
		r.get(n.qkv, 1, 1, width, 3*width) // checks the shape
		ot := r.get(n.out, 1, 1, width, -1)
		if r.err != nil {
			return nil, r.err
		}
		outDim := ot.shape[3]
		ly := layer{width: width, heads: heads}
		ly.headDim = r.scalarI(n.headDim)
		ly.scale = r.scalarF(n.scale)
		if r.err != nil {
			return nil, r.err
		}
		if ly.heads < 1 || ly.headDim < 1 || ly.heads*ly.headDim != width {
			return nil, fmt.Errorf("%w: model.json: layer %d: %d heads of %d for width %d", ErrCorrupt, l, ly.heads, ly.headDim, width)
		}
		ly.lnScale = r.floats(n.lnScale, width)
		ly.lnBias = r.floats(n.lnBias, width)
		ly.qkv = r.linear(n.qkv, n.qkvBias, true, width, 3*width)
		ly.out = r.linear(n.out, n.outBias, true, width, outDim)
		if outDim != width || r.has(n.resid) {
			res := r.linear(n.resid, n.residBias, false, width, outDim)
			ly.resid = &res
		}
		ly.ffnScale = r.floats(n.ffnScale, outDim)
		ly.ffnBias = r.floats(n.ffnBias, outDim)
		ct := r.get(n.conv1, outDim, -1)
		if r.err != nil {
			return nil, r.err
		}
		hidden := ct.shape[1]
		ly.conv1 = r.linear(n.conv1, n.conv1Bias, false, outDim, hidden)
		ly.conv2 = r.linear(n.conv2, n.conv2Bias, false, hidden, outDim)
		if r.err != nil {
			return nil, r.err
		}
		m.layers = append(m.layers, ly)
		width = outDim
	}
	m.dim = width
	m.tanh = r.linear(wTanh, wTanhBias, false, width, width)
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}
