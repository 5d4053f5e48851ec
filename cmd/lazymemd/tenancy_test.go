package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/logbuf"
)

// testKey is a key of the tenancy tests: its token and what the keys
// file grants it.
type testKey struct {
	name, token    string
	agents, scopes []string
}

var testKeys = []testKey{
	{"alpha", "tok-alpha", []string{"a1"}, []string{"read", "write", "forget"}},
	{"beta", "tok-beta", []string{"b1", "b2"}, []string{"read", "write"}},
	{"reader", "tok-reader", []string{"a1"}, []string{"read"}},
	{"writer", "tok-writer", []string{"b1"}, []string{"write"}},
	{"gamma", "tok-gamma", []string{"b1", "b2"}, []string{"read", "forget"}},
	{"root", "tok-root", []string{"*"}, []string{"read", "write", "forget", "admin"}},
}

// testAgents are the agents tried with every key: each key's own, the
// others', and one nobody holds.
var testAgents = []string{"a1", "b1", "b2", "zz"}

func keysJSON(keys []testKey) []byte {
	var f struct {
		Keys []map[string]any `json:"keys"`
	}
	for _, k := range keys {
		h := sha256.Sum256([]byte(k.token))
		f.Keys = append(f.Keys, map[string]any{"name": k.name, "token_sha256": hex.EncodeToString(h[:]), "agents": k.agents, "scopes": k.scopes})
	}
	b, _ := json.Marshal(f)
	return b
}

// newKeyedServer serves a fresh store with testKeys. The recall trigger of
// consolidation is off: the tables recall as permitted keys between their
// snapshots of a record's value, and a record those recalls return
// PromoteTopK times is queued by the next background flush, which a table
// would read as another tenant moving it (TestTenancy failed so once).
// Queued then moves only through feedback and consolidate, the routes the
// tables check.
func newKeyedServer(t *testing.T, keys []testKey) (*httptest.Server, *engine.DB) {
	t.Helper()
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return testNow }, Core: engine.CoreOptions{PromoteTopK: -1}})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := parseKeys(keysJSON(keys))
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(db, defaultLimits())
	s.clock = func() time.Time { return testNow }
	s.keys.Store(kr)
	return serveTest(t, s, db), db
}

// authCall sends a request with a bearer token and returns the status and
// the body.
func authCall(t *testing.T, token, method, url, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (k testKey) allows(agent string) bool {
	return slices.Contains(k.agents, "*") || slices.Contains(k.agents, agent)
}

func (k testKey) has(scope string) bool { return slices.Contains(k.scopes, scope) }

// TestTenancy tries every route, REST and MCP, with every key against
// every agent: no key reads, writes or lists a record of an agent outside
// its key, and another tenant's record answers exactly as a missing id
// does (same status, same body) on a twin store where that id was never
// assigned.
func TestTenancy(t *testing.T) {
	ts, db := newKeyedServer(t, testKeys)
	twin, _ := newKeyedServer(t, testKeys) // the same keys, an empty store
	// One record per agent, written by root: ids 1..4 for a1, b1, b2, zz.
	ids := map[string]uint64{}
	for _, a := range testAgents {
		st, b := authCall(t, "tok-root", "POST", ts.URL+"/v1/records", fmt.Sprintf(`{"agent":%q,"session":"s","text":"the secret launch code of %s is kept here"}`, a, a))
		var out struct{ IDs []uint64 }
		if st != 200 || json.Unmarshal(b, &out) != nil || len(out.IDs) != 1 {
			t.Fatalf("seed %s: %d %s", a, st, b)
		}
		ids[a] = out.IDs[0]
	}
	// leaks counts what a key saw or changed outside its agents.
	leaks := 0
	for _, k := range testKeys {
		if k.has("admin") {
			continue // store-wide by design (checked below)
		}
		for _, agent := range testAgents {
			name := k.name + "/" + agent
			own := k.allows(agent)
			next := db.Metrics().Log.Next

			// POST /v1/records, one record and a batch whose second
			// record is the agent's.
			st, b := authCall(t, k.token, "POST", ts.URL+"/v1/records", fmt.Sprintf(`{"agent":%q,"text":"written by %s"}`, agent, k.name))
			switch {
			case own && k.has("write"):
				if st != 200 {
					t.Errorf("%s: own append: %d %s", name, st, b)
				}
			case st != 403:
				t.Errorf("%s: append: %d %s, want 403", name, st, b)
			}
			if !own && db.Metrics().Log.Next != next {
				leaks++
				t.Errorf("%s: a refused append wrote", name)
			}
			next = db.Metrics().Log.Next
			st, b = authCall(t, k.token, "POST", ts.URL+"/v1/records", fmt.Sprintf(`{"records":[{"agent":%q,"text":"batch head"},{"agent":%q,"text":"batch tail"}]}`, k.agents[0], agent))
			if (!own || !k.has("write")) && (st != 403 || db.Metrics().Log.Next != next) {
				t.Errorf("%s: batch: %d %s, next %d -> %d", name, st, b, next, db.Metrics().Log.Next)
				if db.Metrics().Log.Next != next {
					leaks++
				}
			}

			// GET /v1/records/{id}: the agent's seeded record.
			id := ids[agent]
			st, b = authCall(t, k.token, "GET", fmt.Sprintf("%s/v1/records/%d", ts.URL, id), "")
			stT, bT := authCall(t, k.token, "GET", fmt.Sprintf("%s/v1/records/%d", twin.URL, id), "")
			switch {
			case !k.has("read"):
				if st != 403 {
					t.Errorf("%s: get without read: %d %s", name, st, b)
				}
			case own:
				var rec wire.StoredRecord
				if st != 200 || json.Unmarshal(b, &rec) != nil || rec.Agent != agent {
					t.Errorf("%s: own get: %d %s", name, st, b)
				}
			default:
				if st != stT || !bytes.Equal(b, bT) || st != 404 {
					leaks++
					t.Errorf("%s: another tenant's id %d answers %d %s; a missing one %d %s", name, id, st, b, stT, bT)
				}
			}

			// POST /v1/forget of another tenant's record: naming its
			// agent (403), or naming the key's own agent with its id
			// (nothing forgotten): it stays.
			for _, body := range []string{
				fmt.Sprintf(`{"agent":%q,"ids":[%d]}`, agent, id),
				fmt.Sprintf(`{"agent":%q,"ids":[%d]}`, k.agents[0], id),
			} {
				if own {
					break
				}
				st, b = authCall(t, k.token, "POST", ts.URL+"/v1/forget", body)
				if _, err := db.Get(t.Context(), id); err != nil {
					leaks++
					t.Errorf("%s: forget %s removed record %d: %d %s", name, body, id, st, b)
				}
				switch {
				case !k.has("forget") || strings.Contains(body, fmt.Sprintf("%q", agent)):
					if st != 403 {
						t.Errorf("%s: forget %s: %d %s, want 403", name, body, st, b)
					}
				case st != 200 || !strings.Contains(string(b), `"forgotten":0`):
					t.Errorf("%s: forget %s: %d %s", name, body, st, b)
				}
			}
			// GET /v1/export: the agent's records only, or 403.
			st, b = authCall(t, k.token, "GET", ts.URL+"/v1/export?agent="+agent, "")
			switch {
			case k.has("read") && own:
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					var rec struct{ Agent string }
					if json.Unmarshal([]byte(line), &rec) != nil || rec.Agent != agent {
						leaks++
						t.Errorf("%s: export line %s", name, line)
					}
				}
				if st != 200 {
					t.Errorf("%s: export: %d %s", name, st, b)
				}
			case st != 403:
				t.Errorf("%s: export: %d %s, want 403", name, st, b)
			}

			// Value feedback and core memory: POST /v1/feedback and
			// /v1/consolidate (write), GET /v1/core (read). Another
			// tenant's agent is 403; its recall, named through the key's
			// own agent, is unknown (404); its record id, consolidated
			// as the key's own agent, is unknown (400 consolidate.ids[0]).
			// Nothing of the other agent's value or core memory moves.
			before, _ := db.Value(t.Context(), id)
			unitsBefore, _ := db.Core(t.Context(), agent, true)
			_, rb := authCall(t, "tok-root", "POST", ts.URL+"/v1/recall", fmt.Sprintf(`{"agent":%q,"text":"secret launch code","mode":"sparse"}`, agent))
			var rootRes wire.Result
			if json.Unmarshal(rb, &rootRes) != nil || rootRes.RecallID == 0 {
				t.Fatalf("%s: root's recall: %s", name, rb)
			}
			for _, c := range []struct {
				acting     string // the agent the body names
				path, body string
				want       int // when acting is the key's but not the record's agent
			}{
				{agent, "/v1/feedback", `{"agent":%q,"ids":[%d],"signal":1}`, 0},
				{agent, "/v1/feedback", `{"agent":%q,"recall_id":%d,"ids":[%d],"signal":1}`, 0},
				{k.agents[0], "/v1/feedback", `{"agent":%q,"recall_id":%d,"ids":[%d],"signal":1}`, 404},
				{k.agents[0], "/v1/feedback", `{"agent":%q,"ids":[%d],"signal":1}`, 400},
				{agent, "/v1/consolidate", `{"agent":%q,"ids":[%d]}`, 0},
				{k.agents[0], "/v1/consolidate", `{"agent":%q,"ids":[%d]}`, 400},
			} {
				body := fmt.Sprintf(c.body, c.acting, id)
				if strings.Contains(c.body, "recall_id") {
					body = fmt.Sprintf(c.body, c.acting, rootRes.RecallID, id)
				}
				st, b := authCall(t, k.token, "POST", ts.URL+c.path, body)
				want := c.want
				switch {
				case !k.has("write") || !k.allows(c.acting):
					want = 403
				case c.acting == agent:
					want = 200
				}
				if st != want {
					t.Errorf("%s: %s %s: %d %s, want %d", name, c.path, body, st, b, want)
				}
			}
			if !own {
				after, _ := db.Value(t.Context(), id)
				unitsAfter, _ := db.Core(t.Context(), agent, true)
				if after.Positive != before.Positive || after.Negative != before.Negative || after.Queued != before.Queued || len(unitsAfter) != len(unitsBefore) {
					leaks++
					t.Errorf("%s: another tenant's value or core memory moved: %+v -> %+v, %d -> %d units", name, before, after, len(unitsBefore), len(unitsAfter))
				}
			}
			st, b = authCall(t, k.token, "GET", ts.URL+"/v1/core?history=true&agent="+agent, "")
			switch {
			case k.has("read") && own:
				var cu struct{ Units []wire.Unit }
				if st != 200 || json.Unmarshal(b, &cu) != nil {
					t.Errorf("%s: own core: %d %s", name, st, b)
				}
				for _, u := range cu.Units {
					if u.Agent != agent {
						leaks++
						t.Errorf("%s: core listed %s's unit %d", name, u.Agent, u.ID)
					}
				}
			case st != 403:
				t.Errorf("%s: core: %d %s, want 403", name, st, b)
			}

			// POST /v1/recall, naming the agent in agent and in agents.
			for _, body := range []string{
				fmt.Sprintf(`{"agent":%q,"text":"secret launch code","mode":"sparse"}`, agent),
				fmt.Sprintf(`{"agent":%q,"agents":[%q],"text":"secret launch code","mode":"sparse"}`, k.agents[0], agent),
			} {
				st, b = authCall(t, k.token, "POST", ts.URL+"/v1/recall", body)
				var res wire.Result
				switch {
				case !k.has("read") || !own:
					if st != 403 {
						t.Errorf("%s: recall %s: %d %s, want 403", name, body, st, b)
					}
				case st != 200 || json.Unmarshal(b, &res) != nil || len(res.Memories) == 0:
					t.Errorf("%s: own recall: %d %s", name, st, b)
				}
				for _, m := range res.Memories {
					if !k.allows(m.Agent) {
						leaks++
						t.Errorf("%s: recall returned %s's record %d", name, m.Agent, m.ID)
					}
				}
			}
		}
		// A recall naming no agent searches the key's agents, no others.
		st, b := authCall(t, k.token, "POST", ts.URL+"/v1/recall", `{"text":"secret launch code","mode":"sparse","k":50}`)
		var res wire.Result
		if k.has("read") && (st != 200 || json.Unmarshal(b, &res) != nil || len(res.Memories) == 0) {
			t.Errorf("%s: recall without agent: %d %s", k.name, st, b)
		}
		for _, m := range res.Memories {
			if !k.allows(m.Agent) {
				leaks++
				t.Errorf("%s: recall without agent returned %s's record", k.name, m.Agent)
			}
		}
		// GET /v1/stats tells a key of some agents nothing of the others.
		st, b = authCall(t, k.token, "GET", ts.URL+"/v1/stats", "")
		if k.has("read") {
			var sc wire.AgentStats
			if st != 200 || json.Unmarshal(b, &sc) != nil || sc.Scope != "agents" || len(sc.Agents) != len(k.agents) {
				t.Errorf("%s: stats: %d %s", k.name, st, b)
			}
			for i, ac := range sc.Agents {
				// Each agent's records: the seeded one and what this
				// key's own appends added, as the store counts them.
				want := len(recordsOf(t, db, ac.Agent))
				if ac.Agent != k.agents[i] || ac.Records != want {
					t.Errorf("%s: stats of %s: %d records, the store holds %d", k.name, ac.Agent, ac.Records, want)
				}
			}
		} else if st != 403 {
			t.Errorf("%s: stats without read: %d", k.name, st)
		}
		// /metrics is store-wide: admin only.
		if st, _ := authCall(t, k.token, "GET", ts.URL+"/metrics", ""); st != 403 {
			t.Errorf("%s: /metrics: %d, want 403", k.name, st)
		}
		leaks += mcpTenancy(t, ts.URL, db, k, ids)
	}
	if leaks != 0 {
		t.Fatalf("%d cross-tenant reads or writes", leaks)
	}
	// The admin key sees the store.
	st, b := authCall(t, "tok-root", "GET", ts.URL+"/v1/stats", "")
	if st != 200 || !strings.Contains(string(b), `"scope":"store"`) {
		t.Fatalf("admin stats: %d %s", st, b)
	}
	if st, _ := authCall(t, "tok-root", "GET", ts.URL+"/metrics", ""); st != 200 {
		t.Fatalf("admin /metrics: %d", st)
	}
	// No token, or one no key has: 401; the probes stay open.
	for _, tok := range []string{"", "tok-nobody", "tok-alph", "TOK-alpha"} {
		if st, _ := authCall(t, tok, "GET", ts.URL+"/v1/stats", ""); st != 401 {
			t.Errorf("token %q: %d, want 401", tok, st)
		}
	}
	if st, _ := authCall(t, "", "GET", ts.URL+"/v1/ready", ""); st != 200 {
		t.Errorf("probe without a token: %d", st)
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpTenancy drives the MCP tools with the official client as key k, with
// every agent named and none, and returns the leaks found.
func mcpTenancy(t *testing.T, url string, db *engine.DB, k testKey, ids map[string]uint64) int {
	t.Helper()
	ctx := t.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "tenancy-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{k.token}}}, nil)
	if err != nil {
		t.Fatalf("%s: connect: %v", k.name, err)
	}
	defer cs.Close()
	return mcpTenancyTable(t, cs, k, k.name, ids, mcpObserver{
		starOwnsNone: true,
		written:      func() uint64 { return db.Metrics().Log.Next },
		present: func(id uint64) bool {
			_, err := db.Get(ctx, id)
			return err == nil
		},
		judged: func(a string, id uint64) string {
			v, _ := db.Value(ctx, id)
			units, _ := db.Core(ctx, a, true)
			return fmt.Sprintf("value +%d queued %v, %d units", v.Positive, v.Queued, len(units))
		},
	})
}

// mcpObserver is what the MCP tenancy table reads of the store behind
// the tools besides their answers; a nil func is not read (a cluster's
// writes reach the store through the stream: its test checks them at
// the end, by export).
type mcpObserver struct {
	// starOwnsNone: a key of every agent naming no agent acts on its
	// own agent (a standalone daemon); else it is refused naming the
	// field (cluster mode: a call reaches one partition).
	starOwnsNone bool
	written      func() uint64                    // grows with every record written
	present      func(id uint64) bool             // the record is stored
	judged       func(a string, id uint64) string // the record's value and the agent's core memory
}

// mcpTenancyTable is the tenancy table over MCP: as key k (session cs),
// with every agent named and none, every tool; it returns the leaks seen
// (reads or writes outside the key's agents). name prefixes the errors.
func mcpTenancyTable(t *testing.T, cs *mcp.ClientSession, k testKey, name0 string, ids map[string]uint64, obs mcpObserver) int {
	t.Helper()
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if slices.Contains(names, "add") != k.has("write") || slices.Contains(names, "search") != k.has("read") || slices.Contains(names, "delete") != k.has("forget") {
		t.Errorf("%s: tools %v for scopes %v", name0, names, k.scopes)
	}
	leaks := 0
	for _, agent := range append(slices.Clone(testAgents), "") {
		name := name0 + "/mcp/" + agent
		own := agent == "" && len(k.agents) == 1 && (obs.starOwnsNone || k.agents[0] != "*") || agent != "" && k.allows(agent)
		args := map[string]any{"text": "via mcp by " + k.name}
		if agent != "" {
			args["agent"] = agent
		}
		for _, tool := range []string{"add", "remember"} {
			var next uint64
			if obs.written != nil {
				next = obs.written()
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			wrote := obs.written != nil && obs.written() != next
			switch {
			case !k.has("write"):
				if err == nil || wrote {
					t.Errorf("%s: %s without write: %+v %v", name, tool, res, err)
				}
			case own:
				if err != nil || res.IsError || obs.written != nil && !wrote {
					t.Errorf("%s: own %s: %+v %v", name, tool, res, err)
				}
			default:
				if err != nil || !res.IsError {
					t.Errorf("%s: %s for another agent: %+v %v", name, tool, res, err)
				}
			}
			if wrote && !own {
				leaks++
				t.Errorf("%s: %s wrote for another agent", name, tool)
			}
		}
		// delete/forget: another agent named is refused; another
		// agent's id under the key's own agent forgets nothing.
		for _, tool := range []string{"delete", "forget"} {
			for a, id := range ids {
				if k.allows(a) {
					continue // its own record: forgetting it is allowed
				}
				args := map[string]any{"ids": []uint64{id}}
				if agent != "" {
					args["agent"] = agent
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if obs.present != nil && !obs.present(id) {
					leaks++
					t.Errorf("%s: %s of %s's record %d removed it: %+v %v", name, tool, a, id, res, err)
				}
				switch {
				case !k.has("forget"):
					if err == nil {
						t.Errorf("%s: %s without the forget scope: %+v", name, tool, res)
					}
				case err != nil:
					t.Errorf("%s: %s: %v", name, tool, err)
				case tool == "delete" && !res.IsError && !strings.Contains(mcpText(res), "Deleted 0 "):
					leaks++
					t.Errorf("%s: delete of %s's record %d: %s", name, a, id, mcpText(res))
				}
			}
		}
		// feedback and consolidate (write), core and list_core (read):
		// another agent named is refused; another agent's ids, under
		// the key's own agent, are unknown: its value and core memory
		// do not move.
		for a, id := range ids {
			if k.allows(a) {
				continue
			}
			var before string
			if obs.judged != nil {
				before = obs.judged(a, id)
			}
			for _, call := range []struct {
				tool  string
				args  map[string]any
				scope string
			}{
				{"feedback", map[string]any{"ids": []uint64{id}, "useful": true}, "write"},
				{"consolidate", map[string]any{"ids": []uint64{id}}, "write"},
				{"core", map[string]any{"history": true}, "read"},
				{"list_core", map[string]any{}, "read"},
			} {
				if agent != "" {
					call.args["agent"] = agent
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
				switch {
				case !k.has(call.scope):
					if err == nil {
						t.Errorf("%s: %s without %s: %+v", name, call.tool, call.scope, res)
					}
					continue
				case err != nil:
					t.Errorf("%s: %s: %v", name, call.tool, err)
					continue
				case !own && !res.IsError:
					t.Errorf("%s: %s for another agent answered %+v", name, call.tool, res.Content)
				case call.scope == "write" && !res.IsError:
					leaks++
					t.Errorf("%s: %s of %s's record %d under the key's agent answered %+v", name, call.tool, a, id, res.Content)
				}
				var cu struct{ Units []wire.Unit }
				if b, _ := json.Marshal(res.StructuredContent); res.StructuredContent != nil && json.Unmarshal(b, &cu) == nil {
					for _, u := range cu.Units {
						if !k.allows(u.Agent) {
							leaks++
							t.Errorf("%s: %s listed %s's unit %d", name, call.tool, u.Agent, u.ID)
						}
					}
				}
			}
			if obs.judged != nil {
				if after := obs.judged(a, id); after != before {
					leaks++
					t.Errorf("%s: %s's value or core memory moved: %s -> %s", name, a, before, after)
				}
			}
		}
		for _, tool := range []string{"search", "recall", "list"} {
			args := map[string]any{}
			if tool != "list" {
				args["query"] = "secret launch code"
			}
			if agent != "" {
				args["agent"] = agent
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			switch {
			case !k.has("read"):
				if err == nil {
					t.Errorf("%s: %s without read: %+v", name, tool, res)
				}
				continue
			case err != nil:
				t.Errorf("%s: %s: %v", name, tool, err)
				continue
			case !own && !res.IsError:
				t.Errorf("%s: %s for another agent answered %+v", name, tool, res.Content)
			case own && res.IsError:
				t.Errorf("%s: own %s: %s", name, tool, mcpText(res))
			case own && tool == "search" && agent != "" && !strings.Contains(mcpText(res), "code of "+agent):
				t.Errorf("%s: own search missed the seeded record: %s", name, mcpText(res))
			}
			var r wire.Result
			if b, _ := json.Marshal(res.StructuredContent); res.StructuredContent != nil && json.Unmarshal(b, &r) != nil {
				t.Errorf("%s: %s: structured content %s", name, tool, b)
			}
			for _, m := range r.Memories {
				if !k.allows(m.Agent) {
					leaks++
					t.Errorf("%s: %s returned %s's record %d", name, tool, m.Agent, m.ID)
				}
			}
			for a, id := range ids {
				if txt := fmt.Sprint(res.Content); !k.allows(a) && strings.Contains(txt, "code of "+a+" ") {
					leaks++
					t.Errorf("%s: %s showed %s's record %d", name, tool, a, id)
				}
			}
		}
	}
	return leaks
}

// mcpText is the text of a tool result.
func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestParseKeys(t *testing.T) {
	good := keysJSON(testKeys)
	kr, err := parseKeys(good)
	if err != nil {
		t.Fatal(err)
	}
	if tn := kr.lookup("tok-beta"); tn == nil || tn.name != "beta" || !tn.allows("b2") || tn.allows("a1") || tn.has(scopeAdmin) || !tn.has(scopeWrite) {
		t.Fatalf("beta: %+v", tn)
	}
	if kr.lookup("tok-bet") != nil || kr.lookup("") != nil {
		t.Fatal("a wrong token matched")
	}
	hash := strings.Repeat("ab", 32)
	for _, tc := range []struct{ body, field string }{
		{`{"keys":[]}`, "keys"},
		{`{"keys":[{"token_sha256":"` + hash + `","agents":["a"],"scopes":["read"]}]}`, "keys[0].name"},
		{`{"keys":[{"name":"k","token_sha256":"xyz","agents":["a"],"scopes":["read"]}]}`, "keys[0].token_sha256"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":[],"scopes":["read"]}]}`, "keys[0].agents"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":["*"],"scopes":["read","write"]}]}`, "keys[0].agents[0]"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":[""],"scopes":["read"]}]}`, "keys[0].agents[0]"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":["a"],"scopes":["root"]}]}`, "keys[0].scopes[0]"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":["a"],"scopes":[]}]}`, "keys[0].scopes"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":["a"],"scopes":["read"]},{"name":"k","token_sha256":"` + strings.Repeat("cd", 32) + `","agents":["a"],"scopes":["read"]}]}`, "keys[1].name"},
		{`{"keys":[{"name":"k","token_sha256":"` + hash + `","agents":["a"],"scopes":["read"]},{"name":"j","token_sha256":"` + hash + `","agents":["a"],"scopes":["read"]}]}`, "keys[1].token_sha256"},
		{`{"keys":[{"name":"k","token":"plain","agents":["a"],"scopes":["read"]}]}`, "token"},
	} {
		_, err := parseKeys([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.HasPrefix(err.Error(), "lazymem: bad keys file") {
			t.Errorf("%s: %v, want an error naming %s", tc.body, err, tc.field)
		}
	}
}

// TestKeysReload: SIGHUP swaps the keys; a file that no longer loads
// keeps the previous ones.
func TestKeysReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(file, keysJSON(testKeys[:1]), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(nil, defaultLimits())
	kr, err := loadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	s.keys.Store(kr)
	var logs logbuf.Buffer
	stop := reloadKeysOnHUP(s, file, newLogger("json", &logs))
	defer stop()
	hup := func(want string) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, want, func() bool { return strings.Contains(logs.String(), want) })
	}
	if err := os.WriteFile(file, keysJSON(testKeys[1:2]), 0o600); err != nil {
		t.Fatal(err)
	}
	hup(`"msg":"SIGHUP: keys reloaded"`)
	if s.keys.Load().lookup("tok-alpha") != nil || s.keys.Load().lookup("tok-beta") == nil {
		t.Fatal("keys not swapped")
	}
	if err := os.WriteFile(file, []byte(`{"keys":[{"name":""}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("keys not reloaded")
	if s.keys.Load().lookup("tok-beta") == nil {
		t.Fatal("a bad file dropped the keys in use")
	}
}

// recordsOf lists the ids of agent's records, read one by one from the
// store (the slow reference of the stats' count).
func recordsOf(t *testing.T, db *engine.DB, agent string) []uint64 {
	t.Helper()
	var ids []uint64
	for id := uint64(1); id < db.Metrics().Log.Next; id++ {
		r, err := db.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Agent == agent {
			ids = append(ids, id)
		}
	}
	return ids
}
