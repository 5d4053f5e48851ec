package main

import (
	"context"
	"crypto/tls"
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

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/embedspec"
	"github.com/lazymem/lazymem/cmd/internal/version"
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
	os.Exit(runOut(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	db, addr, embedder string
	mcpAgent           string
	tokenFile          string
	keysFile           string
	logFormat          string
	tlsCert, tlsKey    string
	origins            []string
	hosts              []string
	lim                limits
	cluster            clusterConfig
	maxConns           int
	readHeaderTimeout  time.Duration
	readTimeout        time.Duration
	idleTimeout        time.Duration
	maxHeaderBytes     int
	shutdown           time.Duration
	quiet              bool
	version            bool
	workPerMinute      int // working memory's budget; negative: off
}

// workingMemory is the store's working memory as --working-memory sets it.
func (c config) workingMemory() engine.WorkingMemoryOptions {
	if c.workPerMinute < 0 {
		return engine.WorkingMemoryOptions{Disable: true}
	}
	return engine.WorkingMemoryOptions{PerMinute: c.workPerMinute}
}

// run is main without the process: 0 after a clean shutdown, 1 when
// serving failed, 2 for a bad command line.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	return runOut(ctx, args, io.Discard, stderr)
}

// runOut is run with a standard output, where --version prints.
func runOut(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && cfg.version {
		fmt.Fprintln(stdout, version.String("lazymemd"))
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
	fs.IntVar(&cfg.lim.maxDenseScan, "max-dense-scan", defaultMaxDenseScan, "most records one dense recall may embed; a query's max_dense_scan may lower it (413 over it)")
	fs.DurationVar(&cfg.lim.requestTimeout, "request-timeout", defaultRequestTimeout, "deadline of a request's work once its headers are read (503 timeout past it)")
	fs.IntVar(&cfg.maxConns, "max-conns", defaultMaxConns, "most client connections open at once; more wait to be accepted")
	fs.DurationVar(&cfg.readHeaderTimeout, "read-header-timeout", defaultReadHeaderTimeout, "time a client has to send a request's headers (slow clients are disconnected)")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", defaultReadTimeout, "time a client has to send a whole request, body included")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", defaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.IntVar(&cfg.maxHeaderBytes, "max-header-bytes", defaultMaxHeaderBytes, "largest request header block in bytes (431 over it)")
	fs.DurationVar(&cfg.shutdown, "shutdown-timeout", defaultShutdown, "on SIGTERM, how long requests in flight may take to finish, then how long closing the store may take")
	fs.BoolVar(&cfg.quiet, "quiet", false, "do not log each request")
	fs.IntVar(&cfg.workPerMinute, "working-memory", engine.DefaultWorkingMemoryPerMinute, "most live turns embedded in the background a minute (working memory: the latest turns of a live conversation embedded before they are asked about, costing embedder calls); negative: off")
	fs.StringVar(&cfg.tokenFile, "token-file", "", "file holding a bearer token every request but the probes (GET /v1/live, /v1/ready, /v1/health) must carry (default: no authentication; also $LAZYMEMD_TOKEN)")
	fs.Func("allow-origin", "a browser `ORIGIN` (scheme://host[:port]) allowed to call the API (repeatable; default none: requests carrying an Origin header are refused)", func(v string) error {
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fmt.Errorf("%q: want scheme://host[:port], like http://localhost:3000", v)
		}
		cfg.origins = append(cfg.origins, strings.TrimSuffix(v, "/"))
		return nil
	})
	fs.Func("allowed-hosts", "Host headers answered (`HOSTS`), comma-separated: names or addresses (any port), host:port, or * for any (repeatable; default localhost,127.0.0.1,[::1]; required when --addr is not a loopback address)", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				cfg.hosts = append(cfg.hosts, h)
			}
		}
		return nil
	})
	fs.StringVar(&cfg.keysFile, "keys", "", `JSON file of API keys, each with the agents and scopes it grants: {"keys": [{"name", "token_sha256", "agents", "scopes", "quota"?: {"records", "bytes"}}]} (reloaded on SIGHUP; excludes --token-file)`)
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with (with --tls-key)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&cfg.mcpAgent, "mcp-agent", "", "agent the MCP tools (POST /mcp) use when a call names none (default: calls must name one)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	addClusterFlags(fs, &cfg.cluster)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.version {
		return cfg, nil
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
	case cfg.logFormat != "text" && cfg.logFormat != "json":
		return cfg, fmt.Errorf("--log-format %q: want text or json", cfg.logFormat)
	case (cfg.tlsCert == "") != (cfg.tlsKey == ""):
		return cfg, errors.New("--tls-cert and --tls-key go together")
	case cfg.keysFile != "" && cfg.tokenFile != "":
		return cfg, errors.New("--keys and --token-file exclude each other (a keys file can hold the token's key)")
	}
	if len(cfg.hosts) == 0 {
		if !loopbackAddr(cfg.addr) {
			return cfg, fmt.Errorf("--addr %s is not a loopback address: list the host names clients reach it by with --allowed-hosts (or --allowed-hosts '*')", cfg.addr)
		}
		cfg.hosts = defaultHosts
	}
	if !loopbackAddr(cfg.addr) && cfg.keysFile == "" && cfg.tokenFile == "" && os.Getenv("LAZYMEMD_TOKEN") == "" {
		return cfg, fmt.Errorf("--addr %s is not a loopback address: other machines could read and write every memory; give --keys or --token-file", cfg.addr)
	}
	if _, err := parseHosts(cfg.hosts); err != nil {
		return cfg, errors.New(strings.TrimPrefix(err.Error(), "lazymem: bad flag: "))
	}
	if err := cfg.lim.validate(); err != nil {
		return cfg, errors.New(strings.TrimPrefix(err.Error(), "lazymem: bad flag: "))
	}
	if err := checkCluster(cfg.cluster); err != nil {
		return cfg, errors.New(strings.TrimPrefix(err.Error(), "lazymem: "))
	}
	return cfg, nil
}

// serve serves the API on ln until ctx is done, then shuts down within
// the shutdown timeout. It listens before the store is open: opening can
// take long (the index re-reads what it lacks from the log), and meanwhile
// GET /v1/live says the process is up, GET /v1/ready and every other
// request answer 503, and a signal is honoured.
func serve(ctx context.Context, cfg config, ln net.Listener, stderr io.Writer) error {
	logger := newLogger(cfg.logFormat, stderr)
	var token string
	var keys *keyring
	var err error
	if cfg.keysFile != "" {
		keys, err = loadKeys(cfg.keysFile)
	} else {
		token, err = loadToken(cfg.tokenFile)
	}
	if err != nil {
		ln.Close()
		return err
	}
	s := newServer(nil, cfg.lim)
	s.errLog, s.mcpAgent, s.token = logger, cfg.mcpAgent, token
	if keys != nil {
		s.keys.Store(keys)
		stopReload := reloadKeysOnHUP(s, cfg.keysFile, logger)
		defer stopReload()
	}
	if s.hosts, err = parseHosts(cfg.hosts); err != nil {
		ln.Close()
		return err
	}
	for _, o := range cfg.origins {
		s.origins[o] = true
	}
	if !cfg.quiet {
		s.log = logger
	}
	// Requests run under reqCtx, canceled when the shutdown timeout passes
	// so that the engine's calls stop.
	reqCtx, cancelReqs := context.WithCancel(context.Background())
	defer cancelReqs()
	srv := newHTTPServer(cfg, s.routes(), reqCtx, logger)
	scheme := "http"
	if cfg.tlsCert != "" {
		// Loaded before serving, so a bad pair fails the start instead of
		// every handshake.
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("%w: --tls-cert/--tls-key: %w", errFlag, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}
	errc := make(chan error, 1)
	go func() {
		lln := newLimitListener(ln, cfg.maxConns)
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(lln, "", "")
			return
		}
		errc <- srv.Serve(lln)
	}()
	auth := "none"
	switch {
	case keys != nil:
		auth = fmt.Sprintf("%d keys", len(keys.keys))
	case token != "":
		auth = "token"
	}
	logger.Info("lazymemd listening", "url", scheme+"://"+ln.Addr().String(), "db", cfg.db, "auth", auth)

	opened := make(chan openResult, 1)
	go func() {
		opened <- openEither(cfg, scheme+"://"+ln.Addr().String(), backgroundReporter(s, logger), logger)
	}()
	var db *engine.DB
	var closeStore func() error
	select {
	case res := <-opened:
		if res.err != nil {
			s.state.Store(stateClosing)
			stopHTTP(srv, errc, cancelReqs, cfg.shutdown)
			return res.err
		}
		db, closeStore, s.cluster = res.db, res.close, res.node
		m := db.Metrics()
		logRepairs(logger, m)
		logger.Info("store open, ready", "records", m.Log.Next-1, "embedder", res.embedder)
		s.open(db)
	case <-ctx.Done():
		logger.Info("stopping while the store opens", "timeout", cfg.shutdown)
		return abandonOpen(s, srv, errc, cancelReqs, opened, cfg.shutdown, logger, nil)
	case err := <-errc:
		return abandonOpen(s, srv, errc, cancelReqs, opened, cfg.shutdown, logger, err)
	}

	select {
	case err = <-errc:
		// Serve failed on its own: nothing is in flight any more.
		errc <- err
	case <-ctx.Done():
		logger.Info("shutting down", "timeout", cfg.shutdown)
	}
	s.state.Store(stateClosing)
	err = stopHTTP(srv, errc, cancelReqs, cfg.shutdown)
	return errors.Join(err, closeWithin(cfg.shutdown, closeStore))
}

// newHTTPServer is the HTTP server of cfg: its timeouts bound slow
// clients (slowloris: headers sent a byte at a time), its requests run
// under reqCtx.
func newHTTPServer(cfg config, h http.Handler, reqCtx context.Context, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    cfg.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
	}
}

// Server states: /v1/ready is 200 only while the state is ready.
const (
	stateOpening int32 = iota
	stateReady
	stateClosing
)

type openResult struct {
	db       *engine.DB
	node     *cluster.Node // with --cluster: db is its validator
	embedder string
	err      error
}

// openStore opens the embedder and the store of cfg.
func openStore(cfg config, onBackground func(error)) openResult {
	emb, err := embedspec.Open(cfg.embedder)
	if err != nil {
		return openResult{err: err}
	}
	db, err := engine.Open(cfg.db, engine.Options{Embedder: emb, OnBackgroundError: onBackground, WorkingMemory: cfg.workingMemory()})
	name := "hash"
	if emb != nil {
		name = emb.Name()
	}
	return openResult{db: db, embedder: name, err: err}
}

// stopHTTP stops taking connections and lets the requests in flight
// finish within timeout; past it, their contexts are canceled and their
// connections closed. It returns Serve's error, nil for a normal stop.
func stopHTTP(srv *http.Server, errc <-chan error, cancelReqs func(), timeout time.Duration) error {
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := srv.Shutdown(sctx)
	cancel()
	if err != nil {
		cancelReqs()
		srv.Close() // the timeout passed: drop what is left
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}

// abandonOpen stops serving while the store is still opening. If the open
// finishes within the timeout the store is closed cleanly; if not, serve
// returns without it and the process exits: nothing was acknowledged
// through it, and an open cut short is recovered like a crash (the log is
// the source of truth, the index is re-read from it).
func abandonOpen(s *server, srv *http.Server, errc chan error, cancelReqs func(), opened <-chan openResult, timeout time.Duration, logger *slog.Logger, serveErr error) error {
	s.state.Store(stateClosing)
	if serveErr != nil {
		errc <- serveErr
	}
	err := stopHTTP(srv, errc, cancelReqs, timeout)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case res := <-opened:
		if res.err != nil {
			return errors.Join(err, res.err)
		}
		return errors.Join(err, closeWithin(timeout, res.close))
	case <-t.C:
		logger.Warn("the store is still opening: exiting without it (the next start recovers it from the log)")
		return err
	}
}

// closeWithin runs close and waits for it at most timeout. Past it,
// errCloseTimeout: the process may exit while close runs; every
// acknowledged record is in the log already, and whatever the index had
// not flushed is re-indexed from the log on the next open.
func closeWithin(timeout time.Duration, close func() error) error {
	done := make(chan error, 1)
	go func() { done <- close() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errCloseTimeout
	}
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

// newLogger is the daemon's logger in --log-format.
func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// logRepairs logs what the open repaired: an index moved aside and
// rebuilt, index segments dropped and re-indexed from the log, and the
// background errors counted so far.
func logRepairs(logger *slog.Logger, m engine.Metrics) {
	if m.IndexRepaired != "" {
		logger.Warn("the index was corrupt: moved aside and rebuilt from the log", "moved_to", m.IndexRepaired)
	}
	for _, r := range m.Index.Repairs {
		logger.Warn("index repair", "repair", r.String())
	}
	if m.BackgroundErrors > 0 {
		logger.Warn("background errors while opening", "count", m.BackgroundErrors)
	}
}

// reloadKeysOnHUP reloads the keys file on SIGHUP; a file that does not
// load is logged and the keys in use stay. The returned func stops it.
func reloadKeysOnHUP(s *server, file string, logger *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				kr, err := loadKeys(file)
				if err != nil {
					logger.Error("SIGHUP: keys not reloaded, the previous ones stay", "err", err)
					continue
				}
				s.keys.Store(kr)
				logger.Info("SIGHUP: keys reloaded", "keys", len(kr.keys))
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// backgroundReporter is the store's OnBackgroundError: background errors
// have no caller, so they are logged when they happen and counted.
func backgroundReporter(s *server, logger *slog.Logger) func(error) {
	return func(err error) {
		s.prom.bgErrors.Inc()
		logger.Error("background error", "err", err)
	}
}
