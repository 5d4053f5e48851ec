package engine

import (
	"bytes"
	"testing"
)

// FuzzDecodeValueEntry: the value entry decoder never panics and is
// canonical: what decodes re-encodes to the same bytes.
func FuzzDecodeValueEntry(f *testing.F) {
	f.Add(appendValueEntry(nil, &valueEntry{}))
	f.Add(appendValueEntry(nil, &valueEntry{cands: 7, topk: 3, pos: 1, neg: 300}))
	f.Add([]byte{1, 0x80, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeValueEntry(b)
		if err != nil {
			return
		}
		if got := appendValueEntry(nil, &v); !bytes.Equal(got, b) {
			t.Fatalf("%x decodes to %+v which encodes to %x", b, v, got)
		}
	})
}

func TestValueScore(t *testing.T) {
	o := CoreOptions{}
	o.ensureDefaults()
	for _, tc := range []struct {
		name  string
		rules float64
		v     valueEntry
		min   float64
		max   float64
	}{
		{"nothing", 0, valueEntry{}, 0, 0},
		{"decision alone", 0.6, valueEntry{}, 0.6, 0.6},
		{"returned three times passes the threshold", 0, valueEntry{topk: 3}, 0.5, 0.5},
		{"returned once does not", 0, valueEntry{topk: 1}, 0.16, 0.17},
		{"positive feedback passes", 0, valueEntry{pos: 1}, 0.6, 0.6},
		{"negative feedback damps a decision below the threshold", 0.6, valueEntry{neg: 1}, 0.24, 0.24},
		{"bounded", 1, valueEntry{topk: 100, pos: 100}, 1, 1},
	} {
		got := valueScore(&o, tc.rules, &tc.v)
		if got < tc.min-1e-9 || got > tc.max+1e-9 {
			t.Errorf("%s: score %v, want [%v, %v]", tc.name, got, tc.min, tc.max)
		}
	}
}
