// Command asm generates vecmath's amd64 kernels with avo.
//
// Run from vecmath/ with `go generate` (see gen.go there), or by hand:
//
//	cd vecmath/_asm && go run . -out ../dot_amd64.s -pkg vecmath
//
// Two tiers are emitted from the same templates: AVX-512F (ZMM, 16 lanes, 8
// accumulators, masked tail loads and stores) and AVX2+FMA (YMM, 8 lanes, 4
// accumulators, scalar tail; F16C for the binary16 kernel). Independent
// accumulators hide the FMA latency (4 cycles) behind the two load ports, and
// no kernel reads or writes outside its slices.
//
// The generated code only ever uses X0-X15 / Y0-Y15 in VEX (128/256-bit)
// instructions, so the AVX-512 tier needs F only, not VL; vecmath's tests check
// this on the generated file.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// tier describes one instruction-set level.
type tier struct {
	name   string // suffix of the Go function names
	lanes  int    // float32 lanes in one vector register
	unroll int    // vectors (and accumulators) per main-loop iteration
	vec    func() VecVirtual
	masked bool // AVX-512: masked loads for the tail instead of a scalar loop
}

// zero clears v. VXORPS on ZMM needs AVX512DQ; VPXORD needs only F.
func (t tier) zero(v VecVirtual) {
	if t.lanes == 16 {
		VPXORD(v, v, v)
		return
	}
	VXORPS(v, v, v)
}

// AVX-512 runs 8 accumulators: measured on the dev machine, dot at 1536-d
// went from 45 to 43 cpu-ns with 8 instead of 4 (39.5 once b became the FMA's
// memory operand). AVX2 stays at 4: cosineSums needs 3 accumulators per slot
// and AVX2 has only 16 YMM registers.
var tiers = []tier{
	{name: "AVX512", lanes: 16, unroll: 8, vec: ZMM, masked: true},
	{name: "AVX2", lanes: 8, unroll: 4, vec: YMM, masked: false},
}

func main() {
	ConstraintExpr("!purego")
	for _, t := range tiers {
		genDot(t)
		genSquaredL2(t)
		genCosineSums(t)
		genScale(t)
		genDotBatch4(t)
		genDotF16(t)
	}
	for _, ar := range []int{4, 1} {
		for _, br := range []int{4, 1} {
			genMatMulT(ar, br)
		}
	}
	for _, ar := range []int{2, 1} {
		for _, br := range []int{4, 1} {
			genMatMulTAVX2(ar, br)
		}
	}
	Generate()
}

// op is the per-element body shared by the reductions: given register loads
// of a and b (both full vectors, or both masked/zeroed in the tail), it
// accumulates into accs (one accumulator per output of the kernel).
type op struct {
	outputs int
	// memB: vec may take b as a memory operand (it reads b once).
	memB bool
	// vector body; a and b are loaded registers; accs has one reg per output.
	vec func(a VecVirtual, b Op, accs []VecVirtual)
	// scalar body for the AVX2 tail (xmm registers, low lane only).
	scalar func(a, b VecVirtual, accs []VecVirtual)
}

var dotOp = op{
	outputs: 1,
	memB:    true,
	vec:     func(a VecVirtual, b Op, accs []VecVirtual) { VFMADD231PS(b, a, accs[0]) },
	scalar:  func(a, b VecVirtual, accs []VecVirtual) { VFMADD231SS(b, a, accs[0]) },
}

var l2Op = op{
	outputs: 1,
	memB:    true,
	vec: func(a VecVirtual, b Op, accs []VecVirtual) {
		VSUBPS(b, a, a)
		VFMADD231PS(a, a, accs[0])
	},
	scalar: func(a, b VecVirtual, accs []VecVirtual) {
		VSUBSS(b, a, a)
		VFMADD231SS(a, a, accs[0])
	},
}

var cosOp = op{
	outputs: 3,
	vec: func(a VecVirtual, b Op, accs []VecVirtual) {
		VFMADD231PS(b, a, accs[0])
		VFMADD231PS(a, a, accs[1])
		VFMADD231PS(b, b, accs[2])
	},
	scalar: func(a, b VecVirtual, accs []VecVirtual) {
		VFMADD231SS(b, a, accs[0])
		VFMADD231SS(a, a, accs[1])
		VFMADD231SS(b, b, accs[2])
	},
}

func genDot(t tier) {
	TEXT("dot"+t.name, NOSPLIT, "func(a, b []float32) float32")
	Doc(fmt.Sprintf("dot%s returns sum(a[i]*b[i]) over len(a); len(b) >= len(a).", t.name))
	sums := reduce2(t, dotOp)
	Store(sums[0], ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func genSquaredL2(t tier) {
	TEXT("squaredL2"+t.name, NOSPLIT, "func(a, b []float32) float32")
	Doc(fmt.Sprintf("squaredL2%s returns sum((a[i]-b[i])^2) over len(a); len(b) >= len(a).", t.name))
	sums := reduce2(t, l2Op)
	Store(sums[0], ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func genCosineSums(t tier) {
	TEXT("cosineSums"+t.name, NOSPLIT, "func(a, b []float32) (ab, aa, bb float32)")
	Doc(fmt.Sprintf("cosineSums%s returns sum(a*b), sum(a*a), sum(b*b) over len(a) in one pass.", t.name))
	sums := reduce2(t, cosOp)
	for i := range sums {
		Store(sums[i], ReturnIndex(i))
	}
	VZEROUPPER()
	RET()
}

// reduce2 emits a two-input reduction over len(a) elements and returns one
// xmm register per output holding the scalar result in its low lane.
func reduce2(t tier, o op) []VecVirtual {
	a := Mem{Base: Load(Param("a").Base(), GP64())}
	b := Mem{Base: Load(Param("b").Base(), GP64())}
	n := GP64()
	Load(Param("a").Len(), n)

	vb := 4 * t.lanes // bytes per vector
	// accs[u][k]: accumulator of output k for unroll slot u.
	accs := make([][]VecVirtual, t.unroll)
	for u := range accs {
		accs[u] = make([]VecVirtual, o.outputs)
		for k := range accs[u] {
			accs[u][k] = t.vec()
			t.zero(accs[u][k])
		}
	}

	block := t.lanes * t.unroll
	Label("block")
	CMPQ(n, U32(block))
	JL(LabelRef("single"))
	// Loads interleaved with the arithmetic keep register pressure low
	// enough for the 16 YMM registers of AVX2 even in cosineSums (12
	// accumulators); the out-of-order core reorders them anyway.
	for u := 0; u < t.unroll; u++ {
		xa := t.vec()
		VMOVUPS(a.Offset(vb*u), xa)
		if o.memB {
			// b as the instruction's memory operand: load and arithmetic
			// issue as one fused uop.
			o.vec(xa, b.Offset(vb*u), accs[u])
			continue
		}
		xb := t.vec()
		VMOVUPS(b.Offset(vb*u), xb)
		o.vec(xa, xb, accs[u])
	}
	ADDQ(U32(vb*t.unroll), a.Base)
	ADDQ(U32(vb*t.unroll), b.Base)
	SUBQ(U32(block), n)
	JMP(LabelRef("block"))

	// Whole vectors left over (fewer than unroll of them).
	Label("single")
	CMPQ(n, U32(t.lanes))
	JL(LabelRef("tail"))
	sa, sb := t.vec(), t.vec()
	VMOVUPS(a, sa)
	VMOVUPS(b, sb)
	o.vec(sa, sb, accs[0])
	ADDQ(U32(vb), a.Base)
	ADDQ(U32(vb), b.Base)
	SUBQ(U32(t.lanes), n)
	JMP(LabelRef("single"))

	// Fold the unroll slots pairwise, (acc0+acc1)+(acc2+acc3), before the
	// tail so that the scalar tail has registers to spare.
	Label("tail")
	for k := 0; k < o.outputs; k++ {
		for step := 1; step < t.unroll; step *= 2 {
			for u := 0; u+step < t.unroll; u += 2 * step {
				VADDPS(accs[u+step][k], accs[u][k], accs[u][k])
			}
		}
	}
	// Fewer than lanes elements left.
	var scalarTail []VecVirtual
	if t.masked {
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		m := GP32()
		MOVL(U32(0xffff), m)
		BZHIL(n.As32(), m, m)
		k := K()
		KMOVW(m, k)
		ta, tb := t.vec(), t.vec()
		VMOVUPS_Z(a, k, ta)
		VMOVUPS_Z(b, k, tb)
		o.vec(ta, tb, accs[0])
	} else {
		scalarTail = make([]VecVirtual, o.outputs)
		for k := range scalarTail {
			scalarTail[k] = XMM()
			VXORPS(scalarTail[k], scalarTail[k], scalarTail[k])
		}
		Label("tailloop")
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		ta, tb := XMM(), XMM()
		VMOVSS(a, ta)
		VMOVSS(b, tb)
		o.scalar(ta, tb, scalarTail)
		ADDQ(U32(4), a.Base)
		ADDQ(U32(4), b.Base)
		DECQ(n)
		JMP(LabelRef("tailloop"))
	}

	Label("reduce")
	out := make([]VecVirtual, o.outputs)
	for k := 0; k < o.outputs; k++ {
		out[k] = hsum(t, accs[0][k])
		if scalarTail != nil {
			VADDSS(scalarTail[k], out[k], out[k])
		}
	}
	return out
}

// hsum reduces all lanes of v to the low lane of the returned xmm register.
func hsum(t tier, v VecVirtual) VecVirtual {
	y := v
	if t.lanes == 16 {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		VADDPS(hi, v.AsY(), hi)
		y = hi
	}
	x := XMM()
	VEXTRACTF128(U8(1), y, x)
	VADDPS(y.AsX(), x, x)
	h := XMM()
	VMOVHLPS(x, x, h)
	VADDPS(h, x, x)
	VMOVSHDUP(x, h)
	VADDSS(h, x, x)
	return x
}

func genScale(t tier) {
	TEXT("scale"+t.name, NOSPLIT, "func(a []float32, s float32)")
	Doc(fmt.Sprintf("scale%s multiplies every element of a by s in place.", t.name))
	a := Mem{Base: Load(Param("a").Base(), GP64())}
	n := GP64()
	Load(Param("a").Len(), n)
	sx := XMM()
	Load(Param("s"), sx)
	s := t.vec()
	VBROADCASTSS(sx, s)
	vb := 4 * t.lanes
	block := t.lanes * t.unroll

	Label("block")
	CMPQ(n, U32(block))
	JL(LabelRef("single"))
	xs := make([]VecVirtual, t.unroll)
	for u := range xs {
		xs[u] = t.vec()
		VMULPS(a.Offset(vb*u), s, xs[u])
	}
	for u := range xs {
		VMOVUPS(xs[u], a.Offset(vb*u))
	}
	ADDQ(U32(vb*t.unroll), a.Base)
	SUBQ(U32(block), n)
	JMP(LabelRef("block"))

	Label("single")
	CMPQ(n, U32(t.lanes))
	JL(LabelRef("tail"))
	x := t.vec()
	VMULPS(a, s, x)
	VMOVUPS(x, a)
	ADDQ(U32(vb), a.Base)
	SUBQ(U32(t.lanes), n)
	JMP(LabelRef("single"))

	Label("tail")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	if t.masked {
		m := GP32()
		MOVL(U32(0xffff), m)
		BZHIL(n.As32(), m, m)
		k := K()
		KMOVW(m, k)
		tx := t.vec()
		VMOVUPS_Z(a, k, tx)
		VMULPS(tx, s, tx)
		VMOVUPS(tx, k, a) // merge-masked store: lanes >= n untouched
	} else {
		Label("tailloop")
		tx := XMM()
		VMULSS(a, sx, tx)
		VMOVSS(tx, a)
		ADDQ(U32(4), a.Base)
		DECQ(n)
		JNZ(LabelRef("tailloop"))
	}
	Label("done")
	VZEROUPPER()
	RET()
}

// genDotBatch4 scores q against rows of flat four at a time, so each q vector
// is loaded once per four rows. len(out) must be a multiple of 4 and
// len(flat) >= len(out)*len(q); the Go wrapper handles the remainder rows.
func genDotBatch4(t tier) {
	TEXT("dotBatch4"+t.name, NOSPLIT, "func(q, flat, out []float32)")
	Doc(fmt.Sprintf("dotBatch4%s sets out[r] = dot(q, flat[r*len(q):(r+1)*len(q)]) for len(out) rows, len(out) a multiple of 4.", t.name))
	qbase := Load(Param("q").Base(), GP64())
	dim := GP64()
	Load(Param("q").Len(), dim)
	row := Load(Param("flat").Base(), GP64())
	outp := Load(Param("out").Base(), GP64())
	rows := Load(Param("out").Len(), GP64())
	stride := GP64() // bytes per row
	MOVQ(dim, stride)
	SHLQ(U8(2), stride)

	var k Register
	if t.masked {
		// Tail mask is the same for every row: dim % lanes low bits.
		m := GP32()
		MOVL(dim.As32(), m)
		ANDL(U32(t.lanes-1), m)
		mm := GP32()
		MOVL(U32(0xffff), mm)
		BZHIL(m, mm, mm)
		k = K()
		KMOVW(mm, k)
	}

	vb := 4 * t.lanes
	Label("rowloop")
	CMPQ(rows, U32(4))
	JL(LabelRef("done"))
	// r1..r3 point at rows 1..3 (row 0 is `row`).
	r := [4]GPVirtual{GP64(), GP64(), GP64(), GP64()}
	MOVQ(row, r[0])
	for i := 1; i < 4; i++ {
		LEAQ(Mem{Base: r[i-1], Index: stride, Scale: 1}, r[i])
	}
	q := GP64()
	MOVQ(qbase, q)
	n := GP64()
	MOVQ(dim, n)
	// Two accumulators per row hide FMA latency.
	var acc [4][2]VecVirtual
	for i := range acc {
		for j := range acc[i] {
			acc[i][j] = t.vec()
			t.zero(acc[i][j])
		}
	}
	Label("pair")
	CMPQ(n, U32(2*t.lanes))
	JL(LabelRef("one"))
	for j := 0; j < 2; j++ {
		qv := t.vec()
		VMOVUPS(Mem{Base: q, Disp: vb * j}, qv)
		for i := 0; i < 4; i++ {
			VFMADD231PS(Mem{Base: r[i], Disp: vb * j}, qv, acc[i][j])
		}
	}
	ADDQ(U32(2*vb), q)
	for i := 0; i < 4; i++ {
		ADDQ(U32(2*vb), r[i])
	}
	SUBQ(U32(2*t.lanes), n)
	JMP(LabelRef("pair"))

	Label("one")
	CMPQ(n, U32(t.lanes))
	JL(LabelRef("tail"))
	qv := t.vec()
	VMOVUPS(Mem{Base: q}, qv)
	for i := 0; i < 4; i++ {
		VFMADD231PS(Mem{Base: r[i]}, qv, acc[i][0])
	}
	ADDQ(U32(vb), q)
	for i := 0; i < 4; i++ {
		ADDQ(U32(vb), r[i])
	}
	SUBQ(U32(t.lanes), n)

	Label("tail")
	var tails [4]VecVirtual
	if t.masked {
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		qt := t.vec()
		VMOVUPS_Z(Mem{Base: q}, k, qt)
		for i := 0; i < 4; i++ {
			rt := t.vec()
			VMOVUPS_Z(Mem{Base: r[i]}, k, rt)
			VFMADD231PS(rt, qt, acc[i][1])
		}
	} else {
		for i := range tails {
			tails[i] = XMM()
			VXORPS(tails[i], tails[i], tails[i])
		}
		Label("tailloop")
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		qt := XMM()
		VMOVSS(Mem{Base: q}, qt)
		for i := 0; i < 4; i++ {
			VFMADD231SS(Mem{Base: r[i]}, qt, tails[i])
		}
		ADDQ(U32(4), q)
		for i := 0; i < 4; i++ {
			ADDQ(U32(4), r[i])
		}
		DECQ(n)
		JMP(LabelRef("tailloop"))
	}

	Label("reduce")
	for i := 0; i < 4; i++ {
		VADDPS(acc[i][1], acc[i][0], acc[i][0])
		x := hsum(t, acc[i][0])
		if !t.masked {
			VADDSS(tails[i], x, x)
		}
		VMOVSS(x, Mem{Base: outp, Disp: 4 * i})
	}
	ADDQ(U32(16), outp)
	LEAQ(Mem{Base: row, Index: stride, Scale: 4}, row)
	SUBQ(U32(4), rows)
	JMP(LabelRef("rowloop"))

	Label("done")
	VZEROUPPER()
	RET()
}

// genDotF16 emits dot(q, float32(h)) for h in IEEE binary16, widening with
// VCVTPH2PS (F16C for YMM, AVX-512F for ZMM) as the halves are loaded.
func genDotF16(t tier) {
	TEXT("dotF16"+t.name, NOSPLIT, "func(q []float32, h []uint16) float32")
	Doc(fmt.Sprintf("dotF16%s returns sum(q[i]*float32(h[i])) over len(q); len(h) >= len(q).", t.name))
	q := Mem{Base: Load(Param("q").Base(), GP64())}
	h := Mem{Base: Load(Param("h").Base(), GP64())}
	n := GP64()
	Load(Param("q").Len(), n)
	vb := 4 * t.lanes // bytes of float32 per vector
	hb := 2 * t.lanes // bytes of float16 per vector
	acc := make([]VecVirtual, t.unroll)
	for u := range acc {
		acc[u] = t.vec()
		t.zero(acc[u])
	}
	block := t.lanes * t.unroll
	Label("block")
	CMPQ(n, U32(block))
	JL(LabelRef("single"))
	for u := 0; u < t.unroll; u++ {
		x := t.vec()
		VCVTPH2PS(h.Offset(hb*u), x)
		VFMADD231PS(q.Offset(vb*u), x, acc[u])
	}
	ADDQ(U32(vb*t.unroll), q.Base)
	ADDQ(U32(hb*t.unroll), h.Base)
	SUBQ(U32(block), n)
	JMP(LabelRef("block"))

	Label("single")
	CMPQ(n, U32(t.lanes))
	JL(LabelRef("tail"))
	x := t.vec()
	VCVTPH2PS(h, x)
	VFMADD231PS(q, x, acc[0])
	ADDQ(U32(vb), q.Base)
	ADDQ(U32(hb), h.Base)
	SUBQ(U32(t.lanes), n)
	JMP(LabelRef("single"))

	Label("tail")
	for step := 1; step < t.unroll; step *= 2 {
		for u := 0; u+step < t.unroll; u += 2 * step {
			VADDPS(acc[u+step], acc[u], acc[u])
		}
	}
	var tail VecVirtual
	if t.masked {
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		m := GP32()
		MOVL(U32(0xffff), m)
		BZHIL(n.As32(), m, m)
		k := K()
		KMOVW(m, k)
		tx, tq := t.vec(), t.vec()
		VCVTPH2PS_Z(h, k, tx)
		VMOVUPS_Z(q, k, tq)
		VFMADD231PS(tq, tx, acc[0])
	} else {
		tail = XMM()
		VXORPS(tail, tail, tail)
		Label("tailloop")
		TESTQ(n, n)
		JZ(LabelRef("reduce"))
		w := GP32()
		MOVWLZX(h, w)
		tx := XMM()
		VMOVD(w, tx)
		VCVTPH2PS(tx, tx)
		VFMADD231SS(q, tx, tail)
		ADDQ(U32(4), q.Base)
		ADDQ(U32(2), h.Base)
		DECQ(n)
		JMP(LabelRef("tailloop"))
	}
	Label("reduce")
	r := hsum(t, acc[0])
	if tail != nil {
		VADDSS(tail, r, r)
	}
	Store(r, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// genMatMulT emits the AVX-512 register-blocked product out[i*ldo+j] =
// dot(a row i, b row j) for i < m, j < n (m a multiple of ar, n of br, rows
// of dim floats), ar rows of a by br rows of b at a time. The 4x4 kernel
// does the work; 1x4, 4x1 and 1x1 cover the edges with the same
// per-result summation order (one 16-lane accumulator over dim, masked
// tail, the same reduction tree), so each result depends only on its two
// rows, never on where they sit in the matrices. Each step over dim loads 4 vectors of a and 4 of b into
// registers and issues 16 FMAs into 16 accumulators (4 a rows x 4 b rows),
// so every loaded vector is used four times: DotBatch reloads each b row
// once per a row. 24 of the 32 ZMM registers are live in the loop. The
// accumulators are reduced with ZMM-only shuffles (AVX-512F; no X/Y
// registers, so none above 15 can appear in a VEX instruction) and each
// group of four results is stored with a 4-lane mask.
func genMatMulT(ar, br int) {
	name := fmt.Sprintf("matMulT%dx%dAVX512", ar, br)
	TEXT(name, NOSPLIT, "func(a, b, out []float32, m, n, dim, ldo int)")
	Doc(fmt.Sprintf("%s sets out[i*ldo+j] = dot(a[i*dim:], b[j*dim:]) over dim floats for i < m, j < n; m is a multiple of %d, n of %d.", name, ar, br))
	stride := GP64()
	Load(Param("dim"), stride)
	// Tail mask: dim % 16 low bits; store mask: 4 lanes.
	tm := GP32()
	MOVL(stride.As32(), tm)
	ANDL(U32(15), tm)
	mm := GP32()
	MOVL(U32(0xffff), mm)
	BZHIL(tm, mm, mm)
	kt := K()
	KMOVW(mm, kt)
	m4 := GP32()
	MOVL(U32(1<<br-1), m4)
	k4 := K()
	KMOVW(m4, k4)
	f := matMulLoops(stride, ar, br)
	row, ap, bp, k, outp := f.row, f.ap, f.bp, f.k, f.outp
	var acc [4][4]VecVirtual
	for i := 0; i < ar; i++ {
		for j := 0; j < br; j++ {
			acc[i][j] = ZMM()
			VPXORD(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	Label("kloop")
	CMPQ(k, U32(16))
	JL(LabelRef("ktail"))
	var av, bv [4]VecVirtual
	for i := 0; i < ar; i++ {
		av[i] = ZMM()
		VMOVUPS(row(ap, i), av[i])
	}
	for j := 0; j < br; j++ {
		bv[j] = ZMM()
		VMOVUPS(row(bp, j), bv[j])
		for i := 0; i < ar; i++ {
			VFMADD231PS(bv[j], av[i], acc[i][j])
		}
	}
	ADDQ(U32(64), ap)
	ADDQ(U32(64), bp)
	SUBQ(U32(16), k)
	JMP(LabelRef("kloop"))

	Label("ktail")
	TESTQ(k, k)
	JZ(LabelRef("reduce"))
	var at, bt [4]VecVirtual
	for i := 0; i < ar; i++ {
		at[i] = ZMM()
		VMOVUPS_Z(row(ap, i), kt, at[i])
	}
	for j := 0; j < br; j++ {
		bt[j] = ZMM()
		VMOVUPS_Z(row(bp, j), kt, bt[j])
		for i := 0; i < ar; i++ {
			VFMADD231PS(bt[j], at[i], acc[i][j])
		}
	}

	Label("reduce")
	ldo := GP64()
	Load(Param("ldo"), ldo)
	SHLQ(U8(2), ldo)
	op := GP64()
	MOVQ(outp, op)
	for i := 0; i < ar; i++ {
		v := acc[i]
		if br == 1 {
			// Every lane of the tree is independent: reducing four
			// copies gives acc's sum in lane 0 by the same additions.
			v = [4]VecVirtual{acc[i][0], acc[i][0], acc[i][0], acc[i][0]}
		}
		r := reduce4(v)
		VMOVUPS(r, k4, Mem{Base: op})
		if i < ar-1 {
			ADDQ(ldo, op)
		}
	}
	f.next(ldo)
}

// matMulFrame is the loop nest shared by the MatMulT kernels: columns of
// br rows of b (jloop), inside them blocks of ar rows of a (iloop), inside
// those the k loop each kernel writes between matMulLoops and next.
type matMulFrame struct {
	ar, br                           int
	stride, s3                       GPVirtual // bytes per row, 3x that
	bRow, outCol, nLeft, aRow, mLeft GPVirtual
	ap, bp, k, outp                  GPVirtual // per block
}

// matMulLoops turns stride (holding dim) into bytes per row and emits the
// heads of jloop and iloop, up to k = dim for the block's k loop.
func matMulLoops(stride GPVirtual, ar, br int) *matMulFrame {
	f := &matMulFrame{ar: ar, br: br, stride: stride}
	SHLQ(U8(2), stride) // bytes per row
	f.s3 = GP64()
	LEAQ(Mem{Base: stride, Index: stride, Scale: 2}, f.s3)

	f.bRow, f.outCol, f.nLeft = GP64(), GP64(), GP64()
	Load(Param("b").Base(), f.bRow)
	Load(Param("out").Base(), f.outCol)
	Load(Param("n"), f.nLeft)
	Label("jloop")
	CMPQ(f.nLeft, U32(br))
	JL(LabelRef("done"))
	f.aRow, f.outp, f.mLeft = GP64(), GP64(), GP64()
	Load(Param("a").Base(), f.aRow)
	MOVQ(f.outCol, f.outp)
	Load(Param("m"), f.mLeft)

	Label("iloop")
	CMPQ(f.mLeft, U32(ar))
	JL(LabelRef("inext"))
	f.ap, f.bp = GP64(), GP64()
	MOVQ(f.aRow, f.ap)
	MOVQ(f.bRow, f.bp)
	f.k = GP64()
	Load(Param("dim"), f.k)
	return f
}

// row addresses row i (0..3) of a block starting at p.
func (f *matMulFrame) row(p GPVirtual, i int) Mem {
	switch i {
	case 0:
		return Mem{Base: p}
	case 1:
		return Mem{Base: p, Index: f.stride, Scale: 1}
	case 2:
		return Mem{Base: p, Index: f.stride, Scale: 2}
	}
	return Mem{Base: p, Index: f.s3, Scale: 1}
}

// next emits the loop tails: the next block of a (ldo is the output row
// stride in bytes), then the next column block of b, then the return.
func (f *matMulFrame) next(ldo GPVirtual) {
	LEAQ(Mem{Base: f.aRow, Index: f.stride, Scale: uint8(f.ar)}, f.aRow)
	LEAQ(Mem{Base: f.outp, Index: ldo, Scale: uint8(f.ar)}, f.outp)
	SUBQ(U32(f.ar), f.mLeft)
	JMP(LabelRef("iloop"))

	Label("inext")
	LEAQ(Mem{Base: f.bRow, Index: f.stride, Scale: uint8(f.br)}, f.bRow)
	ADDQ(U32(4*f.br), f.outCol)
	SUBQ(U32(f.br), f.nLeft)
	JMP(LabelRef("jloop"))

	Label("done")
	VZEROUPPER()
	RET()
}

// reduce4 returns a ZMM register whose low four lanes hold the horizontal
// sums of v[0..3], using AVX-512F shuffles only: interleave pairs of
// accumulators and add (two lanes each per 128-bit chunk), interleave the
// pairs' 64-bit halves and add (one lane each per chunk), then add the four
// 128-bit chunks together.
func reduce4(v [4]VecVirtual) VecVirtual {
	pair := func(x, y VecVirtual) VecVirtual {
		lo, hi := ZMM(), ZMM()
		VUNPCKLPS(y, x, lo) // x0 y0 x1 y1 per chunk
		VUNPCKHPS(y, x, hi) // x2 y2 x3 y3
		VADDPS(hi, lo, lo)
		return lo
	}
	p, q := pair(v[0], v[1]), pair(v[2], v[3])
	lo, hi := ZMM(), ZMM()
	VUNPCKLPD(q, p, lo) // p01 q01 per chunk
	VUNPCKHPD(q, p, hi)
	VADDPS(hi, lo, lo)
	s := ZMM()
	VSHUFF32X4(U8(0x4e), lo, lo, s) // chunks 2 3 0 1
	VADDPS(s, lo, lo)
	VSHUFF32X4(U8(0xb1), lo, lo, s) // chunks 1 0 3 2
	VADDPS(s, lo, lo)
	return lo
}

// matMulIota holds 0..7, compared with dim%8 to build the AVX2 tail mask.
var matMulIota Mem

// genMatMulTAVX2 is genMatMulT for AVX2+FMA: ar rows of a (2 or 1) by br
// rows of b (4 or 1), 8 YMM accumulators at most, so at most 12 of the 16
// YMM registers are live. The tail loads with VMASKMOVPS (masked lanes read
// as zero and never fault); every block shape sums in the same order.
func genMatMulTAVX2(ar, br int) {
	if matMulIota.Symbol.Name == "" {
		matMulIota = GLOBL("matMulIota", RODATA|NOPTR)
		for i := 0; i < 8; i++ {
			DATA(4*i, U32(i))
		}
	}
	name := fmt.Sprintf("matMulT%dx%dAVX2", ar, br)
	TEXT(name, NOSPLIT, "func(a, b, out []float32, m, n, dim, ldo int)")
	Doc(fmt.Sprintf("%s sets out[i*ldo+j] = dot(a[i*dim:], b[j*dim:]) over dim floats for i < m, j < n; m is a multiple of %d, n of %d.", name, ar, br))
	stride := GP64()
	Load(Param("dim"), stride)
	f := matMulLoops(stride, ar, br)
	row, ap, bp, k, outp := f.row, f.ap, f.bp, f.k, f.outp
	var acc [2][4]VecVirtual
	for i := 0; i < ar; i++ {
		for j := 0; j < br; j++ {
			acc[i][j] = YMM()
			VXORPS(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	Label("kloop")
	CMPQ(k, U32(8))
	JL(LabelRef("ktail"))
	var av [2]VecVirtual
	for i := 0; i < ar; i++ {
		av[i] = YMM()
		VMOVUPS(row(ap, i), av[i])
	}
	for j := 0; j < br; j++ {
		bv := YMM()
		VMOVUPS(row(bp, j), bv)
		for i := 0; i < ar; i++ {
			VFMADD231PS(bv, av[i], acc[i][j])
		}
	}
	ADDQ(U32(32), ap)
	ADDQ(U32(32), bp)
	SUBQ(U32(8), k)
	JMP(LabelRef("kloop"))

	Label("ktail")
	TESTQ(k, k)
	JZ(LabelRef("reduce"))
	// mask lane i = (k > i): all ones for the k floats left.
	kx, mask := XMM(), YMM()
	VMOVD(k.As32(), kx)
	VPBROADCASTD(kx, mask)
	VPCMPGTD(matMulIota, mask, mask)
	var at [2]VecVirtual
	for i := 0; i < ar; i++ {
		at[i] = YMM()
		VMASKMOVPS(row(ap, i), mask, at[i])
	}
	for j := 0; j < br; j++ {
		bt := YMM()
		VMASKMOVPS(row(bp, j), mask, bt)
		for i := 0; i < ar; i++ {
			VFMADD231PS(bt, at[i], acc[i][j])
		}
	}

	Label("reduce")
	ldo := GP64()
	Load(Param("ldo"), ldo)
	SHLQ(U8(2), ldo)
	op := GP64()
	MOVQ(outp, op)
	for i := 0; i < ar; i++ {
		v := [4]VecVirtual{acc[i][0], acc[i][1], acc[i][2], acc[i][3]}
		if br == 1 {
			v = [4]VecVirtual{acc[i][0], acc[i][0], acc[i][0], acc[i][0]}
		}
		r := reduce4Y(v)
		if br == 4 {
			VMOVUPS(r, Mem{Base: op})
		} else {
			VMOVSS(r, Mem{Base: op})
		}
		if i < ar-1 {
			ADDQ(ldo, op)
		}
	}
	f.next(ldo)
}

// reduce4Y is reduce4 on YMM registers: it returns an XMM register holding
// the horizontal sums of v[0..3] in its four lanes.
func reduce4Y(v [4]VecVirtual) VecVirtual {
	pair := func(x, y VecVirtual) VecVirtual {
		lo, hi := YMM(), YMM()
		VUNPCKLPS(y, x, lo)
		VUNPCKHPS(y, x, hi)
		VADDPS(hi, lo, lo)
		return lo
	}
	p, q := pair(v[0], v[1]), pair(v[2], v[3])
	lo, hi := YMM(), YMM()
	VUNPCKLPD(q, p, lo)
	VUNPCKHPD(q, p, hi)
	VADDPS(hi, lo, lo)
	x := XMM()
	VEXTRACTF128(U8(1), lo, x)
	VADDPS(x, lo.AsX(), x)
	return x
}
