package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/engine"
)

// Recall maps a cut-off k to the mean evidence recall@k. Its JSON keys are
// the decimal k ("10"), in increasing order.
type Recall map[int]float64

// MarshalJSON writes {"1": r, "5": r, ...} with keys in increasing k.
func (r Recall) MarshalJSON() ([]byte, error) {
	ks := make([]int, 0, len(r))
	for k := range r {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range ks {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", strconv.Itoa(k))
		v, err := json.Marshal(r[k])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Recall) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*r = make(Recall, len(m))
	for s, v := range m {
		k, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("lazymem: eval: recall key %q: %w", s, err)
		}
		(*r)[k] = v
	}
	return nil
}

// CategoryReport is the recall over the questions of one category.
type CategoryReport struct {
	Name      string `json:"name"`
	Questions int    `json:"questions"`
	Recall    Recall `json:"recall"`
}

// RunReport is the result of one mode with one embedder. Its JSON is exactly
// {"questions", "recall", "by_category", "embedded", "turns"}.
type RunReport struct {
	Questions  int                        `json:"questions"`
	Recall     Recall                     `json:"recall"`
	ByCategory map[string]*CategoryReport `json:"by_category"`
	Embedded   int                        `json:"embedded"`
	Turns      int                        `json:"turns"`

	Mode     engine.Mode   `json:"-"`
	Embedder string        `json:"-"` // the spec ("hash", "replay:DIR")
	Model    string        `json:"-"` // the embedder's Name()
	Recalls  int           `json:"-"` // Recall calls made
	Ingest   time.Duration `json:"-"` // wall time of ingest
	Query    time.Duration `json:"-"` // wall time of the questions
	// PerQuestion holds each question's recall at k, in the order the
	// questions were asked (the same in every run of one Report).
	PerQuestion map[int][]float64 `json:"-"`
}

// Report holds one RunReport per evaluated mode, in Config.Modes order.
type Report struct {
	Runs          []*RunReport
	Conversations int
	Ks            []int
}

// WriteJSON writes one JSON object per run, one per line.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, run := range r.Runs {
		if err := enc.Encode(run); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes human tables (Markdown): one row per run with the
// overall recall, then one row per run and category, then, when the report
// has a lazy run, lazy against the better of sparse and dense at each k.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	head := func(extra string) {
		b.WriteString("| embedder | mode | category | questions |")
		for _, k := range r.Ks {
			fmt.Fprintf(&b, " R@%d |", k)
		}
		b.WriteString(extra + "\n|---|---|---|---:|")
		for range r.Ks {
			b.WriteString("---:|")
		}
		if extra != "" {
			b.WriteString("---:|---:|")
		}
		b.WriteString("\n")
	}
	row := func(run *RunReport, cat string, n int, rec Recall) {
		fmt.Fprintf(&b, "| %s | %s | %s | %d |", run.Embedder, run.Mode, cat, n)
		for _, k := range r.Ks {
			fmt.Fprintf(&b, " %.3f |", rec[k])
		}
	}
	head(" embedded | turns |")
	for _, run := range r.Runs {
		row(run, "all", run.Questions, run.Recall)
		fmt.Fprintf(&b, " %d | %d |\n", run.Embedded, run.Turns)
	}
	b.WriteString("\n")
	head("")
	for _, run := range r.Runs {
		for _, cat := range sortedCats(run.ByCategory) {
			c := run.ByCategory[cat]
			row(run, cat+" "+c.Name, c.Questions, c.Recall)
			b.WriteString("\n")
		}
	}
	r.writeComparisons(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedCats(m map[string]*CategoryReport) []string {
	cats := make([]string, 0, len(m))
	for c := range m {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return cats
}

func categoryName(c int) string {
	if c >= 0 && c < len(locomo.Categories) {
		return locomo.Categories[c]
	}
	return ""
}
