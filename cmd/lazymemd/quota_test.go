package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// quotaKeys: "small" may keep 2 records per agent (q1, q2), "thin" 10
// text bytes (t1), "free" has no quota (q1, q2).
func quotaKeys() []byte {
	key := func(name, tok, agents, quota string) string {
		h := sha256.Sum256([]byte(tok))
		q := ""
		if quota != "" {
			q = `,"quota":` + quota
		}
		return fmt.Sprintf(`{"name":%q,"token_sha256":%q,"agents":%s,"scopes":["read","write","forget"]%s}`, name, hex.EncodeToString(h[:]), agents, q)
	}
	return []byte(`{"keys":[` + key("small", "tok-small", `["q1","q2"]`, `{"records":2}`) + "," +
		key("thin", "tok-thin", `["t1"]`, `{"bytes":10}`) + "," + key("free", "tok-free", `["q1","q2"]`, "") + `]}`)
}

func newQuotaServer(t *testing.T) (*httptest.Server, *engine.DB) {
	t.Helper()
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := parseKeys(quotaKeys())
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(db, defaultLimits())
	s.keys.Store(kr)
	ts := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		ts.Close()
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts, db
}

// TestKeyQuota: a key's quota bounds each of its agents on every write
// path (one record, a batch, the MCP add tool); the refusal is 403
// quota naming the limit and the key, writes nothing, and forgetting
// makes room again. A key without a quota is not bounded.
func TestKeyQuota(t *testing.T) {
	ts, db := newQuotaServer(t)
	errOf := func(b []byte) apiError {
		var e errorReply
		_ = json.Unmarshal(b, &e)
		return e.Error
	}
	post := func(tok, body string) (int, apiError) {
		t.Helper()
		st, b := authCall(t, tok, "POST", ts.URL+"/v1/records", body)
		return st, errOf(b)
	}
	if st, e := post("tok-small", `{"records":[{"agent":"q1","text":"one"},{"agent":"q1","text":"two"}]}`); st != 200 {
		t.Fatalf("within the quota: %d %+v", st, e)
	}
	next := db.Metrics().Log.Next
	for _, body := range []string{
		`{"agent":"q1","text":"three"}`,
		`{"records":[{"agent":"q1","text":"three"}]}`,
	} {
		st, e := post("tok-small", body)
		if st != http.StatusForbidden || e.Code != "quota" || !strings.Contains(e.Message, "limit of 2 records") ||
			!strings.Contains(e.Message, `the key "small"'s quota in --keys: records 2 per agent`) {
			t.Errorf("%s over the quota: %d %+v", body, st, e)
		}
	}
	// The quota is per agent: q2 has its own room.
	if st, e := post("tok-small", `{"agent":"q2","text":"q2's first"}`); st != 200 {
		t.Errorf("another agent of the key: %d %+v", st, e)
	}
	// A batch mixing the key's agents cannot be checked whole: refused.
	if st, e := post("tok-small", `{"records":[{"agent":"q1","text":"x"},{"agent":"q2","text":"y"}]}`); st != 400 || e.Field != "records" || !strings.Contains(e.Message, "one agent's records per batch") {
		t.Errorf("mixed batch under a quota: %d %+v", st, e)
	}
	if got := db.Metrics().Log.Next; got != next+1 {
		t.Fatalf("refused appends wrote: next id %d, want %d", got, next+1)
	}
	// The MCP add tool goes through the same handle.
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"agent":"q1","text":"via mcp"}}}`))
	req.Header.Set("Authorization", "Bearer tok-small")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"isError":true`) || !strings.Contains(string(b), "limit of 2 records") {
		t.Errorf("MCP add over the quota: %s", b)
	}
	// Forgetting makes room.
	if st, b := authCall(t, "tok-small", "POST", ts.URL+"/v1/forget", `{"agent":"q1","ids":[1]}`); st != 200 {
		t.Fatalf("forget: %d %s", st, b)
	}
	if st, e := post("tok-small", `{"agent":"q1","text":"after forgetting"}`); st != 200 {
		t.Errorf("after a forget: %d %+v", st, e)
	}

	// A byte quota counts text bytes.
	if st, e := post("tok-thin", `{"agent":"t1","text":"0123456789"}`); st != 200 {
		t.Fatalf("10 bytes within 10: %d %+v", st, e)
	}
	if st, e := post("tok-thin", `{"agent":"t1","text":"x"}`); st != http.StatusForbidden || e.Code != "quota" || !strings.Contains(e.Message, "limit of 10 bytes") ||
		!strings.Contains(e.Message, "bytes 10 per agent") {
		t.Errorf("over the byte quota: %d %+v", st, e)
	}
	// GET /v1/stats shows a key its quota, beside each agent's records.
	st, b := authCall(t, "tok-small", "GET", ts.URL+"/v1/stats", "")
	var sc wire.AgentStats
	if st != 200 || json.Unmarshal(b, &sc) != nil || sc.Quota == nil || *sc.Quota != (wire.Quota{Records: 2}) || len(sc.Agents) != 2 || sc.Agents[0].Records != 2 {
		t.Errorf("stats of a key with a quota: %d %s", st, b)
	}
	if st, b := authCall(t, "tok-free", "GET", ts.URL+"/v1/stats", ""); st != 200 || strings.Contains(string(b), "quota") {
		t.Errorf("stats of a key without a quota: %d %s", st, b)
	}
	// No quota, no bound, and mixed batches are fine.
	if st, e := post("tok-free", `{"records":[{"agent":"q1","text":"a"},{"agent":"q2","text":"b"},{"agent":"q1","text":"c"}]}`); st != 200 {
		t.Errorf("a key without a quota: %d %+v", st, e)
	}
}

// TestParseKeysQuota: a bad quota names its field.
func TestParseKeysQuota(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	key := func(agents, scopes, quota string) string {
		return `{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":` + agents + `,"scopes":` + scopes + `,"quota":` + quota + `}]}`
	}
	for _, tc := range []struct{ body, field string }{
		{key(`["a"]`, `["write"]`, `{"records":-1}`), "keys[0].quota.records"},
		{key(`["a"]`, `["write"]`, `{"bytes":-5}`), "keys[0].quota.bytes"},
		{key(`["a"]`, `["write"]`, `{"record":5}`), "record"},
		{key(`["a"]`, `["write"]`, `{"records":"5"}`), "quota.records"},
		{key(`["*"]`, `["write","admin"]`, `{"records":5}`), "keys[0].quota"},
	} {
		_, err := parseKeys([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.HasPrefix(err.Error(), "lazymem: bad keys file") {
			t.Errorf("%s: %v, want an error naming %s", tc.body, err, tc.field)
		}
	}
	kr, err := parseKeys([]byte(key(`["a"]`, `["write"]`, `{"records":3,"bytes":100}`)))
	if err != nil {
		t.Fatal(err)
	}
	if q := kr.keys[0].t.quota; q != (engine.Quota{MaxRecords: 3, MaxBytes: 100}) {
		t.Errorf("quota %+v", q)
	}
	if kr, err := parseKeys([]byte(key(`["*"]`, `["admin"]`, `{}`))); err != nil || kr.keys[0].t.limited() {
		t.Errorf("an empty quota is no quota: %v", err)
	}
}
