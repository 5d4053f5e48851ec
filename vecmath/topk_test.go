package vecmath

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// topKSort is the obvious reference: sort every index, keep k.
func topKSort(scores []float32, k int) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return worse(scores, idx[y], idx[x]) })
	if k < 0 {
		k = 0
	}
	return idx[:min(k, len(idx))]
}

func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, n := range []int{0, 1, 2, 3, 10, 11, 100, 1000} {
		for _, k := range []int{-1, 0, 1, 2, 5, 10, 64, 2000} {
			for _, kind := range []string{"random", "ties", "nan", "sorted", "reversed"} {
				s := make([]float32, n)
				for i := range s {
					switch kind {
					case "random":
						s[i] = float32(r.NormFloat64())
					case "ties":
						s[i] = float32(r.IntN(4))
					case "nan":
						switch r.IntN(5) {
						case 0:
							s[i] = nan
						case 1:
							s[i] = -inf
						case 2:
							s[i] = inf
						default:
							s[i] = float32(r.IntN(3))
						}
					case "sorted":
						s[i] = float32(i)
					case "reversed":
						s[i] = float32(n - i)
					}
				}
				want := topKSort(s, k)
				got := TopK(s, k)
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("n=%d k=%d %s: got %v want %v (scores %v)", n, k, kind, got, want, s)
				}
			}
		}
	}
}

func TestTopKIntoReusesBuffer(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	s := randVec(r, 10000)
	buf := make([]int, 0, 10)
	allocs := testing.AllocsPerRun(20, func() {
		buf = TopKInto(buf, s, 10)
	})
	if allocs != 0 {
		t.Fatalf("TopKInto with a big enough buffer allocated %v times per run", allocs)
	}
	if !slices.Equal(buf, topKSort(s, 10)) {
		t.Fatalf("TopKInto = %v, want %v", buf, topKSort(s, 10))
	}
	// A short buffer still gives the right answer.
	if got := TopKInto(make([]int, 3), s, 10); !slices.Equal(got, topKSort(s, 10)) {
		t.Fatalf("TopKInto with small dst = %v", got)
	}
}

func FuzzTopK(f *testing.F) {
	f.Add([]byte{1, 2, 3, 3, 2, 1, 0, 255}, 3)
	f.Add([]byte{}, 1)
	f.Fuzz(func(t *testing.T, data []byte, k int) {
		s := make([]float32, len(data)/2)
		for i := range s {
			// Few distinct values (ties) plus NaN and infinities.
			switch v := data[2*i]; {
			case v == 255:
				s[i] = float32(math.NaN())
			case v == 254:
				s[i] = float32(math.Inf(1))
			case v == 253:
				s[i] = float32(math.Inf(-1))
			default:
				s[i] = float32(int(v%16)-8) * float32(data[2*i+1]%4)
			}
		}
		k = k % 70
		want := topKSort(s, k)
		if got := TopK(s, k); len(got)+len(want) > 0 && !slices.Equal(got, want) {
			t.Fatalf("k=%d: got %v want %v (scores %v)", k, got, want, s)
		}
	})
}
