//go:build linux

package vecmath

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/lazymem/lazymem/internal/testenv"

	"golang.org/x/sys/unix"
)

// TestNoAccessPastEnds places slices flush against inaccessible pages, so a
// kernel that loads or stores even one byte before the start or past the
// end of a slice faults and the test binary dies. The NaN guard bands of the
// other tests only catch reads that reach the result; this catches reads
// whose values are discarded, too (a full-width load for a short tail).
func TestNoAccessPastEnds(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 4*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		testenv.Missing(t, "mmap: %v", err)
	}
	defer unix.Munmap(mem)
	// Layout: [no access][data page A][data page B][no access].
	if err := unix.Mprotect(mem[:page], unix.PROT_NONE); err != nil {
		testenv.Missing(t, "mprotect: %v", err)
	}
	if err := unix.Mprotect(mem[3*page:], unix.PROT_NONE); err != nil {
		testenv.Missing(t, "mprotect: %v", err)
	}
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&mem[page])), 2*page/4)
	per := page / 4 // floats per page
	r := rand.New(rand.NewPCG(15, 16))
	fill := func() {
		for i := range floats {
			floats[i] = float32(r.IntN(17) - 8)
		}
	}
	lengths := append([]int(nil), testLengths...)
	for _, k := range impls {
		for _, n := range lengths {
			if n > per {
				continue
			}
			fill() // batch outputs below overwrite the data
			// a ends at the end of page B; b starts at the start of page A.
			a := floats[2*per-n : 2*per : 2*per]
			b := floats[:n:n]
			want, _ := oracleDot(a, b)
			if got := k.dot(a, b); float64(got) != want {
				t.Fatalf("%s dot n=%d: %v want %v", k.name, n, got, want)
			}
			k.dot(b, a)
			k.squaredL2(a, b)
			k.squaredL2(b, a)
			k.cosineSums(a, b)
			k.cosineSums(b, a)
			k.scale(a, 1)
			k.scale(b, 1)
			// Halves flush against either end (2 bytes each, so n halves
			// end exactly at the page boundary too).
			halves := unsafe.Slice((*uint16)(unsafe.Pointer(&mem[page])), page) // pages A and B
			k.dotF16(a, halves[:n:n])
			k.dotF16(b, halves[page-n:page:page])
			// Batch: q and the rows flush against either end.
			for _, dim := range []int{1, 7, 16, 17, 33, 65} {
				rows := 8
				if rows*dim > per || n < rows*dim {
					continue
				}
				flat := floats[2*per-rows*dim : 2*per : 2*per]
				q := floats[:dim:dim]
				out := floats[:rows:rows]
				dotBatch(k, q, flat, out)
				q = floats[2*per-dim : 2*per : 2*per]
				flat = floats[: rows*dim : rows*dim]
				dotBatch(k, q, flat, floats[2*per-rows:2*per:2*per])
			}
		}
	}
}
