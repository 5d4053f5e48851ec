//go:build !purego

package index

// unpackTab is the per-width table of the bit-unpacking kernels
// (unpack_amd64.s): for lane i of a group of sixteen w-bit values, the
// four bytes from the group's first that hold it (idx[4i..4i+3]), the
// shift of its first bit in them, and the mask of w bits.
type unpackTab struct {
	idx   [64]byte
	shift [16]uint32
	mask  [16]uint32
}

// simdMaxWidth is the widest value the kernels unpack: its first bit
// is at most 7 bits into its four bytes.
const simdMaxWidth = 25

// simdMinValues: below it the Go loops are as fast (the kernel's setup
// is a dozen instructions and a table's three loads).
const simdMinValues = 16

// unpackTab2 is the AVX2 kernels' table: for lane i of a group of eight,
// the four bytes that hold it, counted from the group's first byte for
// values 0-3 and from value 4's first byte for values 4-7 (each half of
// the register is loaded from its own offset), its shift and the mask.
type unpackTab2 struct {
	shuf  [32]byte
	shift [8]uint32
	mask  [8]uint32
}

var unpackTabs2 = func() (t [simdMaxWidth + 1]unpackTab2) {
	for w := 1; w <= simdMaxWidth; w++ {
		off1 := 4 * w >> 3
		for i := 0; i < 8; i++ {
			bit, from := i*w, 0
			if i >= 4 {
				from = off1
			}
			for b := 0; b < 4; b++ {
				t[w].shuf[4*i+b] = byte(bit>>3 - from + b)
			}
			t[w].shift[i] = uint32(bit & 7)
			t[w].mask[i] = 1<<w - 1
		}
	}
	return t
}()

// avx2Groups is how many groups of eight of len(out) values of w bits the
// AVX2 kernels may take from nData bytes: each group of w bytes loads 16
// bytes from its first and 16 from its value 4's first, inside the data.
func avx2Groups(nData, nOut int, w uint) int {
	lim := nData - int(4*w)>>3 - 16
	if lim < 0 {
		return 0
	}
	return min(nOut/8, lim/int(w)+1)
}

var unpackTabs = func() (t [simdMaxWidth + 1]unpackTab) {
	for w := 1; w <= simdMaxWidth; w++ {
		for i := 0; i < 16; i++ {
			bit := i * w
			for b := 0; b < 4; b++ {
				t[w].idx[4*i+b] = byte(bit>>3 + b)
			}
			t[w].shift[i] = uint32(bit & 7)
			t[w].mask[i] = 1<<w - 1
		}
	}
	return t
}()

// simdFits reports whether the kernels take len(out) values of w bits
// from data: a width they handle, enough values to pay, and every
// value's bits in data (the kernels bound their loads by what is left of
// it; the callers check the length before they decode, so a short
// buffer reaches the Go loops only).
func simdFits(data []byte, out []uint32, w uint) bool {
	return w >= 1 && w <= simdMaxWidth && len(out) >= simdMinValues &&
		uint64(len(data))*8 >= uint64(len(out))*uint64(w)
}
