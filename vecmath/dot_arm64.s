//go:build !purego

#include "textflag.h"

// NEON kernels, written by hand: avo emits amd64 only. Go's arm64 assembler
// has VFMLA/VFMLS but no vector FADD/FSUB, so a sum is folded into another
// with VFMLA against a vector of ones (x*1 is exact, so the single rounding
// is that of the add) and a-b is VFMLS b*1 from a. Four accumulators of 4
// lanes (16 floats a step); the tail is scalar. Nothing is read past len(a).

// ONES puts 1.0 in every lane of V31.
#define ONES \
	FMOVS $(1.0), F31 \
	VDUP  V31.S[0], V31.S4

// FOLD4 leaves (a+b)+(c+d) in a.
#define FOLD4(a, b, c, d) \
	VFMLA b.S4, V31.S4, a.S4 \
	VFMLA d.S4, V31.S4, c.S4 \
	VFMLA c.S4, V31.S4, a.S4

// HSUM leaves (v[0]+v[1])+(v[2]+v[3]) in f, using R3-R6 and F28-F30.
#define HSUM(v, f) \
	VMOV  v.S[0], R3 \
	VMOV  v.S[1], R4 \
	VMOV  v.S[2], R5 \
	VMOV  v.S[3], R6 \
	FMOVS R4, F28 \
	FMOVS R5, F29 \
	FMOVS R6, F30 \
	FMOVS R3, f \
	FADDS F28, f, f \
	FADDS F30, F29, F29 \
	FADDS F29, f, f

// func dotNEON(a, b []float32) float32
TEXT ·dotNEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	ONES
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

dotblock:
	CMP    $16, R2
	BLT    dotsingle
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLA  V4.S4, V0.S4, V16.S4
	VFMLA  V5.S4, V1.S4, V17.S4
	VFMLA  V6.S4, V2.S4, V18.S4
	VFMLA  V7.S4, V3.S4, V19.S4
	SUB    $16, R2
	B      dotblock

dotsingle:
	CMP    $4, R2
	BLT    dottail
	VLD1.P 16(R0), [V0.S4]
	VLD1.P 16(R1), [V4.S4]
	VFMLA  V4.S4, V0.S4, V16.S4
	SUB    $4, R2
	B      dotsingle

dottail:
	FOLD4(V16, V17, V18, V19)
	HSUM(V16, F0)

dottailloop:
	CBZ     R2, dotdone
	FMOVS.P 4(R0), F4
	FMOVS.P 4(R1), F5
	FMULS   F5, F4, F4
	FADDS   F4, F0, F0
	SUB     $1, R2
	B       dottailloop

dotdone:
	FMOVS F0, ret+48(FP)
	RET

// func squaredL2NEON(a, b []float32) float32
TEXT ·squaredL2NEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	ONES
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16

l2block:
	CMP    $16, R2
	BLT    l2single
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLS  V4.S4, V31.S4, V0.S4
	VFMLS  V5.S4, V31.S4, V1.S4
	VFMLS  V6.S4, V31.S4, V2.S4
	VFMLS  V7.S4, V31.S4, V3.S4
	VFMLA  V0.S4, V0.S4, V16.S4
	VFMLA  V1.S4, V1.S4, V17.S4
	VFMLA  V2.S4, V2.S4, V18.S4
	VFMLA  V3.S4, V3.S4, V19.S4
	SUB    $16, R2
	B      l2block

l2single:
	CMP    $4, R2
	BLT    l2tail
	VLD1.P 16(R0), [V0.S4]
	VLD1.P 16(R1), [V4.S4]
	VFMLS  V4.S4, V31.S4, V0.S4
	VFMLA  V0.S4, V0.S4, V16.S4
	SUB    $4, R2
	B      l2single

l2tail:
	FOLD4(V16, V17, V18, V19)
	HSUM(V16, F0)

l2tailloop:
	CBZ     R2, l2done
	FMOVS.P 4(R0), F4
	FMOVS.P 4(R1), F5
	FSUBS   F5, F4, F4
	FMULS   F4, F4, F4
	FADDS   F4, F0, F0
	SUB     $1, R2
	B       l2tailloop

l2done:
	FMOVS F0, ret+48(FP)
	RET

// func cosineSumsNEON(a, b []float32) (ab, aa, bb float32)
TEXT ·cosineSumsNEON(SB), NOSPLIT, $0-60
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	ONES
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16

cosblock:
	CMP    $16, R2
	BLT    cossingle
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLA  V4.S4, V0.S4, V16.S4
	VFMLA  V5.S4, V1.S4, V17.S4
	VFMLA  V6.S4, V2.S4, V18.S4
	VFMLA  V7.S4, V3.S4, V19.S4
	VFMLA  V0.S4, V0.S4, V20.S4
	VFMLA  V1.S4, V1.S4, V21.S4
	VFMLA  V2.S4, V2.S4, V22.S4
	VFMLA  V3.S4, V3.S4, V23.S4
	VFMLA  V4.S4, V4.S4, V24.S4
	VFMLA  V5.S4, V5.S4, V25.S4
	VFMLA  V6.S4, V6.S4, V26.S4
	VFMLA  V7.S4, V7.S4, V27.S4
	SUB    $16, R2
	B      cosblock

cossingle:
	CMP    $4, R2
	BLT    costail
	VLD1.P 16(R0), [V0.S4]
	VLD1.P 16(R1), [V4.S4]
	VFMLA  V4.S4, V0.S4, V16.S4
	VFMLA  V0.S4, V0.S4, V20.S4
	VFMLA  V4.S4, V4.S4, V24.S4
	SUB    $4, R2
	B      cossingle

costail:
	FOLD4(V16, V17, V18, V19)
	FOLD4(V20, V21, V22, V23)
	FOLD4(V24, V25, V26, V27)
	HSUM(V16, F0)
	HSUM(V20, F1)
	HSUM(V24, F2)

costailloop:
	CBZ     R2, cosdone
	FMOVS.P 4(R0), F4
	FMOVS.P 4(R1), F5
	FMULS   F5, F4, F6
	FADDS   F6, F0, F0
	FMULS   F4, F4, F6
	FADDS   F6, F1, F1
	FMULS   F5, F5, F6
	FADDS   F6, F2, F2
	SUB     $1, R2
	B       costailloop

cosdone:
	FMOVS F0, ab+48(FP)
	FMOVS F1, aa+52(FP)
	FMOVS F2, bb+56(FP)
	RET
