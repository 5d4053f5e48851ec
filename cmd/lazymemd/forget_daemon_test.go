package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index/analysis"
	"github.com/lazymem/lazymem/internal/storetest"
)

// purgeKeys are the keys of the forgetting test: A's may forget, B's may
// only read and write, and a second key of B may forget, but only B.
var purgeKeys = []testKey{
	{"tenant-a", "tok-a", []string{"A"}, []string{"read", "write", "forget"}},
	{"tenant-b", "tok-b", []string{"B"}, []string{"read", "write"}},
	{"tenant-b-forget", "tok-bf", []string{"B"}, []string{"read", "write", "forget"}},
}

// purgeServer serves the store in dir with purgeKeys through the real
// handler. The caller closes the server and the store (the test compacts
// and closes the store itself before scanning its files).
func purgeServer(t *testing.T, dir string, segmentRecords int) (*httptest.Server, *engine.DB) {
	t.Helper()
	o := engine.Options{Clock: func() time.Time { return testNow }}
	o.Log.SegmentRecords = segmentRecords
	db, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := parseKeys(keysJSON(purgeKeys))
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(db, defaultLimits())
	s.clock = func() time.Time { return testNow }
	s.keys.Store(kr)
	return httptest.NewServer(s.routes()), db
}

// purgeDo sends a request with a bearer token; unlike authCall it returns
// errors, so that writer goroutines can use it.
func purgeDo(token, method, url, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// purgeAppend appends one record over HTTP and returns its id.
func purgeAppend(token, url, agent, session, role, text string) (uint64, error) {
	body, _ := json.Marshal(map[string]string{"agent": agent, "session": session, "role": role, "text": text})
	st, b, err := purgeDo(token, "POST", url+"/v1/records", string(body))
	if err != nil {
		return 0, err
	}
	var out struct{ IDs []uint64 }
	if st != 200 || json.Unmarshal(b, &out) != nil || len(out.IDs) != 1 {
		return 0, fmt.Errorf("append %q: %d %s", text, st, b)
	}
	return out.IDs[0], nil
}

// purgeCacheKey is the embedding cache's key of a record's text: the
// first 16 bytes of SHA-256 over the agent's length (uvarint), the agent
// and the constructed text ("role: text"). It mirrors the engine's
// cacheKey, which is unexported.
func purgeCacheKey(agent, role, text string) []byte {
	h := sha256.New()
	h.Write(binary.AppendUvarint(nil, uint64(len(agent))))
	h.Write([]byte(agent))
	h.Write([]byte(engine.DefaultConstruct(&engine.Record{Role: role, Text: text})))
	return h.Sum(nil)[:16]
}

// bm25Reason is the first of a memory's Explain reasons that says it
// ranked by BM25 ("bm25 #2"), or "".
func bm25Reason(reasons []string) string {
	for _, r := range reasons {
		if strings.HasPrefix(r, "bm25") {
			return r
		}
	}
	return ""
}

// TestForgetDaemon is the daemon half of the forgetting acceptance test,
// through the HTTP API and the real handler: A's session S is forgotten
// (POST /v1/forget with A's key) while four writers append to A and B over
// HTTP; every acknowledged record of B and every other record of A reads
// back byte-identical; S's ids answer as ids never assigned; no recall
// mode serves S or ranks anything on its words (nor a successor on words
// it inherited from a forgotten turn); B's keys cannot forget A's records;
// and after Compact (called on the engine handle: the API has no compact
// route) no file of the store holds S's tokens, their index terms or the
// embedding-cache keys of S's texts.
func TestForgetDaemon(t *testing.T) {
	dir := t.TempDir()
	ts, db := purgeServer(t, dir, 32) // small segments: S is sealed and compressed
	closed := false
	defer func() {
		if !closed {
			ts.Close()
			_ = db.Close()
		}
	}()
	twin, twinDB := purgeServer(t, t.TempDir(), 0) // an empty store: ids never assigned
	defer func() {
		twin.Close()
		if err := twinDB.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()

	type seeded struct {
		token, agent, session, role, text string
		id                                uint64
		body                              []byte // GET before Forget
	}
	var seeds []*seeded
	seed := func(token, agent, session, role, text string) *seeded {
		t.Helper()
		id, err := purgeAppend(token, ts.URL, agent, session, role, text)
		if err != nil {
			t.Fatal(err)
		}
		sd := &seeded{token: token, agent: agent, session: session, role: role, text: text, id: id}
		seeds = append(seeds, sd)
		return sd
	}
	// Other sessions of A and records of B, S in the middle (its records
	// share sealed segments with kept ones), then session T: a question
	// whose answer (kept) inherits its words through session context.
	for i := range 30 {
		k, a := []string{"tok-a", "tok-b"}[i%2], []string{"A", "B"}[i%2]
		seed(k, a, fmt.Sprintf("w%d", i%3), "user", fmt.Sprintf("ordinary note number %d about the garden", i))
	}
	var sRecs []*seeded
	for i := range 40 {
		sRecs = append(sRecs, seed("tok-a", "A", "S", "user",
			fmt.Sprintf("the quixotical flamingoes %d were marmaladed in zanzibarian crates", i)))
	}
	for i := 30; i < 60; i++ {
		k, a := []string{"tok-a", "tok-b"}[i%2], []string{"A", "B"}[i%2]
		seed(k, a, fmt.Sprintf("w%d", i%3), "user", fmt.Sprintf("ordinary note number %d about the garden", i))
	}
	tQ := seed("tok-a", "A", "T", "user", "which xylophonist performed at the gazebo?")
	tA := seed("tok-a", "A", "T", "assistant", "It was Ingrid, on Sunday.")
	for _, sd := range seeds {
		st, b, err := purgeDo(sd.token, "GET", fmt.Sprintf("%s/v1/records/%d", ts.URL, sd.id), "")
		if err != nil || st != 200 {
			t.Fatalf("get %d: %d %s %v", sd.id, st, b, err)
		}
		sd.body = b
	}

	recall := func(token, body string) wire.Result {
		t.Helper()
		st, b, err := purgeDo(token, "POST", ts.URL+"/v1/recall", body)
		var res wire.Result
		if err != nil || st != 200 || json.Unmarshal(b, &res) != nil {
			t.Fatalf("recall %s: %d %s %v", body, st, b, err)
		}
		return res
	}
	// A lazy recall of S's words embeds S's records (those the working
	// memory has not embedded as they arrived): the cache holds them.
	warm := recall("tok-a", `{"agent":"A","text":"quixotical flamingoes marmaladed","mode":"lazy","k":50,"candidates":100}`)
	if warm.Stats.Hits < 40 || warm.Stats.Embedded+warm.Stats.CacheHits < 40 {
		t.Fatalf("the warm-up recall found %d, embedded %d and found cached %d of S's 40 records",
			warm.Stats.Hits, warm.Stats.Embedded, warm.Stats.CacheHits)
	}
	// Before Forget, the successor ranks on the question's words: the
	// check below that it no longer does can fail.
	// A key's recall hides raw BM25 scores (they tell about the store's
	// other tenants); Explain's reasons still say "bm25 #rank".
	before := recall("tok-a", `{"agent":"A","text":"xylophonist gazebo","mode":"sparse","k":10,"explain":true}`)
	inherited := false
	for _, m := range before.Memories {
		inherited = inherited || m.ID == tA.id && bm25Reason(m.Reasons) != ""
	}
	if !inherited {
		t.Fatalf("before Forget the answer %d does not rank on its question's words: %+v %+v", tA.id, before.Memories, before.Stats)
	}

	// Four writers append to A (other sessions) and B over HTTP while S
	// is forgotten; each keeps what was acknowledged and its first read.
	type written struct {
		token, text string
		body        []byte
	}
	acked := make([]map[uint64]written, 4)
	var counts [4]atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		acked[w] = map[uint64]written{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			token, agent := []string{"tok-a", "tok-b"}[w%2], []string{"A", "B"}[w%2]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("writer %d line %d", w, i)
				id, err := purgeAppend(token, ts.URL, agent, fmt.Sprintf("live%d", w), "user", text)
				if err != nil {
					t.Error(err)
					return
				}
				st, b, err := purgeDo(token, "GET", fmt.Sprintf("%s/v1/records/%d", ts.URL, id), "")
				if err != nil || st != 200 {
					t.Errorf("writer %d: get %d: %d %s %v", w, id, st, b, err)
					return
				}
				acked[w][id] = written{token: token, text: text, body: b}
				counts[w].Add(1)
			}
		}()
	}
	// waitWriters waits until every writer has n more acknowledged
	// appends (or has stopped on an error).
	waitWriters := func(n int64) {
		var from [4]int64
		for w := range counts {
			from[w] = counts[w].Load()
		}
		for w := range counts {
			for counts[w].Load() < from[w]+n && !t.Failed() {
				time.Sleep(time.Millisecond)
			}
		}
	}
	waitWriters(5)
	forget := func(token, body string) (int, map[string]json.RawMessage) {
		t.Helper()
		st, b, err := purgeDo(token, "POST", ts.URL+"/v1/forget", body)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]json.RawMessage
		_ = json.Unmarshal(b, &out)
		return st, out
	}
	st, res := forget("tok-a", `{"agent":"A","sessions":["S"]}`)
	if st != 200 || string(res["forgotten"]) != "40" {
		t.Fatalf("forget session S: %d %v, want 40 forgotten", st, res)
	}
	st, res2 := forget("tok-a", fmt.Sprintf(`{"ids":[%d]}`, tQ.id))
	if st != 200 || string(res2["forgotten"]) != "1" || string(res2["reindexed"]) == "0" {
		t.Fatalf("forget the question %d: %d %v, want 1 forgotten and its successor re-indexed", tQ.id, st, res2)
	}
	waitWriters(5)
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("appends acknowledged per writer: %d %d %d %d; forgot %s and %s", counts[0].Load(), counts[1].Load(), counts[2].Load(), counts[3].Load(), res["forgotten"], res2["forgotten"])

	forgotten := map[uint64]bool{tQ.id: true}
	for _, sd := range sRecs {
		forgotten[sd.id] = true
	}

	// B's keys cannot forget A's records: without the forget scope (403),
	// or with it but naming A (403), or naming B with A's ids (nothing).
	next := db.Metrics().Log.Next
	for _, c := range []struct {
		token, body string
		status      int
	}{
		{"tok-b", fmt.Sprintf(`{"agent":"A","ids":[%d]}`, tA.id), 403},
		{"tok-b", `{"agent":"A","sessions":["w0","w1","w2"]}`, 403},
		{"tok-b", `{"sessions":["w0"]}`, 403},
		{"tok-bf", fmt.Sprintf(`{"agent":"A","ids":[%d]}`, tA.id), 403},
		{"tok-bf", `{"agent":"A","sessions":["T","w0","w1","w2"]}`, 403},
		{"tok-bf", fmt.Sprintf(`{"agent":"B","ids":[%d,%d]}`, tA.id, seeds[0].id), 200},
	} {
		st, out := forget(c.token, c.body)
		if st != c.status {
			t.Errorf("%s forgets %s: %d %v, want %d", c.token, c.body, st, out, c.status)
		}
		if st == 200 && string(out["forgotten"]) != "0" {
			t.Errorf("%s forgets %s: %v, want nothing forgotten", c.token, c.body, out)
		}
	}
	if db.Metrics().Log.Next != next {
		t.Errorf("B's refused forgets wrote to the log: next %d -> %d", next, db.Metrics().Log.Next)
	}

	check := func(stage string) {
		t.Helper()
		n, nbytes, wantN, wantBytes := 0, 0, 0, 0
		get := func(token string, id uint64) (int, []byte) {
			t.Helper()
			st, b, err := purgeDo(token, "GET", fmt.Sprintf("%s/v1/records/%d", ts.URL, id), "")
			if err != nil {
				t.Fatal(err)
			}
			return st, b
		}
		for _, sd := range seeds {
			st, b := get(sd.token, sd.id)
			if forgotten[sd.id] {
				// Same status and body as an id never assigned.
				stT, bT, err := purgeDo(sd.token, "GET", fmt.Sprintf("%s/v1/records/%d", twin.URL, sd.id), "")
				if err != nil || st != 404 || st != stT || !bytes.Equal(b, bT) {
					t.Fatalf("%s: forgotten record %d answers %d %s; a never-assigned id %d %s (%v)", stage, sd.id, st, b, stT, bT, err)
				}
				continue
			}
			wantN++
			wantBytes += len(sd.text)
			if st != 200 || !bytes.Equal(b, sd.body) {
				t.Fatalf("%s: record %d of %s reads %d %s, was %s", stage, sd.id, sd.agent, st, b, sd.body)
			}
			var rec wire.StoredRecord
			if json.Unmarshal(b, &rec) != nil || rec.Text != sd.text || rec.Agent != sd.agent {
				t.Fatalf("%s: record %d reads %s, want %q of %s", stage, sd.id, b, sd.text, sd.agent)
			}
			n++
			nbytes += len(rec.Text)
		}
		for w, m := range acked {
			if len(m) < 10 {
				t.Fatalf("writer %d had only %d appends acknowledged", w, len(m))
			}
			for id, wr := range m {
				wantN++
				wantBytes += len(wr.text)
				st, b := get(wr.token, id)
				var rec wire.StoredRecord
				if st != 200 || !bytes.Equal(b, wr.body) || json.Unmarshal(b, &rec) != nil || rec.Text != wr.text {
					t.Fatalf("%s: concurrently written record %d reads %d %s, was %s", stage, id, st, b, wr.body)
				}
				n++
				nbytes += len(rec.Text)
			}
		}
		if n != wantN || nbytes != wantBytes || wantN != len(seeds)-41+len(acked[0])+len(acked[1])+len(acked[2])+len(acked[3]) {
			t.Fatalf("%s: %d records (%d bytes) intact, want %d (%d bytes)", stage, n, nbytes, wantN, wantBytes)
		}
		// Every mode, with and without session context. The wire has no
		// fallback switch: a recall with no BM25 hit still answers with
		// the latest records, so what is checked is that none is S's,
		// that nothing was a BM25 hit and that no memory ranked by BM25
		// (the successor's inherited words are gone from the index).
		for _, mode := range []string{"sparse", "lazy", "dense"} {
			for _, q := range []string{"quixotical flamingoes marmaladed zanzibarian", "xylophonist gazebo"} {
				for _, turns := range []int{0, -1} {
					body := fmt.Sprintf(`{"agent":"A","text":%q,"mode":%q,"k":100,"session_turns":%d,"current_session":"T","explain":true}`, q, mode, turns)
					r := recall("tok-a", body)
					if r.Stats.Hits != 0 {
						t.Fatalf("%s: %s: %d BM25 hits on forgotten words", stage, body, r.Stats.Hits)
					}
					for _, m := range r.Memories {
						if forgotten[m.ID] || m.Session == "S" {
							t.Fatalf("%s: %s served forgotten record %d (%q)", stage, body, m.ID, m.Text)
						}
						if r := bm25Reason(m.Reasons); r != "" {
							t.Fatalf("%s: %s ranked record %d (%q) on forgotten words: %s", stage, body, m.ID, m.Text, r)
						}
					}
				}
			}
		}
	}
	check("after Forget")
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("after Compact")

	ts.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true

	ims := storetest.Images(t, dir)
	tokens := []string{"quixotical", "flamingoes", "marmaladed", "zanzibarian", "xylophonist", "gazebo"}
	// The daemon's store indexes with the default analysis (the index's
	// default: analysis with zero options).
	an, err := analysis.New(analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, tok := range tokens {
		terms = an.AppendTerms(terms, tok)
	}
	if len(terms) < len(tokens) {
		t.Fatalf("the analyzer gives %v for %v", terms, tokens)
	}
	for _, s := range append(tokens, terms...) {
		if where := storetest.Find(ims, []byte(s)); len(where) > 0 {
			t.Errorf("%q is still in %s", s, strings.Join(where, ", "))
		}
	}
	for _, sd := range append(append([]*seeded{}, sRecs...), tQ) {
		if where := storetest.Find(ims, purgeCacheKey(sd.agent, sd.role, sd.text)); len(where) > 0 {
			t.Errorf("the cache key of %d (%q) is still in %s", sd.id, sd.text, strings.Join(where, ", "))
		}
	}
	// The scan can find things: the kept records' words and the cache
	// keys of kept records that were embedded are there.
	if len(storetest.Find(ims, []byte("garden"))) == 0 || len(storetest.Find(ims, []byte("Ingrid"))) == 0 {
		t.Fatal("the scan finds nothing at all: it is broken")
	}
	if len(storetest.Find(ims, purgeCacheKey(tA.agent, tA.role, tA.text))) == 0 {
		t.Fatal("the scan does not find a kept record's cache key: the key formula is wrong")
	}
}
