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

// unpackAVX2 is unpack for len(out)/8 groups that avx2Groups allows.
//
//go:noescape
func unpackAVX2(data []byte, out []uint32, tab *unpackTab2, w uint64, base uint32)

// unpackGapsAVX2 is unpackGaps for len(out)/8 groups that avx2Groups
// allows, in uint32 arithmetic.
//
//go:noescape
func unpackGapsAVX2(data []byte, out []uint32, tab *unpackTab2, w uint64, acc uint32)

// The kernels' tiers, the best last: the Go loops, AVX2's (VPSHUFB and
// VPSRLVD), or AVX-512's (VPERMB is VBMI's, byte masks BW's, the tail
// masks BZHI; cpu.X86.HasAVX512F is only set when the OS saves the ZMM
// state).
const (
	tierGo = iota
	tierAVX2
	tierAVX512
)

// unpackTiers lists the tiers this CPU runs; unpackTier is the one used
// (unpack and unpackGaps pass it to unpackAt and unpackGapsAt; the tests
// pass every tier).
var unpackTiers = func() []int {
	t := []int{tierGo}
	if cpu.X86.HasAVX2 {
		t = append(t, tierAVX2)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI2 {
		t = append(t, tierAVX512)
	}
	return t
}()

var unpackTier = unpackTiers[len(unpackTiers)-1]

// unpackAt is unpack on tier's kernel where it applies; it reports
// whether it did.
func unpackAt(tier int, data []byte, out []uint32, w uint, base uint32) bool {
	if tier == tierGo || !simdFits(data, out, w) {
		return false
	}
	if tier == tierAVX512 {
		unpackAVX512(data, out, &unpackTabs[w], uint64(w), base)
		return true
	}
	g := avx2Groups(len(data), len(out), w)
	if g == 0 {
		return false
	}
	unpackAVX2(data, out[:8*g], &unpackTabs2[w], uint64(w), base)
	unpackGo(data[g*int(w):], out[8*g:], w, base)
	return true
}

// unpackGapsAt is unpackGaps on tier's kernel where it applies and where
// no sum can pass 2^32 (the kernels add in uint32, unpackGaps in uint64,
// and decodeDocsV4 rejects a block whose last sum is past its segment).
func unpackGapsAt(tier int, data []byte, out []uint32, w uint, acc uint64) (uint64, bool) {
	if tier == tierGo || !simdFits(data, out, w) || acc >= 1<<32 || uint64(len(out))<<w >= 1<<32-acc {
		return 0, false
	}
	if tier == tierAVX512 {
		unpackGapsAVX512(data, out, &unpackTabs[w], uint64(w), uint32(acc))
		return uint64(out[len(out)-1]), true
	}
	g := avx2Groups(len(data), len(out), w)
	if g == 0 {
		return 0, false
	}
	unpackGapsAVX2(data, out[:8*g], &unpackTabs2[w], uint64(w), uint32(acc))
	return unpackGapsGo(data[g*int(w):], out[8*g:], w, uint64(out[8*g-1])), true
}
