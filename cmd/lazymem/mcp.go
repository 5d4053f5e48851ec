package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lazymem/lazymem/cmd/internal/mcptools"
	"github.com/lazymem/lazymem/engine"
)

// cmdMCP serves one agent's memory as MCP tools over stdio (newline
// delimited JSON-RPC on stdin and stdout), the transport desktop agents
// start a local server with. The agent is fixed by --agent: the tools
// take no agent argument, so a call cannot reach another agent's
// memories. Logs go to stderr; stdout carries only the protocol.
func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", "mcp --db DIR --agent A [--embedder SPEC]", stderr)
	dbDir := fs.String("db", "", "store directory `DIR`, created if absent (required)")
	agent := fs.String("agent", "", "`AGENT` whose memory the tools read and write (required)")
	embSpec := fs.String("embedder", "hash", embedderUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *dbDir == "":
		return usagef("mcp: --db is required")
	case *agent == "":
		return usagef("mcp: --agent is required (the tools act as that agent only)")
	case len(pos) > 0:
		return usagef("mcp: unexpected argument %q", pos[0])
	}
	emb, err := openEmbedder(*embSpec)
	if err != nil {
		return err
	}
	db, err := engine.Open(*dbDir, engine.Options{Embedder: emb})
	if err != nil {
		return err
	}
	srv := newMCPServer(db, *agent, slog.New(slog.NewTextHandler(stderr, nil)))
	d := newDrained()
	err = srv.Run(ctx, &mcp.IOTransport{Reader: d.input(ctx, stdin), Writer: d.output(stdout)})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil // the client closed stdin, or an interrupt: a normal end
	}
	return errors.Join(err, db.Close())
}

// newMCPServer is the MCP server of db's agent: every tool of mcptools,
// without the agent argument.
func newMCPServer(db *engine.DB, agent string, logger *slog.Logger) *mcp.Server {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "lazymem", Version: version}, &mcp.ServerOptions{
		Instructions: mcptools.Instructions, Logger: logger,
	})
	scoped := db.Agent(agent, engine.Quota{})
	env := &mcptools.Env{
		Store: func(string) mcptools.Store { return scoped },
		Core:  func(string) mcptools.CoreStore { return scoped },
		Agent: func(named string) (string, error) {
			if named != "" && named != agent {
				return "", fmt.Errorf("%w: this server serves the agent %q only", mcptools.ErrAgent, agent)
			}
			return agent, nil
		},
	}
	tools := append(slices.Clip(mcptools.All), mcptools.Feedback, mcptools.Consolidate, mcptools.Core, mcptools.ListCore)
	for _, t := range tools {
		t = t.WithoutAgent()
		a := t.Annotations
		srv.AddTool(&mcp.Tool{
			Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, IdempotentHint: a.IdempotentHint,
				DestructiveHint: &a.DestructiveHint, OpenWorldHint: &a.OpenWorldHint},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			if msg := mcptools.CheckArgs(t.InputSchema, args); msg != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: t.Name + " arguments: " + msg}
			}
			res := t.Call(ctx, env, args)
			out := &mcp.CallToolResult{IsError: res.IsError, StructuredContent: res.StructuredContent}
			for _, c := range res.Content {
				out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
			}
			return out, nil
		})
	}
	return srv
}
