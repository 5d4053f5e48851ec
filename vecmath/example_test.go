package vecmath_test

import (
	"fmt"

	"github.com/lazymem/lazymem/vecmath"
)

func ExampleTopK() {
	scores := []float32{0.1, 0.9, 0.5, 0.9, 0.3}
	// Ties rank by index: 1 before 3.
	fmt.Println(vecmath.TopK(scores, 3))
	// Output: [1 3 2]
}

func ExampleTopKInto() {
	buf := make([]int, 0, 2) // reused across queries: no allocation
	for _, scores := range [][]float32{{3, 1, 2}, {0, 5, 4}} {
		buf = vecmath.TopKInto(buf, scores, 2)
		fmt.Println(buf)
	}
	// Output:
	// [0 2]
	// [1 2]
}

func ExampleCosine() {
	fmt.Printf("%.3f\n", vecmath.Cosine([]float32{1, 0}, []float32{1, 1}))
	// Output: 0.707
}

func ExampleAppendFloat16() {
	v := []float32{1, 0.1, -2.5}
	h := vecmath.AppendFloat16(nil, v) // half the bytes; 0.1 is not exact in binary16
	fmt.Println(vecmath.AppendFromFloat16(nil, h))
	fmt.Println(vecmath.DotFloat16([]float32{1, 1, 1}, h))
	// Output:
	// [1 0.099975586 -2.5]
	// -1.4000244
}
