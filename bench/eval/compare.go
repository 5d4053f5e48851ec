package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Comparison is a paired comparison of two runs over the same questions at
// one cut-off: is run A's recall higher than run B's, and by more than the
// questions' spread explains?
type Comparison struct {
	K int
	// Diff is mean recall of A minus that of B.
	Diff float64
	// Lo and Hi bound the 95% paired bootstrap interval of Diff.
	Lo, Hi float64
	// Better and Worse count the questions where A's recall is higher or
	// lower than B's.
	Better, Worse int
}

// bootstrapRounds is the number of resamples behind Comparison.Lo and Hi.
const bootstrapRounds = 2000

// Compare compares a and b at k over their questions with a paired
// bootstrap (resampling questions with replacement; seed fixes the draws,
// so a report is reproducible). Both runs must come from one Run, which
// asks the questions in the same order.
func Compare(a, b *RunReport, k int, seed uint64) (Comparison, error) {
	pa, pb := a.PerQuestion[k], b.PerQuestion[k]
	if len(pa) == 0 || len(pa) != len(pb) {
		return Comparison{}, fmt.Errorf("%w: runs %s and %s: %d and %d questions at k=%d", ErrConfig, a.Mode, b.Mode, len(pa), len(pb), k)
	}
	c := Comparison{K: k}
	d := make([]float64, len(pa))
	for i := range pa {
		d[i] = pa[i] - pb[i]
		c.Diff += d[i]
		switch {
		case d[i] > 0:
			c.Better++
		case d[i] < 0:
			c.Worse++
		}
	}
	n := float64(len(d))
	c.Diff /= n
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	means := make([]float64, bootstrapRounds)
	for r := range means {
		var s float64
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / n
	}
	slices.Sort(means)
	c.Lo, c.Hi = means[bootstrapRounds*25/1000], means[bootstrapRounds*975/1000-1]
	return c, nil
}

// writeComparisons writes, for every embedder with a lazy run, lazy against
// the better of its sparse and dense runs at each k (the acceptance
// question "is lazy no worse than the better of the two?").
func (r *Report) writeComparisons(b *strings.Builder) {
	var rows []string
	for _, lazy := range r.Runs {
		if lazy.Mode != "lazy" {
			continue
		}
		for _, k := range r.Ks {
			var best *RunReport
			for _, o := range r.Runs {
				if o.Embedder == lazy.Embedder && o != lazy && (o.Mode == "sparse" || o.Mode == "dense") &&
					(best == nil || o.Recall[k] > best.Recall[k]) {
					best = o
				}
			}
			if best == nil {
				continue
			}
			c, err := Compare(lazy, best, k, 1)
			if err != nil {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %s | %.3f | %.3f | %+.3f | [%+.3f, %+.3f] | %d | %d |\n",
				lazy.Embedder, k, best.Mode, lazy.Recall[k], best.Recall[k], c.Diff, c.Lo, c.Hi, c.Better, c.Worse))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nlazy against the better of sparse and dense (paired over questions; 95% bootstrap interval):\n\n")
	b.WriteString("| embedder | k | better mode | lazy | better | lazy - better | 95% interval | questions up | questions down |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|---|---:|---:|\n")
	for _, row := range rows {
		b.WriteString(row)
	}
}
