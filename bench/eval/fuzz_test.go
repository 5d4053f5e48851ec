package eval

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseEmbedder: the --embedder spec is user input. It never panics,
// and an accepted spec is hash, replay with a directory, or use with an
// optional directory, nothing else.
func FuzzParseEmbedder(f *testing.F) {
	for _, s := range []string{"hash", "replay:../data", "use", "use:/models/use-lite", "", "hash:", "replay:", ":", "replay:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		kind, arg, err := parseEmbedder(spec)
		if err != nil {
			if !errors.Is(err, ErrConfig) && !errors.Is(err, ErrEmbedder) {
				t.Fatalf("%q: error %v wraps neither ErrConfig nor ErrEmbedder", spec, err)
			}
			return
		}
		switch {
		case kind == "hash" && arg == "" && spec == "hash":
		case kind == "replay" && arg != "" && spec == "replay:"+arg:
		case kind == "use" && (spec == "use" && arg == "" || spec == "use:"+arg):
		default:
			t.Fatalf("%q accepted as %q, %q", spec, kind, arg)
		}
	})
}

// FuzzRecallJSON: Recall's decoder accepts what its encoder writes and
// rejects non-integer keys without panicking.
func FuzzRecallJSON(f *testing.F) {
	for _, s := range []string{`{"1":0.5,"10":1}`, `{}`, `{"x":1}`, `[]`, `{"5":"a"}`, `{"-3":0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var r Recall
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return // not produced by the encoder
			}
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %v: %v", r, err)
		}
		var back Recall
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if !reflect.DeepEqual(r, back) && !(len(r) == 0 && len(back) == 0) {
			t.Fatalf("round trip %v -> %s -> %v", r, out, back)
		}
		if !strings.HasPrefix(string(out), "{") {
			t.Fatalf("not an object: %s", out)
		}
	})
}
