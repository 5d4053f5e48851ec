package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// The reference record decoder: encoding/json into Record, as the package
// decoded before scan.go. FuzzRecordsMatchReference checks that the
// scanner accepts exactly what it accepts and gives the same records.

// ParseRecord decodes one JSON object into a record. A missing time is
// now; a missing text is an error (an empty one is the engine's to
// reject). Errors are *Error naming the field.
func refParseRecord(data []byte, now time.Time) (engine.Record, error) {
	var jr Record
	if err := decodeStrict(data, &jr, "a record"); err != nil {
		return engine.Record{}, err
	}
	return jr.refToEngine(now)
}

func (jr *Record) refToEngine(now time.Time) (engine.Record, error) {
	r := engine.Record{Agent: jr.Agent, Session: jr.Session, Role: jr.Role}
	if jr.Text == nil {
		return r, fieldErr("text", "missing")
	}
	r.Text = *jr.Text
	r.Time = now
	if jr.Time != nil {
		t, err := parseTime("time", *jr.Time)
		if err != nil {
			return r, err
		}
		r.Time = t
	}
	meta, err := parseMeta("meta", jr.Meta)
	if err != nil {
		return r, err
	}
	r.Meta = meta
	return r, nil
}

// ParseRecords decodes a body holding either one record object or
// {"records": [record, ...]}. Errors name the record ("records[3].time").
// An empty list is an error: there is nothing to append.
func refParseRecords(data []byte, now time.Time) ([]engine.Record, error) {
	var probe struct {
		Records json.RawMessage `json:"records"`
	}
	// A record never has a "records" field (strict decoding rejects it),
	// so its presence tells the two forms apart.
	if err := json.Unmarshal(data, &probe); err != nil || probe.Records == nil {
		r, err := refParseRecord(data, now)
		if err != nil {
			return nil, err
		}
		return []engine.Record{r}, nil
	}
	var batch struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decodeStrict(data, &batch, `{"records": [...]}`); err != nil {
		return nil, err
	}
	if len(batch.Records) == 0 {
		return nil, fieldErr("records", "empty: want at least one record")
	}
	out := make([]engine.Record, len(batch.Records))
	for i, raw := range batch.Records {
		r, err := refParseRecord(raw, now)
		if err != nil {
			return nil, prefixed(err, "records["+strconv.Itoa(i)+"]")
		}
		out[i] = r
	}
	return out, nil
}

// FuzzRecordsMatchReference: the scanner and the encoding/json reference
// accept the same bodies and give the same records, for both the
// one-record and the either-form parsers.
func FuzzRecordsMatchReference(f *testing.F) {
	for _, s := range matchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkMatch(t, body)
	})
}

func checkMatch(t *testing.T, body []byte) {
	t.Helper()
	got, err := ParseRecords(body, now)
	want, werr := refParseRecords(body, now)
	if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRecords(%q):\n got  %+v, %v\n want %+v, %v", body, got, err, want, werr)
	}
	var e *Error
	if err != nil && !errors.As(err, &e) {
		t.Fatalf("ParseRecords(%q): %v is not an *Error", body, err)
	}
	one, err := ParseRecord(body, now)
	wone, werr := refParseRecord(body, now)
	if (err == nil) != (werr == nil) || !reflect.DeepEqual(one, wone) {
		t.Fatalf("ParseRecord(%q):\n got  %+v, %v\n want %+v, %v", body, one, err, wone, werr)
	}
}

// matchSeeds are bodies on the edges of encoding/json's behaviour.
var matchSeeds = []string{
	`{"agent":"a","text":"x"}`,
	`{"records":[{"agent":"a","text":"x","meta":{"k":["v"]}},{"agent":"b","text":"y","time":"2026-01-02T03:04:05Z"}]}`,
	`{"Agent":"a","TEXT":"x"}`,                                   // keys fold
	`{"ſession":"s","agent":"a","text":"x"}`,                     // long s folds to s
	`{"agent":"a","text":"x","agent":null}`,                      // null keeps a string
	`{"agent":"a","text":"x","text":null}`,                       // null unsets text
	`{"agent":"a","text":"x","meta":{"a":"1"},"meta":{"b":"2"}}`, // meta objects add up
	`{"agent":"a","text":"x","meta":{"a":"1"},"meta":null}`,
	`{"agent":"a","text":"x","meta":{"k":1,"k":"fine"}}`, // the last value of a key wins
	`{"agent":"a","text":"x","meta":{"k":"fine","k":[1]}}`,
	`{"agent":"a","text":"x","meta":{"k":["a",null]}}`,
	`{"agent":"a","text":"x","meta":{"k":null}}`,
	`{"agent":"a","text":"x","meta":{"k":[]}}`,
	`{"agent":"a","text":"x","meta":{}}`,
	`{"agent":"a","text":"\ud83d\ude00 \ud800 \u00e9\n\/"}`,
	`{"agent":"a","text":"x"} `, "\n{\"agent\":\"a\",\"text\":\"x\"}\r\n",
	`{"agent":"a","text":"x"}}`, `{"agent":"a","text":"x"} {}`, "\v{\"agent\":\"a\",\"text\":\"x\"}",
	`{"records":null}`, `{"records":[]}`, `{"records":[null]}`, `{"records":{}}`, `{"RECORDS":[{"agent":"a","text":"x"}]}`,
	`{"records":[{"agent":"a","text":"x"}],"records":[{"agent":"b","text":"y"}]}`,
	`{"records":5,"records":[{"agent":"b","text":"y"}]}`,
	`{"records":[{"agent":"a","text":"x"}],"agent":"a"}`,
	`{"agent":"a","text":"x","records":[]}`,
	`{"agent":"a","text":"x","n":[1,2.5e-3,-0,{"a":[true,false,null]}]}`,
	`{"agent":"a","text":"x","n":01}`, `{"agent":"a","text":"x","n":1.}`, `{"agent":"a","text":"x","n":-}`,
	`{"agent":5,"text":"x"}`, `{"agent":"a","text":5}`, `{"agent":"a","text":"x","time":5}`, `{"agent":"a","text":"x","meta":[]}`,
	`null`, `[]`, `"x"`, `5`, ``, `{`, `{"agent"`, `{"agent":"a",}`, `{"agent":"a" "text":"x"}`,
	"{\"agent\":\"a\",\"text\":\"x\x01\"}", `{"agent":"a","text":"\x"}`, `{"agent":"a","text":"\u12"}`,
	`{"agent":"a","text":"x","time":null}`, `{"agent":"a","text":"x","time":"2026-13-01T00:00:00Z"}`,
	"{\"agent\":\"a\",\"text\":\"x\"}\x00", "{\"records\":[{\"agent\":\"a\",\"text\":\"x\"}]}\x00",
}

func TestRecordsMatchReference(t *testing.T) {
	for _, s := range matchSeeds {
		checkMatch(t, []byte(s))
	}
}
