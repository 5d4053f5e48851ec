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

// The AVX2 kernels: eight values a group of w bytes. The low lane holds
// the group's first 16 bytes (values 0-3), the high lane the 16 from
// value 4's first byte (tab2 offsets them); VPSHUFB picks each lane's
// four bytes. Their caller gives them only the groups whose 16-byte loads
// stay inside the data (avx2Groups).
//
// tab2's layout (unpackTab2): shuf [32]byte at 0, shift [8]uint32 at 32,
// mask [8]uint32 at 64.

// SETUP2: SI the data, DI out, CX its values (a multiple of 8), R9 a
// group's bytes, R13 value 4's first byte in a group, Y1-Y3 the table.
#define SETUP2 \
	MOVQ data_base+0(FP), SI \
	MOVQ out_base+24(FP), DI \
	MOVQ out_len+32(FP), CX \
	MOVQ tab+48(FP), R8 \
	MOVQ w+56(FP), R9 \
	MOVQ R9, R13 \
	SHLQ $2, R13 \
	SHRQ $3, R13 \
	VMOVDQU (R8), Y1 \
	VMOVDQU 32(R8), Y2 \
	VMOVDQU 64(R8), Y3

// GROUP2 unpacks the next eight values into Y8.
#define GROUP2 \
	VMOVDQU (SI), X0 \
	VINSERTI128 $1, (SI)(R13*1), Y0, Y0 \
	VPSHUFB Y1, Y0, Y8 \
	VPSRLVD Y2, Y8, Y8 \
	VPAND   Y3, Y8, Y8

// NEXT2 stores Y8 and steps to the next group.
#define NEXT2 \
	VMOVDQU Y8, (DI) \
	ADDQ R9, SI \
	ADDQ $32, DI \
	SUBQ $8, CX

// func unpackAVX2(data []byte, out []uint32, tab *unpackTab2, w uint64, base uint32)
TEXT ·unpackAVX2(SB), NOSPLIT, $0-68
	SETUP2
	MOVL base+64(FP), AX
	MOVQ AX, X4
	VPBROADCASTD X4, Y4

qloop:
	CMPQ CX, $8
	JLT  qdone
	GROUP2
	VPADDD Y4, Y8, Y8
	NEXT2
	JMP  qloop

qdone:
	VZEROUPPER
	RET

// func unpackGapsAVX2(data []byte, out []uint32, tab *unpackTab2, w uint64, acc uint32)
//
// The prefix sum: two in-lane shifted adds (VPSLLDQ), then the low lane's
// last sum added to the high lane (VPERMD, VPBLENDD with zeros).
TEXT ·unpackGapsAVX2(SB), NOSPLIT, $0-68
	SETUP2
	MOVL acc+64(FP), AX
	MOVQ AX, X4
	VPBROADCASTD X4, Y4
	VPXOR  Y5, Y5, Y5
	MOVL   $1, AX
	MOVQ   AX, X6
	VPBROADCASTD X6, Y6
	MOVL   $7, AX
	MOVQ   AX, X7
	VPBROADCASTD X7, Y7
	MOVL   $3, AX
	MOVQ   AX, X10
	VPBROADCASTD X10, Y10

hloop:
	CMPQ CX, $8
	JLT  hdone
	GROUP2
	VPADDD  Y6, Y8, Y8
	VPSLLDQ $4, Y8, Y9
	VPADDD  Y9, Y8, Y8
	VPSLLDQ $8, Y8, Y9
	VPADDD  Y9, Y8, Y8
	VPERMD  Y8, Y10, Y9
	VPBLENDD $0x0f, Y5, Y9, Y9
	VPADDD  Y9, Y8, Y8
	VPADDD  Y4, Y8, Y8
	VPERMD  Y8, Y7, Y4
	NEXT2
	JMP     hloop

hdone:
	VZEROUPPER
	RET
