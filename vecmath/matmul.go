package vecmath

import "fmt"

// MatMulT multiplies a (m rows) by the transpose of b (n rows), both
// row-major with rows of dim floats: out[i*n+j] = Dot(a row i, b row j),
// up to the last bits (the blocked kernel sums in its own order; each
// result obeys the DotBatch bound of doc.go). a must hold at least m*dim
// floats, b at least n*dim, out at least m*n; otherwise an error wrapping
// ErrDimension is returned and out is not touched. Floats past those
// lengths are neither read nor written.
//
// On AVX-512 the product runs in blocks of 4 rows of a by 4 rows of b, so
// that each vector loaded from b serves four rows of a (DotBatch per row of
// a loads every row of b once per row of a); the edge rows and columns use
// 1x4, 4x1 and 1x1 blocks that sum in the same order, so on one machine
// each result depends only on its two rows, not on m, n or where the rows
// sit. AVX2 does the same with blocks of 2 rows of a by 4 rows of b (8
// YMM accumulators). Elsewhere it runs DotBatch row by row: there each result depends on
// its two rows and on whether j < n&^3 (DotBatch's four-row kernel covers
// those columns, the single-pair kernel the rest).
func MatMulT(a []float32, m int, b []float32, n int, dim int, out []float32) error {
	if dim <= 0 || m < 0 || n < 0 {
		return fmt.Errorf("%w: m %d, n %d, dim %d", ErrDimension, m, n, dim)
	}
	if len(a)/dim < m {
		return fmt.Errorf("%w: len(a) %d < m %d * dim %d", ErrDimension, len(a), m, dim)
	}
	if len(b)/dim < n {
		return fmt.Errorf("%w: len(b) %d < n %d * dim %d", ErrDimension, len(b), n, dim)
	}
	if n > 0 && len(out)/n < m {
		return fmt.Errorf("%w: out holds %d, need m %d * n %d", ErrDimension, len(out), m, n)
	}
	matMulT(active, a[:m*dim], m, b[:n*dim], n, dim, out[:m*n])
	return nil
}

// matMulT is MatMulT on kernel set k, shapes already checked and slices
// cut to length.
func matMulT(k *kernels, a []float32, m int, b []float32, n, dim int, out []float32) {
	if m == 0 || n == 0 {
		return
	}
	if mk := k.matMulT; mk != nil {
		mA, nB := m-m%mk.ar, n-n%mk.br
		a1, b1 := a[mA*dim:], b[nB*dim:]
		if mA > 0 && nB > 0 {
			mk.full(a, b, out, mA, nB, dim, n)
		}
		if m > mA && nB > 0 {
			mk.aEdge(a1, b, out[mA*n:], m-mA, nB, dim, n)
		}
		if mA > 0 && n > nB {
			mk.bEdge(a, b1, out[nB:], mA, n-nB, dim, n)
		}
		if m > mA && n > nB {
			mk.both(a1, b1, out[mA*n+nB:], m-mA, n-nB, dim, n)
		}
		return
	}
	for i := 0; i < m; i++ {
		dotBatch(k, a[i*dim:(i+1)*dim], b, out[i*n:(i+1)*n])
	}
}

// matMulTRef is the reference MatMulT: the sequential float64-free
// generic dot of every pair, always compiled.
func matMulTRef(a []float32, m int, b []float32, n, dim int, out []float32) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			out[i*n+j] = dotGeneric(a[i*dim:(i+1)*dim], b[j*dim:(j+1)*dim])
		}
	}
}
