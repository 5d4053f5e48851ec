package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/lazymem/lazymem/internal/faultfs"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
	"github.com/lazymem/lazymem/segment"
)

// specRouter loads docs/openapi.yaml and its router.
func specRouter(t *testing.T) routers.Router {
	t.Helper()
	doc, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return router
}

// validateReply checks a real reply (status, headers, body) against the
// operation of method and path in the description, as TestOpenAPIReplies
// does.
func validateReply(t *testing.T, router routers.Router, method, path string, status int, hdr http.Header, body []byte) {
	t.Helper()
	vreq, _ := http.NewRequest(method, "http://127.0.0.1:7373"+path, nil)
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s: not in the description: %v", method, path, err)
	}
	vreq.Header = http.Header{}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: hdr,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s -> %d: the reply does not match the description: %v\nbody: %.400s", method, path, status, err, body)
	}
}

// errorCode decodes an error reply's code.
func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e errorReply
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error reply %s: %v", body, err)
	}
	return e.Error.Code
}

// faultRecords are n records of one agent, each text naming its index.
func faultRecords(n int) []engine.Record {
	recs := make([]engine.Record, n)
	for i := range recs {
		recs[i] = engine.Record{Time: time.Date(2026, 5, 1, 0, i, 0, 0, time.UTC), Agent: "a1", Session: fmt.Sprintf("s%d", i/10), Role: "user",
			Text: fmt.Sprintf("note %d: the connection pool of service-%d was resized to %d workers", i, i%13, i*7)}
	}
	return recs
}

// serveFaults serves db with the daemon's real handler until the test ends.
func serveFaults(t *testing.T, db *engine.DB) string {
	t.Helper()
	s := newServer(db, defaultLimits())
	s.clock = func() time.Time { return testNow }
	ts := httptest.NewServer(s.routes())
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestDaemonDamagedBlock: a store whose log has a damaged Pebble data
// block (sealed segments in an sstable, bytes flipped in its middle) is
// served; every record of the damaged block answers 500 with code
// "corrupt" (valid against the description), every other one 200 with its
// text; a recall of records outside the block answers 200; the server goes
// on serving; /v1/stats counts the corrupt reads; and Verify on the closed
// store names the damaged segments, covering exactly the ids that
// answered 500.
func TestDaemonDamagedBlock(t *testing.T) {
	const n = 400
	dir := filepath.Join(t.TempDir(), "mem")
	// Row segments: the damage lands in the middle of the largest sstable,
	// which must be a block of segments; columnar segments of these short
	// records make the sstable so small that its middle is the block Open
	// reads first.
	opts := engine.Options{Log: segment.Options{SegmentRecords: 20, ReserveBytes: -1, DisableColumns: true}}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	recs := faultRecords(n)
	if _, err := db.AppendBatch(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	storetest.DamageLogBlock(t, filepath.Join(dir, "log"), opts.Log)

	db, err = engine.Open(dir, opts)
	if err != nil {
		t.Fatalf("open of a store with a damaged block: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			db.Close()
		}
	})
	url := serveFaults(t, db)
	router := specRouter(t)

	var before wire.Metrics
	if st := call(t, "GET", url+"/v1/stats", "", &before); st != 200 {
		t.Fatalf("stats: %d", st)
	}
	damaged := map[uint64]bool{}
	for id := uint64(1); id <= n; id++ {
		path := fmt.Sprintf("/v1/records/%d", id)
		status, hdr, body := send(t, url+path, replyCase{method: "GET", path: path})
		switch status {
		case http.StatusOK:
			var rec wire.StoredRecord
			if err := json.Unmarshal(body, &rec); err != nil {
				t.Fatal(err)
			}
			if rec.ID != id || rec.Text != recs[id-1].Text {
				t.Fatalf("GET %d: %+v, want the text %q", id, rec, recs[id-1].Text)
			}
		case http.StatusInternalServerError:
			if code := errorCode(t, body); code != "corrupt" {
				t.Fatalf("GET %d of a damaged record: code %q, want corrupt: %s", id, code, body)
			}
			validateReply(t, router, "GET", path, status, hdr, body)
			damaged[id] = true
		default:
			t.Fatalf("GET %d: %d %s", id, status, body)
		}
	}
	if len(damaged) == 0 || len(damaged) >= n/2 {
		t.Fatalf("%d of %d records answered corrupt: want a block's worth", len(damaged), n)
	}
	t.Logf("%d of %d records in the damaged block", len(damaged), n)

	// A recall whose candidates are all outside the damaged block: a
	// session none of whose records is damaged.
	healthy := ""
	for s := 0; s < n/10 && healthy == ""; s++ {
		ok := true
		for id := uint64(10*s + 1); id <= uint64(10*s+10); id++ {
			ok = ok && !damaged[id]
		}
		if ok {
			healthy = fmt.Sprintf("s%d", s)
		}
	}
	if healthy == "" {
		t.Fatal("no session outside the damaged block")
	}
	var res wire.Result
	q := fmt.Sprintf(`{"agent":"a1","sessions":[%q],"text":"connection pool resized workers","k":5}`, healthy)
	if st := call(t, "POST", url+"/v1/recall", q, &res); st != 200 || len(res.Memories) == 0 {
		t.Fatalf("recall of session %s over a damaged store: %d %+v", healthy, st, res)
	}
	for _, m := range res.Memories {
		if m.Session != healthy || damaged[m.ID] || m.Text != recs[m.ID-1].Text {
			t.Fatalf("recall of session %s returned %+v", healthy, m)
		}
	}
	// A recall over the whole agent has candidates in the damaged block:
	// it answers from the readable ones, leaves the damaged ones out and
	// says so in its notes.
	rc := replyCase{method: "POST", path: "/v1/recall", body: `{"agent":"a1","text":"connection pool service-3","k":5}`}
	status, hdr, body := send(t, url+rc.path, rc)
	if status != http.StatusOK {
		t.Fatalf("recall over the damaged block: %d %s", status, body)
	}
	var whole wire.Result
	if err := json.Unmarshal(body, &whole); err != nil {
		t.Fatal(err)
	}
	for _, m := range whole.Memories {
		if damaged[m.ID] {
			t.Fatalf("recall over the damaged block returned damaged record %d", m.ID)
		}
	}
	if !strings.Contains(strings.Join(whole.Stats.Notes, " "), "damaged log block") {
		t.Logf("no damaged candidate among this recall's candidates (notes %q)", whole.Stats.Notes)
	}
	validateReply(t, router, rc.method, rc.path, status, hdr, body)
	var stats wire.Metrics
	if st := call(t, "GET", url+"/v1/stats", "", &stats); st != 200 {
		t.Fatalf("stats: %d", st)
	}
	if stats.Log.Corruptions < before.Log.Corruptions+uint64(len(damaged)) {
		t.Fatalf("stats count %d corrupt reads (%d before), after %d damaged GETs: %+v", stats.Log.Corruptions, before.Log.Corruptions, len(damaged), stats.Log)
	}
	if st := call(t, "GET", url+"/v1/ready", "", nil); st != 200 {
		t.Fatalf("ready after the damaged reads: %d", st)
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	rep, err := engine.Verify(dir, engine.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	named := map[uint64]bool{}
	for _, d := range rep.Damage {
		if d.Kind != "segment" {
			continue
		}
		if d.Segment != d.FirstID || d.LastID < d.FirstID {
			t.Fatalf("damage entry: %+v", d)
		}
		for id := d.FirstID; id <= d.LastID; id++ {
			named[id] = true
		}
	}
	if len(named) != len(damaged) {
		t.Fatalf("Verify names %d damaged ids, the daemon answered corrupt for %d: %+v", len(named), len(damaged), rep.Damage)
	}
	for id := range damaged {
		if !named[id] {
			t.Fatalf("id %d answered corrupt but is in no damaged segment Verify names: %+v", id, rep.Damage)
		}
	}
}

// TestDaemonDiskFull: the store's filesystem fails every write with
// ENOSPC while a switch is on. An append answers 507 with code
// "disk_full" (valid against the description) while recalls and reads
// answer 200; when space returns the next append succeeds on the same
// server and store, and every record acknowledged before reads back.
func TestDaemonDiskFull(t *testing.T) {
	disk := &faultfs.FullDisk{}
	fs := errorfs.Wrap(vfs.NewMem(), disk)
	db, err := engine.Open("store", engine.Options{FS: fs, Clock: func() time.Time { return testNow },
		Log: segment.Options{SegmentRecords: 10, ReserveBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		disk.On.Store(false)
		// The embedding cache's disk tier too closes cleanly after the
		// full disk (it kept the ENOSPC of an unsynced WAL write and
		// returned it from Close before).
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	url := serveFaults(t, db)
	router := specRouter(t)

	acked := map[uint64]string{}
	appendOK := func(text string) {
		t.Helper()
		var ids struct{ IDs []uint64 }
		body := fmt.Sprintf(`{"agent":"a1","session":"s","text":%q}`, text)
		if st := call(t, "POST", url+"/v1/records", body, &ids); st != 200 || len(ids.IDs) != 1 {
			t.Fatalf("append %q: %d %v", text, st, ids)
		}
		acked[ids.IDs[0]] = text
	}
	for i := range 25 {
		appendOK(fmt.Sprintf("note %d: the connection pool of service-%d was resized", i, i%7))
	}

	disk.On.Store(true)
	for i := range 3 {
		c := replyCase{method: "POST", path: "/v1/records", body: `{"agent":"a1","session":"s","text":"lost on a full disk"}`}
		status, hdr, body := send(t, url+c.path, c)
		if status != http.StatusInsufficientStorage {
			t.Fatalf("append %d on a full disk: %d %s", i, status, body)
		}
		if code := errorCode(t, body); code != "disk_full" {
			t.Fatalf("append on a full disk: code %q: %s", code, body)
		}
		validateReply(t, router, "POST", c.path, status, hdr, body)
	}
	var res wire.Result
	if st := call(t, "POST", url+"/v1/recall", `{"agent":"a1","text":"connection pool service-3","k":5}`, &res); st != 200 || len(res.Memories) == 0 {
		t.Fatalf("recall on a full disk: %d %+v", st, res)
	}
	for i := range 5 {
		q := fmt.Sprintf(`{"agent":"a1","text":"pool of service-%d resized %d","k":5}`, i, i)
		if st := call(t, "POST", url+"/v1/recall", q, &res); st != 200 || len(res.Memories) == 0 {
			t.Errorf("recall %d on a full disk: %d %+v", i, st, res)
		}
	}
	var rec wire.StoredRecord
	if st := call(t, "GET", url+"/v1/records/3", "", &rec); st != 200 || rec.Text != acked[3] {
		t.Fatalf("GET on a full disk: %d %+v", st, rec)
	}
	if st := call(t, "GET", url+"/v1/ready", "", nil); st != 200 {
		t.Fatalf("ready on a full disk: %d", st)
	}
	var stats wire.Metrics
	if st := call(t, "GET", url+"/v1/stats", "", &stats); st != 200 || stats.Log.WriteError == "" {
		t.Fatalf("stats on a full disk do not say writes fail: %d %+v", st, stats.Log)
	}

	disk.On.Store(false)
	appendOK("after the disk was freed: the pool is back to 32")
	for id, text := range acked {
		if st := call(t, "GET", fmt.Sprintf("%s/v1/records/%d", url, id), "", &rec); st != 200 || rec.Text != text {
			t.Fatalf("GET %d after space returned: %d %+v, want %q", id, st, rec, text)
		}
	}
	for i := range 5 {
		q := fmt.Sprintf(`{"agent":"a1","text":"workers of service-%d after the disk was freed %d","k":5}`, i, i)
		if st := call(t, "POST", url+"/v1/recall", q, &res); st != 200 || len(res.Memories) == 0 {
			t.Errorf("recall %d after space returned: %d %+v", i, st, res)
		}
	}
	stats = wire.Metrics{} // write_error is omitted when empty: decode into a fresh value
	if st := call(t, "GET", url+"/v1/stats", "", &stats); st != 200 || stats.Log.WriteError != "" || stats.Log.ReadOnly || stats.Log.Reopens == 0 {
		t.Fatalf("stats after space returned: %d %+v", st, stats.Log)
	}
	if len(acked) != 26 {
		t.Fatalf("%d records acknowledged, want 26", len(acked))
	}
	if _, ok := acked[26]; !ok {
		t.Fatalf("ids are not dense after the full disk: %v", acked)
	}
	if !strings.Contains(acked[26], "freed") {
		t.Fatalf("id 26 is %q", acked[26])
	}
}
