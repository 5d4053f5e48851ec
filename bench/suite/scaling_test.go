package suite

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestScalingSVGAndMarkdown(t *testing.T) {
	reps := []*Report{
		{Config: Config{Records: 10000}, Systems: []SystemReport{{Name: "lazymem", Records: 10000, P50Millis: 0.2}, {Name: "flat", Records: 10000, P50Millis: 0.01}}},
		{Config: Config{Records: 100000}, Systems: []SystemReport{{Name: "lazymem", Records: 100000, P50Millis: 1}, {Name: "flat", Records: 100000, P50Millis: 0.1}}},
	}
	series := ScalingSeries(reps, func(s *SystemReport) float64 { return s.P50Millis })
	if len(series) != 2 || series[0].Name != "lazymem" || len(series[0].Points) != 2 || series[0].Points[1] != [2]float64{100000, 1} {
		t.Fatalf("series %+v", series)
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, "p50 <latency>", "records", "ms", series); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML with one polyline per system.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	lines := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 2 {
		t.Fatalf("%d polylines in\n%s", lines, buf.String())
	}
	if !strings.Contains(buf.String(), "&lt;latency&gt;") {
		t.Fatal("title not escaped")
	}
	if err := WriteSVG(&buf, "empty", "x", "y", nil); err == nil {
		t.Fatal("empty plot accepted")
	}
	buf.Reset()
	if err := WriteScalingMarkdown(&buf, reps, "make report", []string{"a.svg"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| lazymem | 0.2 ms | 1 ms |") {
		t.Fatalf("markdown:\n%s", buf.String())
	}
}
