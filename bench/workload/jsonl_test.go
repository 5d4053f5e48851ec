package workload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jsonRecord mirrors the ingest format of cmd/lazymem.
type jsonRecord struct {
	Time    string              `json:"time"`
	Agent   string              `json:"agent"`
	Session string              `json:"session"`
	Role    string              `json:"role"`
	Text    string              `json:"text"`
	Meta    map[string][]string `json:"meta"`
}

func TestAppendJSONRoundTrip(t *testing.T) {
	var buf []byte
	for i, r := range generate(t, Config{Seed: 2, Records: 3000}) {
		buf = AppendJSON(buf[:0], &r)
		if strings.ContainsRune(string(buf), '\n') {
			t.Fatalf("record %d: line contains a newline", i)
		}
		var got jsonRecord
		dec := json.NewDecoder(strings.NewReader(string(buf)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("record %d: %v\n%s", i, err, buf)
		}
		tm, err := time.Parse(time.RFC3339Nano, got.Time)
		if err != nil || !tm.Equal(r.Time) {
			t.Fatalf("record %d: time %q (%v), want %v", i, got.Time, err, r.Time)
		}
		if got.Agent != r.Agent || got.Session != r.Session || got.Role != r.Role || got.Text != r.Text || !reflect.DeepEqual(got.Meta, r.Meta) {
			t.Fatalf("record %d: round trip\n got %+v\nwant %+v", i, got, r)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "tab\tnl\ncr\r\x00\x1f", "中文 ok", "\u2028\u2029", "bad\xffutf8", "emoji 🙂"} {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if got != w {
			t.Errorf("%q: decoded %q, encoding/json gives %q", s, got, w)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "中"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		if err := json.Unmarshal(want, &w); err != nil || got != w {
			t.Fatalf("%q: decoded %q, encoding/json gives %q", s, got, w)
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	recs := generate(b, Config{Seed: 1, Records: 10000})
	var buf []byte
	var n int64
	for _, r := range recs {
		n += int64(len(AppendJSON(buf[:0], &r)))
	}
	b.SetBytes(n / int64(len(recs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf = AppendJSON(buf[:0], &recs[i%len(recs)])
		i++
	}
}
