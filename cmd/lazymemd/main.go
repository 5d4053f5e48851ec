// Command lazymemd is the lazymem daemon: one store served over an
// HTTP/JSON API on a single node.
//
//	lazymemd --db ./mem [--addr 127.0.0.1:7373] [--embedder hash]
//
// Endpoints (docs/API.md has the full reference and curl examples):
//
//	GET  /v1/health        {"status": "ok"}
//	POST /v1/records       one record, or {"records": [...]} -> {"ids": [...]}
//	                       (durable when the reply arrives; a bad record
//	                       rejects the whole body and writes nothing)
//	GET  /v1/records/{id}  the stored record
//	POST /v1/recall        a query -> {"memories": [...], "stats": {...}}
//	GET  /v1/stats         the store's metrics
//	POST /mcp              the Model Context Protocol (streamable HTTP, JSON
//	                       replies): tools remember and recall
//
// Errors are JSON, {"error": {"code", "field", "message"}}, with status 400
// for bad input (the field named), 404, 405, 410, 413, 502 when the
// embedder fails, 503 while shutting down. SIGINT or SIGTERM stops taking
// connections, lets the requests in flight finish (up to --shutdown-timeout)
// and closes the store.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/embedspec"
	"github.com/lazymem/lazymem/engine"
)

// Defaults of the flags.
const (
	defaultAddr     = "127.0.0.1:7373"
	defaultMaxBody  = 64 << 20
	defaultShutdown = 15 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// config is the parsed command line.
type config struct {
	db, addr, embedder string
	mcpAgent           string
	tokenFile          string
	origins            []string
	maxBody            int64
	shutdown           time.Duration
	quiet              bool
}

// run is main without the process: 0 after a clean shutdown, 1 when
// serving failed, 2 for a bad command line.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "lazymemd: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(stderr, "lazymemd: listen on %s: %v\n", cfg.addr, err)
		return 1
	}
	if err := serve(ctx, cfg, ln, stderr); err != nil {
		fmt.Fprintf(stderr, "lazymemd: %s\n", strings.TrimPrefix(err.Error(), "lazymem: "))
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("lazymemd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: lazymemd --db DIR [flags]\n\nServes one lazymem store over HTTP/JSON (see docs/API.md).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.db, "db", "", "store directory, created if absent (required)")
	fs.StringVar(&cfg.addr, "addr", defaultAddr, "address to listen on (host:port; :0 picks a free port)")
	fs.StringVar(&cfg.embedder, "embedder", "hash", embedspec.Usage)
	fs.Int64Var(&cfg.maxBody, "max-body", defaultMaxBody, "largest request body in bytes")
	fs.DurationVar(&cfg.shutdown, "shutdown-timeout", defaultShutdown, "how long requests in flight may take to finish on SIGTERM")
	fs.BoolVar(&cfg.quiet, "quiet", false, "do not log each request")
	fs.StringVar(&cfg.tokenFile, "token-file", "", "file holding a bearer token every request but GET /v1/health must carry (default: no authentication; also $LAZYMEMD_TOKEN)")
	fs.Func("allow-origin", "a browser origin (scheme://host[:port]) allowed to call the API (repeatable; default none: requests carrying an Origin header are refused)", func(v string) error {
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fmt.Errorf("%q: want scheme://host[:port], like http://localhost:3000", v)
		}
		cfg.origins = append(cfg.origins, strings.TrimSuffix(v, "/"))
		return nil
	})
	fs.StringVar(&cfg.mcpAgent, "mcp-agent", "", "agent the MCP tools (POST /mcp) use when a call names none (default: calls must name one)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
	case cfg.db == "":
		return cfg, errors.New("--db is required")
	case cfg.maxBody < 1:
		return cfg, fmt.Errorf("--max-body %d: want a positive number of bytes", cfg.maxBody)
	case cfg.shutdown < 0:
		return cfg, fmt.Errorf("--shutdown-timeout %v: want >= 0", cfg.shutdown)
	}
	return cfg, nil
}

// serve opens the store, serves the API on ln until ctx is done, then shuts
// down gracefully and closes the store.
func serve(ctx context.Context, cfg config, ln net.Listener, stderr io.Writer) error {
	defer ln.Close()
	emb, err := embedspec.Open(cfg.embedder)
	if err != nil {
		return err
	}
	db, err := engine.Open(cfg.db, engine.Options{Embedder: emb})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	token, err := loadToken(cfg.tokenFile)
	if err != nil {
		return errors.Join(err, db.Close())
	}
	s := &server{db: db, maxBody: cfg.maxBody, clock: time.Now, errLog: logger, mcpAgent: cfg.mcpAgent, token: token, origins: map[string]bool{}}
	for _, o := range cfg.origins {
		s.origins[o] = true
	}
	if !cfg.quiet {
		s.log = logger
	}
	srv := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a 64 MiB batch on a slow link, not a stalled client forever
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	m := db.Metrics()
	name := "hash"
	if emb != nil {
		name = emb.Name()
	}
	logger.Info("lazymemd listening", "url", "http://"+ln.Addr().String(), "db", cfg.db,
		"records", m.Log.Next-1, "embedder", name, "auth", token != "")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
		// Serve failed on its own: nothing is in flight any more.
	case <-ctx.Done():
		logger.Info("shutting down", "timeout", cfg.shutdown)
		sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdown)
		err = srv.Shutdown(sctx)
		cancel()
		if err != nil {
			srv.Close() // the timeout passed: drop what is left
		}
		<-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, db.Close())
}

// loadToken reads the bearer token from file (first line, trimmed), or
// from $LAZYMEMD_TOKEN when file is "". "" means no authentication.
func loadToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv("LAZYMEMD_TOKEN")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("--token-file %s: the first line is empty", file)
}
