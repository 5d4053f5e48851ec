//go:build !purego

#include "textflag.h"

// The bit unpacking of postings_decode.go on AVX-512 (F, BW, VBMI, BMI2).
// Sixteen values of w bits (1 <= w <= 25) take 2*w bytes, so a group of
// sixteen starts on a byte: one masked load of at most 64 bytes from the
// group's first (never past the data), VPERMB picks each lane's four
// bytes (tab.idx), VPSRLVD and VPANDD leave its w bits (tab.shift,
// tab.mask). The last group stores only the lanes that remain.
//
// tab's layout (unpackTab): idx [64]byte at 0, shift [16]uint32 at 64,
// mask [16]uint32 at 128.

// SETUP loads the arguments both kernels share: SI the data, DX its
// bytes left, DI out, CX its values left, R9 the bytes of a group,
// Z1-Z3 the width's table, R10 all ones (for BZHI).
#define SETUP \
	MOVQ data_base+0(FP), SI \
	MOVQ data_len+8(FP), DX \
	MOVQ out_base+24(FP), DI \
	MOVQ out_len+32(FP), CX \
	MOVQ tab+48(FP), R8 \
	MOVQ w+56(FP), R9 \
	SHLQ $1, R9 \
	VMOVDQU64 (R8), Z1 \
	VMOVDQU64 64(R8), Z2 \
	VMOVDQU64 128(R8), Z3 \
	MOVQ $-1, R10

// GROUP unpacks the next sixteen values into Z8 (the values less one
// for gaps, less base otherwise); K2 masks the lanes that remain.
#define GROUP \
	MOVQ  $64, R11 \
	CMPQ  DX, R11 \
	CMOVQLT DX, R11 \
	BZHIQ R11, R10, R11 \
	KMOVQ R11, K1 \
	MOVQ  $16, R12 \
	CMPQ  CX, R12 \
	CMOVQLT CX, R12 \
	BZHIQ R12, R10, R12 \
	KMOVW R12, K2 \
	VMOVDQU8.Z (SI), K1, Z0 \
	VPERMB  Z0, Z1, Z8 \
	VPSRLVD Z2, Z8, Z8 \
	VPANDD  Z3, Z8, Z8

// NEXT stores Z8's remaining lanes and steps to the next group.
#define NEXT \
	VMOVDQU32 Z8, K2, (DI) \
	ADDQ R9, SI \
	SUBQ R9, DX \
	ADDQ $64, DI \
	SUBQ $16, CX

// func unpackAVX512(data []byte, out []uint32, tab *unpackTab, w uint64, base uint32)
TEXT ·unpackAVX512(SB), NOSPLIT, $0-68
	SETUP
	MOVL base+64(FP), AX
	VPBROADCASTD AX, Z4

ploop:
	TESTQ CX, CX
	JLE   pdone
	GROUP
	VPADDD Z4, Z8, Z8
	NEXT
	JMP   ploop

pdone:
	VZEROUPPER
	RET

// func unpackGapsAVX512(data []byte, out []uint32, tab *unpackTab, w uint64, acc uint32)
//
// Each value is a gap less one: out[j] = acc + the sum of out's gaps up to
// j, a prefix sum over the sixteen lanes (four shifted adds, VALIGND with
// zeros), then acc broadcast from the last lane (VPERMD).
TEXT ·unpackGapsAVX512(SB), NOSPLIT, $0-68
	SETUP
	MOVL acc+64(FP), AX
	VPBROADCASTD AX, Z4
	VPXORD Z5, Z5, Z5
	MOVL   $1, AX
	VPBROADCASTD AX, Z6
	MOVL   $15, AX
	VPBROADCASTD AX, Z7

gloop:
	TESTQ CX, CX
	JLE   gdone
	GROUP
	VPADDD  Z6, Z8, Z8
	VALIGND $15, Z5, Z8, Z9
	VPADDD  Z9, Z8, Z8
	VALIGND $14, Z5, Z8, Z9
	VPADDD  Z9, Z8, Z8
	VALIGND $12, Z5, Z8, Z9
	VPADDD  Z9, Z8, Z8
	VALIGND $8, Z5, Z8, Z9
	VPADDD  Z9, Z8, Z8
	VPADDD  Z4, Z8, Z8
	VPERMD  Z8, Z7, Z4
	NEXT
	JMP     gloop

gdone:
	VZEROUPPER
	RET
