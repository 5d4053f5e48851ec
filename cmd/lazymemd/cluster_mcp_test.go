package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// startClusterNodes starts two daemons in cluster mode on one NATS
// server, serving testKeys, and waits until every partition is owned and
// caught up. They stop at the end of the test.
func startClusterNodes(t *testing.T, extra ...string) []string {
	t.Helper()
	nc := clustertest.Start(t, 1)
	keysFile := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(keysFile, keysJSON(testKeys), 0o600); err != nil {
		t.Fatal(err)
	}
	urls := startNodes(t, nc.URLs(), append([]string{"--keys", keysFile}, extra...)...)
	waitAllOwned(t, "tok-root", urls...)
	return urls
}

// mcpSession connects the official MCP client to url as token.
func mcpSession(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// exportOf is every record of agent, exported by root through url.
func exportOf(t *testing.T, url, agent string) []map[string]any {
	t.Helper()
	st, b := authCall(t, "tok-root", "GET", url+"/v1/export?agent="+agent, "")
	if st != 200 {
		t.Fatalf("export %s through %s: %d %s", agent, url, st, b)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// TestClusterMCP: the MCP tools in cluster mode, with the official
// client. A memory remembered through the node that does not own the
// agent's partition is found at once by a search through that node
// (forwarded to the owner, which waits for the sequence the first node
// published), and deleted through it; the tools of routes cluster mode
// does not serve are not listed and refused by name; and the tenancy
// table holds over MCP through both nodes: each key adds, finds and
// deletes exactly its agents' memories, with the scopes it has.
func TestClusterMCP(t *testing.T) {
	urls := startClusterNodes(t)
	owner, other := ownerURL(t, "tok-root", "a1", urls)
	ctx := t.Context()

	// The forwarded round trip, as key alpha (a1 only: no agent named).
	cs := mcpSession(t, other, "tok-alpha")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "the ferry leaves pier nine at dawn"}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %+v %v", res, err)
	}
	var added struct{ ID uint64 }
	if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &added) != nil || added.ID == 0 {
		t.Fatalf("remember: structured %+v", res.StructuredContent)
	}
	if _, p := cluster.SplitID(added.ID); p != cluster.PartitionOf("a1", 8) {
		t.Fatalf("id %d: partition %d", added.ID, p)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "when does the ferry leave"}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "pier nine") {
		t.Fatalf("forwarded search right after remember: %+v %v", res, err)
	}
	var found wire.Result
	if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &found) != nil || len(found.Memories) == 0 || found.Memories[0].ID != added.ID {
		t.Fatalf("search: structured %+v", res.StructuredContent)
	}
	if _, ok := found.Memories[0].Meta[cluster.MetaID]; ok {
		t.Fatalf("search shows the reserved key: %+v", found.Memories[0])
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "pier nine") {
		t.Fatalf("forwarded list: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"ids": []uint64{added.ID}}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "Deleted 1 ") {
		t.Fatalf("forwarded delete: %s %v (owner %s: %+v; other %s: %+v)", mcpText(res), err, owner, clusterStatus(t, "tok-root", owner), other, clusterStatus(t, "tok-root", other))
	}
	for _, u := range []string{owner, other} {
		if st, b := authCall(t, "tok-root", "GET", fmt.Sprintf("%s/v1/records/%d", u, added.ID), ""); st != 404 {
			t.Fatalf("deleted memory through %s: %d %s", u, st, b)
		}
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, name := range []string{"search", "delete", "feedback", "consolidate", "core", "list_core"} {
		if !slices.Contains(names, name) {
			t.Fatalf("tools in cluster mode: %v, want %s", names, name)
		}
	}
	// Feedback, consolidation and core memory, forwarded.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "we decided to paint the ferry blue"}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %+v %v", res, err)
	}
	if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &added) != nil || added.ID == 0 {
		t.Fatalf("remember: structured %+v", res.StructuredContent)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"feedback", map[string]any{"ids": []uint64{added.ID}, "useful": true}},
		{"consolidate", map[string]any{"ids": []uint64{added.ID}}},
		{"core", map[string]any{}},
	} {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil || res.IsError {
			t.Fatalf("forwarded %s: %s %v", call.name, mcpText(res), err)
		}
	}

	// The tenancy table over MCP, through both nodes. root seeds one
	// memory per agent.
	ids := map[string]uint64{}
	for _, a := range testAgents {
		st, b := authCall(t, "tok-root", "POST", urls[0]+"/v1/records", fmt.Sprintf(`{"agent":%q,"text":"the secret launch code of %s is kept here"}`, a, a))
		var app struct{ IDs []uint64 }
		if st != 200 || json.Unmarshal(b, &app) != nil {
			t.Fatalf("seed %s: %d %s", a, st, b)
		}
		ids[a] = app.IDs[0]
	}
	leaks := 0
	for _, k := range testKeys {
		for _, u := range urls {
			// The record, once its partition's owner applied it (root
			// seeded it through the stream just before).
			present := func(id uint64) bool {
				seq, _ := cluster.SplitID(id)
				st, _ := authCall(t, "tok-root", "GET", fmt.Sprintf("%s/v1/records/%d?min_seq=%d", u, id, seq), "")
				return st != 404
			}
			leaks += mcpTenancyTable(t, mcpSession(t, u, k.token), k, k.name+"@"+u, ids, mcpObserver{present: present})
		}
	}
	// Every memory a key added is its own agents': export each agent.
	for _, a := range testAgents {
		for _, m := range exportOf(t, urls[1], a) {
			text, _ := m["text"].(string)
			if meta, _ := m["meta"].(map[string]any); meta[cluster.MetaID] != nil {
				t.Errorf("export shows the reserved key: %v", m)
			}
			by, ok := strings.CutPrefix(text, "via mcp by ")
			if !ok {
				continue
			}
			i := slices.IndexFunc(testKeys, func(k testKey) bool { return k.name == by })
			if i < 0 || !testKeys[i].allows(a) || !testKeys[i].has("write") {
				leaks++
				t.Errorf("%s's memory %q", a, text)
			}
		}
	}
	// No key deleted another agent's memory.
	for a, id := range ids {
		if st, b := authCall(t, "tok-root", "GET", fmt.Sprintf("%s/v1/records/%d", urls[0], id), ""); st != 200 {
			leaks++
			t.Errorf("%s's seeded memory %d: %d %s", a, id, st, b)
		}
	}
	if leaks != 0 {
		t.Fatalf("%d cross-tenant reads or writes over MCP", leaks)
	}
}

// TestClusterExportBackup: in cluster mode an export is answered by the
// owner of the agent's partition through any node (no reserved key in
// its lines), a key of every agent exports a whole partition with
// ?partition=, and a bad or missing one is refused naming the field; a
// backup copies each partition the node owns, and a standalone engine
// opens each copy with its records and its index loaded.
func TestClusterExportBackup(t *testing.T) {
	urls := startClusterNodes(t)
	_, other := ownerURL(t, "tok-root", "a1", urls)
	var seq uint64
	for i := range 5 {
		st, b := authCall(t, "tok-alpha", "POST", other+"/v1/records", fmt.Sprintf(`{"agent":"a1","text":"tide table %d for the north harbour","meta":{"k":["v"]}}`, i))
		var app struct{ Seq uint64 }
		if st != 200 || json.Unmarshal(b, &app) != nil {
			t.Fatalf("append: %d %s", st, b)
		}
		seq = app.Seq
	}
	// Caught up before the export (an export does not wait).
	if st, b := authCall(t, "tok-alpha", "POST", fmt.Sprintf("%s/v1/recall?min_seq=%d", other, seq), `{"text":"tide"}`); st != 200 {
		t.Fatalf("recall: %d %s", st, b)
	}
	st, b := authCall(t, "tok-alpha", "GET", other+"/v1/export", "")
	if st != 200 || bytes.Count(b, []byte("\n")) != 5 || bytes.Contains(b, []byte(cluster.MetaID)) || !bytes.Contains(b, []byte(`"meta":{"k":["v"]}`)) {
		t.Fatalf("forwarded export: %d %s", st, b)
	}
	p := cluster.PartitionOf("a1", 8)
	st, b = authCall(t, "tok-root", "GET", fmt.Sprintf("%s/v1/export?partition=%d", urls[0], p), "")
	if st != 200 || bytes.Count(b, []byte("tide table")) != 5 {
		t.Fatalf("partition export: %d %s", st, b)
	}
	for _, tc := range []struct{ token, query, field string }{
		{"tok-root", "", "agent"},
		{"tok-root", "?partition=8", "partition"},
		{"tok-root", fmt.Sprintf("?agent=a1&partition=%d", (p+1)%8), "partition"},
	} {
		if st, b := authCall(t, tc.token, "GET", urls[0]+"/v1/export"+tc.query, ""); st != 400 || !strings.Contains(string(b), `"field":"`+tc.field+`"`) {
			t.Errorf("export%s: %d %s, want 400 naming %s", tc.query, st, b, tc.field)
		}
	}
	if st, b := authCall(t, "tok-alpha", "GET", urls[0]+"/v1/export?agent=b1", ""); st != 403 {
		t.Errorf("export of another tenant's agent: %d %s", st, b)
	}

	// Backup: each node copies the partitions it owns. A partition that
	// moves between the two nodes' backups (a rebalance still going on
	// under load) may be copied twice or missed: then both are tried
	// again into new directories.
	var copied map[string]string // partition -> the backup holding it
	for attempt := 0; len(copied) < 8; attempt++ {
		if attempt == 5 {
			t.Fatalf("five pairs of backups never covered the 8 partitions: %v", copied)
		}
		copied = map[string]string{}
		for i, u := range urls {
			before := clusterStatus(t, "tok-root", u).Applied
			to := filepath.Join(t.TempDir(), fmt.Sprint("backup", i))
			st, b := authCall(t, "tok-root", "POST", u+"/v1/backup", fmt.Sprintf(`{"to":%q}`, to))
			var out struct {
				Partitions map[string]uint64
			}
			if st != 200 || json.Unmarshal(b, &out) != nil {
				t.Fatalf("backup through %s: %d %s", u, st, b)
			}
			if st, b := authCall(t, "tok-root", "POST", u+"/v1/backup", fmt.Sprintf(`{"to":%q}`, to)); st != 400 || !strings.Contains(string(b), "backup.to") {
				t.Errorf("backup over a backup: %d %s", st, b)
			}
			after := clusterStatus(t, "tok-root", u).Applied
			for k := range out.Partitions {
				_, was := before[k]
				_, is := after[k]
				if !was && !is {
					t.Errorf("%s backed up partition %s it owned neither before nor after", u, k)
				}
				copied[k] = filepath.Join(to, "p"+k)
			}
		}
	}
	db, err := engine.Open(copied[fmt.Sprint(p)], engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := db.Metrics()
	res, err := db.Recall(t.Context(), engine.Query{Agent: "a1", Text: "tide table north harbour", K: 10, Mode: engine.ModeSparse})
	if cerr := db.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || len(res.Memories) != 5 || m.Index.Rebuilt != 0 {
		t.Errorf("the backup of partition %d: %d memories (%v), %d re-indexed at open", p, len(res.Memories), err, m.Index.Rebuilt)
	}
}
