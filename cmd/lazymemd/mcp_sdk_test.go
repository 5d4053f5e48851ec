package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOfficialClient: the official Go SDK's client, over streamable
// HTTP with its defaults (it first tries a newer protocol revision, falls
// back to initialize, then asks for a server-sent event stream this
// server does not offer), initializes, lists the tools and calls each.
func TestMCPOfficialClient(t *testing.T) {
	ts, db := newTestServer(t, defaultMaxBody)
	ctx := t.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "lazymemd-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "lazymemd" || !strings.HasPrefix(init.ProtocolVersion, "2025-") || init.Capabilities.Tools == nil {
		t.Fatalf("initialize result: %+v", init)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		a := tl.Annotations
		destructive := tl.Name == "delete" || tl.Name == "forget"
		// Writes that are not idempotent: a second add stores a second
		// memory, a second feedback counts twice, a second consolidation
		// may supersede what the first made.
		write := tl.Name == "add" || tl.Name == "remember" || tl.Name == "feedback" || tl.Name == "consolidate"
		if a == nil || a.ReadOnlyHint == (write || destructive) || a.DestructiveHint == nil || *a.DestructiveHint != destructive || a.IdempotentHint == write {
			t.Errorf("tool %s: annotations %+v", tl.Name, a)
		}
	}
	if strings.Join(names, ",") != "add,remember,search,recall,list,delete,forget,feedback,consolidate,core,list_core" {
		t.Fatalf("tools: %v", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{
		"agent": "a1", "session": "s1", "role": "user", "text": "The billing service runs on Postgres 16.",
	}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("remember: %+v %v", res, err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(txt.Text, "memory 1") {
		t.Fatalf("remember: %+v", res.Content[0])
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"agent": "a1", "query": "which database does billing use?", "k": 3}})
	if err != nil || res.IsError {
		t.Fatalf("recall: %+v %v", res, err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(txt.Text, "Postgres 16") || res.StructuredContent == nil {
		t.Fatalf("recall: %+v", res)
	}
	// A call that does not fit the schema is a JSON-RPC invalid-params
	// error; a value the store rejects is a tool error the model reads.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"agent": "a1", "k": "ten"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != rpcInvalidParams || !strings.Contains(werr.Message, `"query" is required`) {
		t.Fatalf("recall without query: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"agent": "a1", "query": "x", "k": "ten"}})
	if !errors.As(err, &werr) || werr.Code != rpcInvalidParams || !strings.Contains(werr.Message, `"k" must be an integer`) {
		t.Fatalf("recall with k ten: %v", err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"agent": "a1", "query": "x", "k": 5000}})
	if err != nil || !res.IsError {
		t.Fatalf("recall with k 5000: %+v %v", res, err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if db.Metrics().Log.Next != 2 {
		t.Fatalf("next id %d, want 2", db.Metrics().Log.Next)
	}
}
