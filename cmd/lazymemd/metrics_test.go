package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/internal/logbuf"
)

// scrape fetches /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// labels (name=value pairs); a histogram's is its sample count. -1 when
// absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics: the Prometheus export parses and moves when work is done:
// requests per route, recall stages, the embedder and its cache, the
// log's and the index's sizes.
func TestMetrics(t *testing.T) {
	ts, _ := newTestServer(t, defaultMaxBody)
	before := scrape(t, ts.URL)
	for _, name := range []string{"lazymem_log_records", "lazymem_index_docs", "lazymem_background_errors_total", "lazymem_index_repairs",
		"lazymem_embed_cache_hit_ratio", "lazymem_embedder_calls_total", "lazymem_log_seal_assists_total", "lazymem_log_assist_timeouts_total"} {
		if value(before, name) != 0 {
			t.Errorf("%s on an empty store: %v", name, value(before, name))
		}
	}
	for range 3 {
		if st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a","text":"the pool size of the staging database is 50"}`, nil); st != 200 {
			t.Fatal(st)
		}
	}
	for range 2 { // the second recall finds the first one's vectors in the cache
		if st := call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a","text":"staging database pool"}`, nil); st != 200 {
			t.Fatal(st)
		}
	}
	if st := call(t, "GET", ts.URL+"/v1/records/99", "", nil); st != 404 {
		t.Fatal(st)
	}
	if st := call(t, "POST", ts.URL+"/v1/forget", `{"agent":"a","ids":[3]}`, nil); st != 200 {
		t.Fatal(st)
	}
	after := scrape(t, ts.URL)
	for _, c := range []struct {
		name   string
		labels []string
		want   func(float64) bool
	}{
		{"lazymemd_http_requests_total", []string{"op", "appendRecords", "code", "200"}, eq(3)},
		{"lazymemd_http_requests_total", []string{"op", "recall", "code", "200"}, eq(2)},
		{"lazymemd_http_requests_total", []string{"op", "getRecord", "code", "404"}, eq(1)},
		{"lazymemd_http_request_duration_seconds", []string{"op", "recall"}, eq(2)},
		{"lazymem_recall_stage_duration_seconds", []string{"stage", "embed"}, eq(2)},
		{"lazymem_recall_stage_duration_seconds", []string{"stage", "total"}, eq(2)},
		{"lazymem_recall_items_total", []string{"kind", "candidates"}, gt(0)},
		{"lazymem_log_records", nil, eq(3)},
		{"lazymem_appended_total", nil, eq(3)},
		{"lazymem_recalls_total", nil, eq(2)},
		{"lazymem_forgotten_total", nil, eq(1)},
		{"lazymemd_http_requests_total", []string{"op", "forget", "code", "200"}, eq(1)},
		{"lazymem_index_docs", nil, eq(2)},
		{"lazymem_log_raw_bytes", nil, gt(0)},
		{"lazymem_embedder_calls_total", nil, gt(0)},
		{"lazymem_embedder_texts_total", nil, gt(0)},
		{"lazymem_embed_cache_hits_total", []string{"tier", "memory"}, gt(0)},
		{"lazymem_embed_cache_hit_ratio", nil, func(v float64) bool { return v > 0 && v < 1 }},
	} {
		if v := value(after, c.name, c.labels...); !c.want(v) {
			t.Errorf("%s%v = %v", c.name, c.labels, v)
		}
	}
}

func eq(w float64) func(float64) bool { return func(v float64) bool { return v == w } }
func gt(w float64) func(float64) bool { return func(v float64) bool { return v > w } }

// TestRequestLog: each request gets an id, echoed in X-Request-Id and in
// its JSON log line; a usable client id is kept, an unusable one replaced.
func TestRequestLog(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs logbuf.Buffer
	s := newServer(db, defaultLimits())
	s.log = newLogger("json", &logs)
	ts := httptest.NewServer(s.routes())
	defer ts.Close()
	for _, tc := range []struct{ sent, want string }{
		{"trace-42.abc", "trace-42.abc"},
		{"", ""},
		{"has space", ""},
		{strings.Repeat("x", 65), ""},
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/stats", nil)
		if tc.sent != "" {
			req.Header.Set("X-Request-Id", tc.sent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		if tc.want != "" && got != tc.want || tc.want == "" && !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got) {
			t.Errorf("sent %q: X-Request-Id %q", tc.sent, got)
		}
		var line struct {
			Msg, ID, Path string
			Status        int
		}
		waitFor(t, "log line", func() bool { return strings.Contains(logs.String(), got) })
		for _, l := range bytes.Split([]byte(logs.String()), []byte("\n")) {
			if bytes.Contains(l, []byte(got)) {
				if err := json.Unmarshal(l, &line); err != nil {
					t.Fatalf("log line %s: %v", l, err)
				}
			}
		}
		if line.Msg != "request" || line.ID != got || line.Path != "/v1/stats" || line.Status != 200 {
			t.Errorf("log line %+v", line)
		}
	}
}

// TestBackgroundErrorLogged: the daemon's OnBackgroundError logs and counts.
func TestBackgroundErrorLogged(t *testing.T) {
	var logs logbuf.Buffer
	logger := newLogger("text", &logs)
	s := newServer(nil, defaultLimits())
	on := backgroundReporter(s, logger)
	on(errSample)
	if !strings.Contains(logs.String(), "background error") || !strings.Contains(logs.String(), "sample failure") {
		t.Fatalf("log: %s", logs.String())
	}
	var m dto.Metric
	if err := s.prom.bgErrors.Write(&m); err != nil || m.Counter.GetValue() != 1 {
		t.Fatalf("counter: %v %v", m.Counter, err)
	}
}

var errSample = errors.New("lazymem: sample failure")

// TestLogRepairs: what the open repaired is logged at start, each
// dropped index segment on its own line.
func TestLogRepairs(t *testing.T) {
	var logs logbuf.Buffer
	logRepairs(newLogger("json", &logs), engine.Metrics{
		IndexRepaired: "/db/index.corrupt-1", BackgroundErrors: 2,
		Index: index.Metrics{Repairs: []index.Repair{{File: "000004.lzi", Lo: 1, Hi: 90, Reason: index.RepairCorrupt}}},
	})
	out := logs.String()
	for _, want := range []string{`"moved_to":"/db/index.corrupt-1"`, `000004.lzi (ids 1-90)`, `"msg":"background errors while opening","count":2`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	logs = logbuf.Buffer{}
	logRepairs(newLogger("json", &logs), engine.Metrics{})
	if logs.String() != "" {
		t.Errorf("a clean open logged: %s", logs.String())
	}
}
