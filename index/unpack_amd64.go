//go:build !purego

package index

import "golang.org/x/sys/cpu"

// unpackAVX512 is unpack for 1 <= w <= 25 (unpack_amd64.s).
//
//go:noescape
func unpackAVX512(data []byte, out []uint32, tab *unpackTab, w uint64, base uint32)

// unpackGapsAVX512 is unpackGaps for 1 <= w <= 25, in uint32 arithmetic
// (unpack_amd64.s).
//
//go:noescape
func unpackGapsAVX512(data []byte, out []uint32, tab *unpackTab, w uint64, acc uint32)

// haveUnpackSIMD: the CPU has what the kernels use (VPERMB is VBMI's,
// byte masks BW's, the tail masks BZHI); cpu.X86.HasAVX512F is only set
// when the OS saves the ZMM state.
var haveUnpackSIMD = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
	cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI2

// unpackSIMD is unpack on the kernel where it applies; it reports
// whether it did.
func unpackSIMD(data []byte, out []uint32, w uint, base uint32) bool {
	if !haveUnpackSIMD || !simdFits(data, out, w) {
		return false
	}
	unpackAVX512(data, out, &unpackTabs[w], uint64(w), base)
	return true
}

// unpackGapsSIMD is unpackGaps on the kernel where it applies and where
// no sum can pass 2^32 (the kernel adds in uint32, unpackGaps in uint64,
// and decodeDocsV4 rejects a block whose last sum is past its segment).
func unpackGapsSIMD(data []byte, out []uint32, w uint, acc uint64) (uint64, bool) {
	if !haveUnpackSIMD || !simdFits(data, out, w) || acc >= 1<<32 || uint64(len(out))<<w >= 1<<32-acc {
		return 0, false
	}
	unpackGapsAVX512(data, out, &unpackTabs[w], uint64(w), uint32(acc))
	return uint64(out[len(out)-1]), true
}
