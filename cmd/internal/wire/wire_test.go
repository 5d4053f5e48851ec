package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestParseRecord(t *testing.T) {
	r, err := ParseRecord([]byte(`{"time":"2026-04-30T09:00:00+02:00","agent":"a1","session":"s1","role":"user",
		"text":"ship it","meta":{"project":"atlas","tags":["db","perf"]}}`), now)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Record{Time: time.Date(2026, 4, 30, 7, 0, 0, 0, time.UTC), Agent: "a1", Session: "s1", Role: "user",
		Text: "ship it", Meta: map[string][]string{"project": {"atlas"}, "tags": {"db", "perf"}}}
	if !r.Time.Equal(want.Time) {
		t.Fatalf("time %v, want %v", r.Time, want.Time)
	}
	r.Time = want.Time
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	r, err = ParseRecord([]byte(`{"agent":"a","text":""}`), now)
	if err != nil || !r.Time.Equal(now) || r.Text != "" {
		t.Fatalf("no time: %+v, %v; want the time now and an empty text left to the engine", r, err)
	}
}

func TestParseRecordErrors(t *testing.T) {
	for _, tc := range []struct{ in, field, msg string }{
		{`{"agent":"a"}`, "text", "missing"},
		{`{"agent":"a","text":"x","time":"yesterday"}`, "time", "not an RFC 3339 time"},
		{`{"agent":"a","text":"x","time":"2026-13-01T00:00:00Z"}`, "time", "not an RFC 3339 time"},
		{`{"agent":"a","text":"x","meta":{"k":["a",1]}}`, "meta.k", "want a string or an array of strings"},
		{`{"agent":"a","text":"x","meta":{"k":{"x":"y"}}}`, "meta.k", "want a string or an array of strings"},
		{`{"agent":1,"text":"x"}`, "agent", "want a string, got JSON number"},
		{`{"agent":"a","text":"x","colour":"red"}`, "colour", "unknown field"},
		{`{"agent":"a","text":"x"} {"agent":"b","text":"y"}`, "", "more than one JSON value"},
		{`[{"agent":"a","text":"x"}]`, "", "not a JSON object of a record"},
		{`{"agent":"a","text":"x"`, "", "not a JSON object of a record"},
		{"{\"agent\":\"\xff\",\"text\":\"x\"}", "", "not valid UTF-8"},
		{``, "", "not a JSON object of a record"},
	} {
		_, err := ParseRecord([]byte(tc.in), now)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want an *Error wrapping ErrInvalid", tc.in, err)
			continue
		}
		if e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%s: field %q msg %q, want field %q and a message containing %q", tc.in, e.Field, e.Msg, tc.field, tc.msg)
		}
	}
}

func TestParseRecords(t *testing.T) {
	one, err := ParseRecords([]byte(`{"agent":"a","text":"x"}`), now)
	if err != nil || len(one) != 1 || one[0].Text != "x" {
		t.Fatalf("one record: %+v, %v", one, err)
	}
	// A bare array, the first guess for several records, says the form.
	if _, err := ParseRecords([]byte(` [{"agent":"a","text":"x"}]`), now); err == nil || !strings.Contains(err.Error(), `{"records": [...]}`) {
		t.Errorf("array body: %v, want the batch form named", err)
	}
	two, err := ParseRecords([]byte(`{"records":[{"agent":"a","text":"x"},{"agent":"b","text":"y","role":"user"}]}`), now)
	if err != nil || len(two) != 2 || two[1].Agent != "b" || two[1].Role != "user" {
		t.Fatalf("two records: %+v, %v", two, err)
	}
	for _, tc := range []struct{ in, field string }{
		{`{"records":[{"agent":"a","text":"x"},{"agent":"b"}]}`, "records[1].text"},
		{`{"records":[{"agent":"a","text":"x","time":"noon"}]}`, "records[0].time"},
		{`{"records":[]}`, "records"},
		{`{"records":null}`, "records"},
		{`{"records":{"agent":"a"}}`, "records"},
		{`{"records":[],"extra":1}`, "extra"},
	} {
		_, err := ParseRecords([]byte(tc.in), now)
		var e *Error
		if !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%s: err %v, want field %q", tc.in, err, tc.field)
		}
	}
}

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery([]byte(`{"text":"what broke yesterday?","agent":"a1","agents":["a2"],"sessions":["s1"],"roles":["user"],
		"since":"2026-04-01T00:00:00Z","until":"2026-05-01T00:00:00Z","where":{"project":"atlas","tags":["db","perf"]},
		"not":{"draft":"yes"},"k":5,"candidates":80,"current_session":"s9","session_turns":4,"mode":"sparse",
		"fusion":"rrf","dense_weight":0.3,"speaker_boost":1.5,"recency_half_life":"72h","recency_weight":0.2,
		"now":"2026-05-01T12:00:00Z","synonyms":{"db":["database"]},"explain":true,"tier":"core",
		"fallback_scan":32,"no_expansion":true,"feedback_docs":3,"max_dense_scan":500}`))
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Query{Text: "what broke yesterday?", Agent: "a1", Agents: []string{"a2"}, Sessions: []string{"s1"},
		Roles: []string{"user"}, Since: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		Where: map[string][]string{"project": {"atlas"}, "tags": {"db", "perf"}}, Not: map[string][]string{"draft": {"yes"}},
		K: 5, Candidates: 80, CurrentSession: "s9", SessionTurns: 4, Mode: engine.ModeSparse, Fusion: engine.FusionRRF,
		DenseWeight: 0.3, SpeakerBoost: 1.5, RecencyHalfLife: 72 * time.Hour, RecencyWeight: 0.2, Now: now,
		ParseTime: true, Synonyms: map[string][]string{"db": {"database"}}, Explain: true, Tier: engine.TierCore,
		FallbackScan: 32, NoExpansion: true, FeedbackDocs: 3, MaxDenseScan: 500}
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("got  %+v\nwant %+v", q, want)
	}
	// Every field of the JSON query reaches the engine's query: a field
	// added to Query but dropped by ParseQuery leaves its zero value here.
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("engine.Query.%s is not set by the full query above (a wire field missing or dropped?)", v.Type().Field(i).Name)
		}
	}
	q, err = ParseQuery([]byte(`{"agent":"a","recency_half_life":"off"}`))
	if err != nil || q.RecencyHalfLife >= 0 {
		t.Fatalf("recency_half_life off: %v, %v", q.RecencyHalfLife, err)
	}
	q, err = ParseQuery([]byte(`{"agent":"a","parse_time":false}`))
	if err != nil || q.ParseTime || q.Agent != "a" {
		t.Fatalf("parse_time false: %+v, %v", q, err)
	}
	for _, tc := range []struct{ in, field string }{
		{`{"agent":"a","since":"last week"}`, "since"},
		{`{"agent":"a","until":"2026-05-01"}`, "until"},
		{`{"agent":"a","now":"now"}`, "now"},
		{`{"agent":"a","k":"ten"}`, "k"},
		{`{"agent":"a","k":2.5}`, "k"},
		{`{"agent":"a","where":{"k":3}}`, "where.k"},
		{`{"agent":"a","not":{"k":[true]}}`, "not.k"},
		{`{"agent":"a","recency_half_life":"3 days"}`, "recency_half_life"},
		{`{"agent":"a","recency_half_life":"-1h"}`, "recency_half_life"},
		{`{"agent":"a","limit":3}`, "limit"},
		{`{"agent":"a","parse_time":"yes"}`, "parse_time"},
		{`"a"`, ""},
	} {
		_, err := ParseQuery([]byte(tc.in))
		var e *Error
		if !errors.As(err, &e) || e.Field != tc.field {
			t.Errorf("%s: err %v, want field %q", tc.in, err, tc.field)
		}
	}
}

func TestFromResult(t *testing.T) {
	res := &engine.Result{Memories: []engine.Memory{{Record: engine.Record{ID: 7, Agent: "a", Text: "x"}, Score: 1, Sparse: 2, Dense: 0.5}}}
	res.Stats.Mode = engine.ModeLazy
	res.Stats.Durations.Total = 1500 * time.Microsecond
	out := FromResult(res)
	if len(out.Memories) != 1 || out.Memories[0].ID != 7 || out.Memories[0].Dense != 0.5 || out.Stats.Micros["total"] != 1500 || out.Stats.Since != nil {
		t.Fatalf("%+v", out)
	}
	if empty := FromResult(&engine.Result{}); empty.Memories == nil {
		t.Fatal("no memories must encode as [], not null")
	}
}

// FuzzParseRecords: any body gives records or an *Error, never a panic; an
// accepted record's strings are valid UTF-8, and a body holding one record
// gives what ParseRecord gives.
func FuzzParseRecords(f *testing.F) {
	for _, s := range []string{
		`{"agent":"a","text":"x"}`,
		`{"records":[{"agent":"a","text":"x","meta":{"k":["v"]}},{"agent":"b","text":"y","time":"2026-01-02T03:04:05Z"}]}`,
		`{"records":[]}`, `{"records":[1]}`, `{"agent":"a","text":"x","meta":{"k":["a",1]}}`,
		"{\"agent\":\"\xff\",\"text\":\"x\"}", `{"agent":"a","text":"x","time":"2026-13-01T00:00:00Z"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := ParseRecords(body, now)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatal("no records and no error")
		}
		for _, r := range recs {
			for _, s := range []string{r.Agent, r.Session, r.Role, r.Text} {
				if !utf8.ValidString(s) {
					t.Fatalf("accepted invalid UTF-8 %q", s)
				}
			}
			for k, vs := range r.Meta {
				if !utf8.ValidString(k) {
					t.Fatalf("accepted invalid UTF-8 meta key %q", k)
				}
				for _, v := range vs {
					if !utf8.ValidString(v) {
						t.Fatalf("accepted invalid UTF-8 meta value %q", v)
					}
				}
			}
		}
	})
}

// FuzzParseQuery: any body gives a query or an *Error, never a panic.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		`{"agent":"a","text":"what did we decide yesterday?"}`,
		`{"agent":"a","where":{"k":["v","w"]},"since":"2026-01-01T00:00:00Z","k":5,"recency_half_life":"72h"}`,
		`{"agent":"a","k":"x"}`, `{"agent":"a","where":{"k":3}}`, `{"agent":"a","now":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := ParseQuery(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if !utf8.ValidString(q.Text) || !utf8.ValidString(q.Agent) {
			t.Fatalf("accepted invalid UTF-8: %+v", q)
		}
		if q.RecencyHalfLife < 0 {
			t.Fatalf("negative half-life %v accepted", q.RecencyHalfLife)
		}
	})
}

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{
		`{"records":[]}`: true, ` {"agent":"a","Records":null}`: true, `{"agent":"a","text":"x"}`: false,
		`{"meta":{"records":[]}}`: false, `[]`: false, ``: false, `{"records"`: false,
	} {
		if got := IsBatch([]byte(in)); got != want {
			t.Errorf("IsBatch(%s) = %v, want %v", in, got, want)
		}
	}
}

// TestStoredRecordNoNull: a record without session, role or labels reads
// back with "", "" and {}: every field present, never null.
func TestStoredRecordNoNull(t *testing.T) {
	b, err := json.Marshal(FromRecord(engine.Record{ID: 1, Time: now, Agent: "a", Text: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"id":1,"time":"2026-05-01T12:00:00Z","agent":"a","session":"","role":"","text":"x","meta":{}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
