package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// TestMetricsCoverEngine fails when the engine's metrics gain a field the
// snake-case form does not carry: a new counter must reach GET /v1/stats
// (and docs/openapi.yaml) on purpose, not be dropped silently.
func TestMetricsCoverEngine(t *testing.T) {
	for _, c := range []struct {
		engine, wire any
		extra        []string // wire fields with no engine field of the same name
	}{
		{engine.Metrics{}, Metrics{}, []string{"Scope"}},
		{segment.Metrics{}, LogMetrics{}, []string{"Records"}}, // Next is NextID
		{index.Metrics{}, IndexMetrics{}, nil},
		{engine.CacheMetrics{}, CacheMetrics{}, nil},
		{engine.RetentionMetrics{}, Retention{}, nil},
	} {
		et, wt := reflect.TypeOf(c.engine), reflect.TypeOf(c.wire)
		for i := range et.NumField() {
			name := et.Field(i).Name
			if name == "Next" {
				name = "NextID"
			}
			if _, ok := wt.FieldByName(name); !ok {
				t.Errorf("%s.%s has no counterpart in wire.%s", et, et.Field(i).Name, wt.Name())
			}
		}
		if got, want := wt.NumField(), et.NumField()+len(c.extra); got != want {
			t.Errorf("wire.%s has %d fields, want %d (the engine's %d and %v)", wt.Name(), got, want, et.NumField(), c.extra)
		}
	}
}

// TestFromMetrics: the JSON is snake case throughout, repairs are never
// null, and the records count is next_id - 1.
func TestFromMetrics(t *testing.T) {
	m := engine.Metrics{Appended: 3, Log: segment.Metrics{Next: 4}, Index: index.Metrics{Docs: 3}, Cache: engine.CacheMetrics{Embedder: "hash"}}
	b, err := json.Marshal(FromMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(string, any)
	walk = func(at string, x any) {
		if o, ok := x.(map[string]any); ok {
			for k, e := range o {
				if k != strings.ToLower(k) {
					t.Errorf("%s.%s is not snake case", at, k)
				}
				walk(at+"."+k, e)
			}
		}
	}
	walk("$", v)
	s := string(b)
	for _, want := range []string{`"scope":"store"`, `"records":3`, `"next_id":4`, `"repairs":[]`, `"embedder":"hash"`} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %s: %s", want, s)
		}
	}
}
