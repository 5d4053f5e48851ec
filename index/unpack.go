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
// value's bits in data (the kernels step 2*w bytes a group and count
// what is left to bound their loads; the callers check the length
// before they decode, so a short buffer reaches the Go loops only).
func simdFits(data []byte, out []uint32, w uint) bool {
	return w >= 1 && w <= simdMaxWidth && len(out) >= simdMinValues &&
		uint64(len(data))*8 >= uint64(len(out))*uint64(w)
}
