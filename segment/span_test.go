package segment

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestSpanPolicy: the tail's span, and the segments' when they are zstd
// frames, prefer Pebble's fast compression; the other spans keep the
// default policy; each span ends where spanByPrefix says.
func TestSpanPolicy(t *testing.T) {
	for _, zstdSegs := range []bool{true, false} {
		f := spanByPrefix(zstdSegs)
		for _, c := range []struct {
			start []byte
			fast  bool
			end   []byte
		}{
			{nil, false, []byte{prefixTail}},
			{[]byte{prefixDeleted, 1}, false, []byte{prefixTail}},
			{[]byte{prefixName, 1}, false, []byte{prefixTail}},
			{[]byte{prefixTail, 1}, true, []byte{prefixTail + 1}},
			{[]byte{prefixSegment, 1}, zstdSegs, []byte{prefixSegment + 1}},
			{[]byte{prefixWords, 1}, false, nil},
			{[]byte{prefixDict, 1}, false, nil},
		} {
			p, end, err := f(c.start)
			if err != nil || p != (pebble.SpanPolicy{PreferFastCompression: c.fast}) || !bytes.Equal(end, c.end) {
				t.Errorf("zstd segments %v, start %q: policy %+v, end %q, err %v; want fast %v, end %q",
					zstdSegs, c.start, p, end, err, c.fast, c.end)
			}
		}
	}
}
