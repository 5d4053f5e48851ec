package suite

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Series is one line of a scaling plot: a system's value at each corpus
// size.
type Series struct {
	Name   string
	Points [][2]float64 // (records, value)
}

// ScalingSeries extracts one figure per system across reports of growing
// corpus size.
func ScalingSeries(reps []*Report, value func(*SystemReport) float64) []Series {
	byName := map[string]*Series{}
	var order []string
	for _, r := range reps {
		for i := range r.Systems {
			s := &r.Systems[i]
			if byName[s.Name] == nil {
				byName[s.Name] = &Series{Name: s.Name}
				order = append(order, s.Name)
			}
			byName[s.Name].Points = append(byName[s.Name].Points, [2]float64{float64(s.Records), value(s)})
		}
	}
	out := make([]Series, 0, len(order))
	for _, n := range order {
		ps := byName[n].Points
		sort.Slice(ps, func(i, j int) bool { return ps[i][0] < ps[j][0] })
		out = append(out, *byName[n])
	}
	return out
}

var plotColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// WriteSVG draws series as lines on log-log axes: a small, dependency-free
// chart for docs. Points with a non-positive value are left out (log scale).
func WriteSVG(w io.Writer, title, xLabel, yLabel string, series []Series) error {
	const (
		width, height          = 640.0, 400.0
		left, right, top, bott = 80.0, 150.0, 40.0, 60.0
	)
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			if p[0] <= 0 || p[1] <= 0 {
				continue
			}
			minX, maxX = math.Min(minX, p[0]), math.Max(maxX, p[0])
			minY, maxY = math.Min(minY, p[1]), math.Max(maxY, p[1])
		}
	}
	if math.IsInf(minX, 1) {
		return fmt.Errorf("%w: nothing to plot for %q", ErrConfig, title)
	}
	// Whole decades around the data.
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	pw, ph := width-left-right, height-top-bott
	px := func(x float64) float64 { return left + (math.Log10(x)-lx0)/(lx1-lx0)*pw }
	py := func(y float64) float64 { return top + ph - (math.Log10(y)-ly0)/(ly1-ly0)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15" text-anchor="middle">%s</text>`+"\n", left+pw/2, xmlEscape(title))
	for d := lx0; d <= lx1; d++ {
		x := left + (d-lx0)/(lx1-lx0)*pw
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/>`+"\n", x, top, x, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x, top+ph+18, decade(d))
	}
	for d := ly0; d <= ly1; d++ {
		y := top + ph - (d-ly0)/(ly1-ly0)*ph
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, decade(d))
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", left+pw/2, height-18, xmlEscape(xLabel))
	fmt.Fprintf(&b, `<text x="18" y="%g" text-anchor="middle" transform="rotate(-90 18 %g)">%s</text>`+"\n", top+ph/2, top+ph/2, xmlEscape(yLabel))
	for i, s := range series {
		c := plotColors[i%len(plotColors)]
		var pts []string
		for _, p := range s.Points {
			if p[0] > 0 && p[1] > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], c)
		}
		ly := top + 10 + float64(i)*18
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>`+"\n", left+pw+12, ly, left+pw+32, ly, c)
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", left+pw+38, ly+4, xmlEscape(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func decade(d float64) string {
	switch {
	case d >= 6:
		return fmt.Sprintf("%gM", math.Pow(10, d-6))
	case d >= 3:
		return fmt.Sprintf("%gk", math.Pow(10, d-3))
	case d >= 0:
		return fmt.Sprintf("%g", math.Pow(10, d))
	}
	return fmt.Sprintf("%g", math.Pow(10, d))
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// WriteScalingMarkdown writes the report of several runs of growing size:
// a summary table per figure and each run's full table.
func WriteScalingMarkdown(w io.Writer, reps []*Report, command string, plots []string) error {
	var b strings.Builder
	b.WriteString("# lazy vs eager RAG at growing scale\n\n")
	b.WriteString("Generated by `make report` (do not edit by hand). Command:\n\n    " + command + "\n\n")
	for _, p := range plots {
		fmt.Fprintf(&b, "![%s](%s)\n\n", p, p)
	}
	figs := []struct {
		name string
		f    func(*SystemReport) float64
		unit string
	}{
		{"recall p50", func(s *SystemReport) float64 { return s.P50Millis }, "ms"},
		{"texts embedded (ingest + queries)", func(s *SystemReport) float64 { return float64(s.Embed.Texts) }, ""},
		{"ingest", func(s *SystemReport) float64 { return s.IngestSeconds }, "s"},
		{"end to end, measured", func(s *SystemReport) float64 { return s.EndToEndSeconds }, "s"},
	}
	for _, fg := range figs {
		series := ScalingSeries(reps, fg.f)
		fmt.Fprintf(&b, "## %s\n\n| system |", fg.name)
		for _, r := range reps {
			fmt.Fprintf(&b, " %d records |", r.Config.Records)
		}
		b.WriteString("\n|---|")
		for range reps {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		for _, s := range series {
			fmt.Fprintf(&b, "| %s |", s.Name)
			for _, r := range reps {
				v := "-"
				for _, p := range s.Points {
					if int(p[0]) == r.Config.Records {
						v = fmt.Sprintf("%.4g %s", p[1], fg.unit)
					}
				}
				fmt.Fprintf(&b, " %s |", strings.TrimSpace(v))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	for _, r := range reps {
		fmt.Fprintf(&b, "## %d records\n\n```\n%s```\n\n", r.Config.Records, r.Table())
	}
	_, err := io.WriteString(w, b.String())
	return err
}
