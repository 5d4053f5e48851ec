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

// Defaults of the flags (the limits' are in limits.go).
const (
	defaultAddr     = "127.0.0.1:7373"
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
	hosts              []string
	lim                limits
	maxConns           int
	readHeaderTimeout  time.Duration
	readTimeout        time.Duration
	idleTimeout        time.Duration
	maxHeaderBytes     int
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
	cfg := config{lim: defaultLimits()}
	fs := flag.NewFlagSet("lazymemd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: lazymemd --db DIR [flags]\n\nServes one lazymem store over HTTP/JSON (see docs/API.md).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.db, "db", "", "store directory, created if absent (required)")
	fs.StringVar(&cfg.addr, "addr", defaultAddr, "address to listen on (host:port; :0 picks a free port)")
	fs.StringVar(&cfg.embedder, "embedder", "hash", embedspec.Usage)
	fs.Int64Var(&cfg.lim.maxBody, "max-body", defaultMaxBody, "largest request body in bytes (413 over it)")
	fs.IntVar(&cfg.lim.maxBatch, "max-batch", defaultMaxBatch, "most records of one append (413 over it)")
	fs.Int64Var(&cfg.lim.maxInflight, "max-inflight-records", defaultMaxInflight, "most records being appended at once, all requests together (503 busy over it)")
	fs.Int64Var(&cfg.lim.maxDecode, "max-decode-bytes", defaultMaxDecode, "most bytes of request bodies held in memory at once, all requests together (503 busy over it)")
	fs.IntVar(&cfg.lim.maxSynonyms, "max-synonyms", defaultMaxSynonyms, "most keys of a query's synonym table (413 over it)")
	fs.IntVar(&cfg.lim.maxSynonymBytes, "max-synonym-bytes", defaultMaxSynonymBytes, "most bytes of a synonym table's keys and values (413 over it)")
	fs.IntVar(&cfg.lim.maxAgents, "max-agents", defaultMaxAgents, "most agents one query searches (413 over it)")
	fs.DurationVar(&cfg.lim.requestTimeout, "request-timeout", defaultRequestTimeout, "deadline of a request's work once its headers are read (503 timeout past it)")
	fs.IntVar(&cfg.maxConns, "max-conns", defaultMaxConns, "most client connections open at once; more wait to be accepted")
	fs.DurationVar(&cfg.readHeaderTimeout, "read-header-timeout", defaultReadHeaderTimeout, "time a client has to send a request's headers (slow clients are disconnected)")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", defaultReadTimeout, "time a client has to send a whole request, body included")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", defaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.IntVar(&cfg.maxHeaderBytes, "max-header-bytes", defaultMaxHeaderBytes, "largest request header block in bytes (431 over it)")
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
	fs.Func("allowed-hosts", "Host headers answered, comma-separated: names or addresses (any port), host:port, or * for any (repeatable; default localhost,127.0.0.1,[::1]; required when --addr is not a loopback address)", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				cfg.hosts = append(cfg.hosts, h)
			}
		}
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
	case cfg.shutdown <= 0:
		return cfg, fmt.Errorf("--shutdown-timeout %v: want a positive duration", cfg.shutdown)
	case cfg.maxConns < 1:
		return cfg, fmt.Errorf("--max-conns %d: want a positive number", cfg.maxConns)
	case cfg.readHeaderTimeout <= 0 || cfg.readTimeout <= 0 || cfg.idleTimeout <= 0:
		return cfg, fmt.Errorf("--read-header-timeout, --read-timeout and --idle-timeout must be positive (%v, %v, %v)", cfg.readHeaderTimeout, cfg.readTimeout, cfg.idleTimeout)
	case cfg.maxHeaderBytes < 1:
		return cfg, fmt.Errorf("--max-header-bytes %d: want a positive number of bytes", cfg.maxHeaderBytes)
	}
	if len(cfg.hosts) == 0 {
		if !loopbackAddr(cfg.addr) {
			return cfg, fmt.Errorf("--addr %s is not a loopback address: list the host names clients reach it by with --allowed-hosts (or --allowed-hosts '*')", cfg.addr)
		}
		cfg.hosts = defaultHosts
	}
	if _, err := parseHosts(cfg.hosts); err != nil {
		return cfg, errors.New(strings.TrimPrefix(err.Error(), "lazymem: bad flag: "))
	}
	if err := cfg.lim.validate(); err != nil {
		return cfg, errors.New(strings.TrimPrefix(err.Error(), "lazymem: bad flag: "))
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
	s := newServer(db, cfg.lim)
	s.errLog, s.mcpAgent, s.token = logger, cfg.mcpAgent, token
	if s.hosts, err = parseHosts(cfg.hosts); err != nil {
		return errors.Join(err, db.Close())
	}
	for _, o := range cfg.origins {
		s.origins[o] = true
	}
	if !cfg.quiet {
		s.log = logger
	}
	srv := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    cfg.maxHeaderBytes,
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
	go func() { errc <- srv.Serve(newLimitListener(ln, cfg.maxConns)) }()
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
