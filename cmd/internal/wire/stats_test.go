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
		{engine.WorkingMemoryMetrics{}, WorkingMemory{}, nil},
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

// TestLogMetricsCarried: every field of segment.Metrics set to a
// non-zero value shows in the JSON of the log's metrics, so a field
// FromMetrics forgets to copy fails here (TestMetricsCoverEngine only
// checks that the wire type has it).
func TestLogMetricsCarried(t *testing.T) {
	var l segment.Metrics
	lv := reflect.ValueOf(&l).Elem()
	for i := range lv.NumField() {
		switch f := lv.Field(i); f.Kind() {
		case reflect.Uint64:
			f.SetUint(uint64(i + 2)) // Next >= 2: records is next_id - 1
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 2))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("x")
		default:
			t.Fatalf("segment.Metrics.%s: no test value for a %s", lv.Type().Field(i).Name, f.Kind())
		}
	}
	b, err := json.Marshal(FromMetrics(engine.Metrics{Log: l}).Log)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	wt := reflect.TypeOf(LogMetrics{})
	for i := range wt.NumField() {
		key := strings.Split(wt.Field(i).Tag.Get("json"), ",")[0]
		if v, ok := got[key]; !ok || v == "" || v == float64(0) || v == false {
			t.Errorf("%s: %v in %s, want the log's value carried", key, v, b)
		}
	}
}

// TestStatsCoverEngine fails when engine.RecallStats gains a field the
// recall reply's stats do not carry: a new count must reach POST
// /v1/recall (and docs/openapi.yaml) on purpose, not be dropped silently.
// Durations is carried as stage_us.
func TestStatsCoverEngine(t *testing.T) {
	et, wt := reflect.TypeOf(engine.RecallStats{}), reflect.TypeOf(Stats{})
	for i := range et.NumField() {
		name := et.Field(i).Name
		if name == "Durations" {
			name = "Micros"
		}
		if _, ok := wt.FieldByName(name); !ok {
			t.Errorf("engine.RecallStats.%s has no counterpart in wire.Stats", et.Field(i).Name)
		}
	}
	if got, want := wt.NumField(), et.NumField(); got != want {
		t.Errorf("wire.Stats has %d fields, want the engine's %d", got, want)
	}
	// Every engine field set to a non-zero value shows in the JSON.
	var st engine.RecallStats
	ev := reflect.ValueOf(&st).Elem()
	for i := range ev.NumField() {
		switch f := ev.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"x"}))
		}
	}
	b, err := json.Marshal(FromResult(&engine.Result{Stats: st}).Stats)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for i := range wt.NumField() {
		f := wt.Field(i)
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		v, ok := got[key]
		if f.Name == "Since" || f.Name == "Until" {
			continue // time values, left zero above: omitted
		}
		if !ok || v == "" || v == float64(0) {
			t.Errorf("%s: %v in %s, want the engine's value carried", key, v, b)
		}
	}
}

// TestStatsNeverNull: an empty recall's stats have [] and "" where the
// engine has nil lists and empty strings, so clients need no null case.
func TestStatsNeverNull(t *testing.T) {
	b, err := json.Marshal(FromResult(&engine.Result{}))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "null") {
		t.Errorf("null in %s", s)
	}
	for _, want := range []string{`"speakers":[]`, `"notes":[]`, `"dense_text":""`, `"time_expr":""`, `"expansion":""`, `"disk_hits":0`, `"shared":0`, `"fallback":0`, `"speaker_records":0`} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %s: %s", want, s)
		}
	}
	if strings.Contains(s, `"since"`) || strings.Contains(s, `"until"`) {
		t.Errorf("an open window has no since/until: %s", s)
	}
}
