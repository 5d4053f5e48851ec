package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/embedspec"
	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// Cluster mode (--cluster, docs/CLUSTER.md): appends go to the NATS
// JetStream stream through any node; reads and forgets are answered by
// the owner of the agent's partition, forwarded there by the node that
// received them, with the client's body and credential (the owner checks
// the credential again, so tenancy holds through forwarding).

// clusterConfig is the --cluster* flags.
type clusterConfig struct {
	nats       string
	node       string
	url        string
	partitions int
	replicas   int
	leaseTTL   time.Duration
	snapEvery  int
	snapIntvl  time.Duration
	cacheBytes int64
}

func (c clusterConfig) on() bool { return c.nats != "" }

// Defaults of the --cluster* flags.
const (
	defaultClusterPartitions = 16
	defaultClusterReplicas   = 3
	defaultClusterLeaseTTL   = 10 * time.Second
	defaultSnapshotEvery     = 50000
	defaultSnapshotInterval  = 10 * time.Minute
	// defaultClusterCache is the node's cache budget (--cluster-cache-bytes).
	defaultClusterCache = 1 << 30
	// minStoreCache is the least each cache of a partition store gets.
	minStoreCache = 1 << 20
	// defaultWait is how long a read with ?min_seq= waits by default.
	defaultWait = 2 * time.Second
	// forwardedHeader marks a request forwarded by another node: it is
	// answered here or refused, never forwarded again.
	forwardedHeader = "Lazymem-Forwarded"
	// notOwnerHeader marks a node's refusal of a forwarded request for a
	// partition it does not own (any more): the node that forwarded it
	// routes it again.
	notOwnerHeader = "Lazymem-Not-Owner"
	// maxReroutes bounds how many times a request is routed again after
	// its partition moved while it was being answered (a rebalance), or
	// the node it was forwarded to refused it; rerouteWait is the pause
	// before routing again after a refusal, so that the two nodes' views
	// (each a lease round old) can meet: a round is a quarter of the
	// lease TTL. (Three reroutes without a pause were spent in 9 ms
	// between two nodes that each saw the other as the owner, after a
	// lease lapsed under load: the client got 503.)
	maxReroutes = 8
	rerouteWait = 100 * time.Millisecond
)

func addClusterFlags(fs *flag.FlagSet, c *clusterConfig) {
	fs.StringVar(&c.nats, "cluster", "", "run as a node of a cluster: the NATS JetStream servers' `URLS`, comma-separated (docs/CLUSTER.md; default: a standalone daemon)")
	fs.StringVar(&c.node, "cluster-node", "", "this node's `ID` in the cluster, unique (required with --cluster)")
	fs.StringVar(&c.url, "cluster-url", "", "`URL` where the other nodes reach this one to forward requests (default http(s)://the listening address)")
	fs.IntVar(&c.partitions, "cluster-partitions", defaultClusterPartitions, "number of partitions agents are hashed into; fixed when the stream is created")
	fs.IntVar(&c.replicas, "cluster-replicas", defaultClusterReplicas, "replicas of the stream and the lease buckets (1 for a single NATS server)")
	fs.DurationVar(&c.leaseTTL, "cluster-lease-ttl", defaultClusterLeaseTTL, "how long a dead node's partitions wait before other nodes take them")
	fs.IntVar(&c.snapEvery, "cluster-snapshot-every", defaultSnapshotEvery, "upload a snapshot of a partition owned here every `N` messages applied, and purge the stream below it; negative: never by count")
	fs.DurationVar(&c.snapIntvl, "cluster-snapshot-interval", defaultSnapshotInterval, "also upload a partition's snapshot when this long has passed since the last and it changed; negative: never by time")
	fs.Int64Var(&c.cacheBytes, "cluster-cache-bytes", defaultClusterCache, "the node's cache budget in `BYTES`: each partition store's caches (embedding memory tier, embedding disk-cache blocks, log segments) get this divided by --cluster-partitions, so that the node stays within it even owning every partition")
}

// checkCluster validates the --cluster* flags.
func checkCluster(c clusterConfig) error {
	if !c.on() {
		return nil
	}
	switch {
	case c.node == "":
		return errors.New("--cluster-node is required with --cluster: give this node an id unique in the cluster")
	case c.partitions < 1 || c.partitions > cluster.MaxPartitions:
		return fmt.Errorf("--cluster-partitions %d: want 1..%d", c.partitions, cluster.MaxPartitions)
	case c.replicas < 1 || c.replicas > 5:
		return fmt.Errorf("--cluster-replicas %d: want 1..5", c.replicas)
	case c.leaseTTL < 100*time.Millisecond:
		return fmt.Errorf("--cluster-lease-ttl %v: want at least 100ms", c.leaseTTL)
	case c.snapEvery == 0:
		return errors.New("--cluster-snapshot-every 0: want a positive number of messages, or negative for never")
	case c.snapIntvl == 0:
		return errors.New("--cluster-snapshot-interval 0: want a positive duration, or negative for never")
	case c.cacheBytes <= 0:
		return fmt.Errorf("--cluster-cache-bytes %d: want a positive number of bytes", c.cacheBytes)
	}
	o := cluster.Options{NATS: c.nats, NodeID: c.node, URL: "http://x", Dir: "x", Partitions: c.partitions,
		Replicas: c.replicas, LeaseTTL: c.leaseTTL, OpenDB: func(string) (*engine.DB, error) { return nil, nil }}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return fmt.Errorf("--cluster flags: %w", err)
	}
	return nil
}

// openCluster opens the node of cfg: its partition stores use the
// daemon's embedder.
func openCluster(cfg config, url string, onBackground func(error), logger *slog.Logger) openResult {
	emb, err := embedspec.Open(cfg.embedder)
	if err != nil {
		return openResult{err: err}
	}
	name := "hash"
	if emb != nil {
		name = emb.Name()
	}
	if cfg.cluster.url != "" {
		url = cfg.cluster.url
	}
	n, err := cluster.Open(cluster.Options{NATS: cfg.cluster.nats, NodeID: cfg.cluster.node, URL: url, Dir: cfg.db,
		Partitions: cfg.cluster.partitions, Replicas: cfg.cluster.replicas, LeaseTTL: cfg.cluster.leaseTTL,
		SnapshotEvery: cfg.cluster.snapEvery, SnapshotInterval: cfg.cluster.snapIntvl, Logger: logger,
		OpenDB: func(dir string) (*engine.DB, error) {
			return engine.Open(dir, storeOptions(cfg.cluster, engine.Options{Embedder: emb, OnBackgroundError: onBackground, WorkingMemory: cfg.workingMemory()}))
		}})
	if err != nil {
		return openResult{err: err}
	}
	logger.Info("cluster node open", "node", cfg.cluster.node, "url", url, "partitions", cfg.cluster.partitions)
	return openResult{db: n.Validator(), node: n, embedder: name}
}

// storeOptions are the options of a partition store: o with its share of
// the node's cache budget, divided 2:1:2 among the embedding memory tier,
// the embedding disk cache's blocks and the log's segment cache (the
// engine's defaults, 64, 32 and 64 MiB, are in that ratio), each at
// least minStoreCache.
func storeOptions(c clusterConfig, o engine.Options) engine.Options {
	share := c.cacheBytes / int64(max(c.partitions, 1))
	o.CacheBytes = max(share*2/5, minStoreCache)
	o.DiskCacheBlockBytes = max(share/5, minStoreCache)
	o.Log.CacheBytes = max(share*2/5, minStoreCache)
	return o
}

// clusterRoutes are the operations a node serves in cluster mode; the
// others answer 501 (they act on one store: see docs/CLUSTER.md).
var clusterRoutes = map[string]bool{
	"live": true, "ready": true, "health": true, "appendRecords": true, "getRecord": true,
	"recall": true, "forget": true, "stats": true, "metrics": true, "openapi": true,
	"export": true, "backup": true, "mcp": true, "feedback": true, "consolidate": true, "core": true,
}

// clusterGate answers 501 to the routes cluster mode does not serve.
func (s *server) clusterGate(rt route, h http.HandlerFunc) http.HandlerFunc {
	if clusterRoutes[rt.op] {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cluster == nil {
			h(w, r)
			return
		}
		s.fail(w, r, http.StatusNotImplemented, apiError{Code: "not_in_cluster_mode",
			Message: fmt.Sprintf("%s %s is not served in cluster mode (docs/CLUSTER.md)", rt.method, rt.docPath())})
	}
}

// clusterAppend publishes recs (checked against the tenant already) and
// answers their ids and the stream sequence to wait for in reads
// (?min_seq=).
func (s *server) clusterAppend(w http.ResponseWriter, r *http.Request, recs []engine.Record, batch bool) {
	if tenantOf(r).limited() {
		s.fail(w, r, http.StatusNotImplemented, apiError{Code: "not_in_cluster_mode", Field: "records",
			Message: fmt.Sprintf("records: the key %q has a quota, and quotas are not enforced in cluster mode", tenantOf(r).name)})
		return
	}
	ids, seq, err := s.cluster.Append(r.Context(), recs, !batch, requestID(r))
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"ids": ids, "seq": seq})
}

// readWait reads ?min_seq= and ?wait=: the sequence the owner must have
// applied before answering, and how long it may wait for it.
func readWait(r *http.Request) (uint64, time.Duration, *apiError) {
	q := r.URL.Query()
	var seq uint64
	if v := q.Get("min_seq"); v != "" {
		var err error
		if seq, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, 0, &apiError{Code: "invalid", Field: "min_seq", Message: fmt.Sprintf("min_seq: %q is not a sequence (the seq an append answered)", wire.Truncate(v, 40))}
		}
	}
	wait := defaultWait
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return 0, 0, &apiError{Code: "invalid", Field: "wait", Message: fmt.Sprintf("wait: %q: want a duration up to 1m, like 2s", wire.Truncate(v, 40))}
		}
		wait = d
	}
	return seq, wait, nil
}

// withMinSeq is r asking ?min_seq= at least seq (its own when larger or
// not a number: readWait names it).
func withMinSeq(r *http.Request, seq uint64) *http.Request {
	if seq == 0 {
		return r
	}
	q := r.URL.Query()
	if v := q.Get("min_seq"); v != "" {
		if have, err := strconv.ParseUint(v, 10, 64); err != nil || have >= seq {
			return r
		}
	}
	q.Set("min_seq", strconv.FormatUint(seq, 10))
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	return r2
}

// owned is partition p's store when this node owns it, after waiting
// for ?min_seq= (at least the last sequence this node published to p),
// held open until the caller releases it (Release: the
// node gives the partition up only then). Otherwise it forwards the
// request (body is its body) to the owner and returns nil; it also
// returns nil after writing an error. A partition that moves while the
// request waits for it (this node gives it up, or the node it was
// forwarded to no longer owns it) is routed again, up to maxReroutes
// times, unless the request was forwarded here: then the forwarding node
// routes it again. A partition given up after the store was taken waits
// for the caller's Release before it closes: a request never finds its
// store closed.
func (s *server) owned(w http.ResponseWriter, r *http.Request, p int, body []byte) *cluster.Local {
	forwarded := r.Header.Get(forwardedHeader) != ""
	if !forwarded {
		// Read your node's writes: a client that appends, then recalls,
		// through one node finds what it appended without carrying the
		// append's seq (the wait is asked of the owner when forwarded).
		r = withMinSeq(r, s.cluster.Published(p))
	}
	seq, wait, e := readWait(r)
	if e != nil {
		s.fail(w, r, http.StatusBadRequest, *e)
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	for hop := 0; ; hop++ {
		url, local, err := s.cluster.Route(ctx, p)
		switch {
		case err != nil || !local && forwarded:
			// A forwarded request is answered here or refused: never a
			// second hop, so a stale view cannot loop.
			w.Header().Set("Retry-After", "1")
			if forwarded {
				w.Header().Set(notOwnerHeader, "1")
			}
			s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "not_owner",
				Message: fmt.Sprintf("partition %d has no owner reachable from node %s yet (a node left: its partitions move within --cluster-lease-ttl)", p, s.cluster.ID())})
			return nil
		case !local:
			if s.forward(w, r, url, body, hop < maxReroutes) {
				return nil
			}
			// The owner gave the partition up meanwhile, or this node's
			// view is behind: routed again after a pause (Route answers
			// 503 once the request's wait is over).
			select {
			case <-ctx.Done():
			case <-time.After(rerouteWait):
			}
			continue
		}
		l, err := s.cluster.Local(ctx, p, seq)
		if errors.Is(err, cluster.ErrNotOwner) && !forwarded && hop < maxReroutes {
			continue // given up while waiting: route again
		}
		if err != nil {
			s.clusterError(w, r, err, "")
			return nil
		}
		return l
	}
}

// forwardClient forwards requests to other nodes.
var forwardClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}

// forward sends r, with body, to the node at base and copies its answer.
// With reroute, a refusal because that node does not own the partition
// (notOwnerHeader) is not copied: forward returns false and the caller
// routes the request again.
func (s *server) forward(w http.ResponseWriter, r *http.Request, base string, body []byte, reroute bool) bool {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		s.error(w, r, err, "")
		return true
	}
	for _, h := range []string{"Authorization", "Content-Type", requestIDHeader, mcpVersionHeader, "Accept"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set(forwardedHeader, s.cluster.ID())
	resp, err := forwardClient.Do(req)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "not_owner", Message: "the partition's owner did not answer: " + err.Error()})
		return true
	}
	defer resp.Body.Close()
	if reroute && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(notOwnerHeader) != "" {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return false
	}
	for _, h := range []string{"Content-Type", "Retry-After", "X-Content-Type-Options"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	return true
}

// clusterError answers err: the cluster's own errors first, then as a
// standalone daemon would.
func (s *server) clusterError(w http.ResponseWriter, r *http.Request, err error, prefix string) {
	switch {
	case errors.Is(err, cluster.ErrNotCaughtUp), errors.Is(err, cluster.ErrNotOwner), errors.Is(err, cluster.ErrClosed):
		w.Header().Set("Retry-After", "1")
		if errors.Is(err, cluster.ErrNotOwner) && r.Header.Get(forwardedHeader) != "" {
			w.Header().Set(notOwnerHeader, "1") // the forwarding node routes it again
		}
		s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "not_caught_up", Message: err.Error()})
	case errors.Is(err, cluster.ErrBadID):
		s.fail(w, r, http.StatusNotFound, apiError{Code: "not_found", Message: err.Error()})
	default:
		s.error(w, r, err, prefix)
	}
}

// clusterRecall answers q from the owner of its agents' partition.
func (s *server) clusterRecall(w http.ResponseWriter, r *http.Request, body []byte, q engine.Query) {
	agents := q.Agents
	if q.Agent != "" {
		agents = append([]string{q.Agent}, agents...)
	}
	if len(agents) == 0 {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "query.agent", Message: "query.agent: missing: name the agent"})
		return
	}
	p := s.cluster.Partition(agents[0])
	for _, a := range agents[1:] {
		if s.cluster.Partition(a) != p {
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "query.agents",
				Message: fmt.Sprintf("query.agents: %q and %q are in different partitions: in cluster mode a recall searches one partition's agents", agents[0], a)})
			return
		}
	}
	l := s.owned(w, r, p, body)
	if l == nil {
		return
	}
	defer l.Release()
	var res *engine.Result
	var err error
	switch t := tenantOf(r); {
	case t.all:
		res, err = l.DB().Recall(r.Context(), q)
	case len(q.Agents) == 0 || len(q.Agents) == 1 && q.Agents[0] == q.Agent:
		res, err = l.DB().Agent(q.Agent, t.quota).Recall(r.Context(), q)
	default:
		if res, err = l.DB().Recall(r.Context(), q); err == nil {
			hideBM25(res)
		}
	}
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	for i := range res.Memories {
		publicRecord(l, &res.Memories[i].Record)
	}
	s.prom.observeRecall(&res.Stats)
	s.reply(w, http.StatusOK, wire.FromResult(res))
}

// publicRecord gives rec its public id and hides the metadata key that
// carries it.
func publicRecord(l *cluster.Local, rec *engine.Record) {
	if pub, ok := l.Public(rec.ID); ok {
		rec.ID = pub
	} else {
		rec.ID = 0
	}
	delete(rec.Meta, cluster.MetaID)
}

// clusterGet answers GET /v1/records/{id} from the owner of the id's
// partition.
func (s *server) clusterGet(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "id",
			Message: fmt.Sprintf("id: %q is not a record id (a positive integer)", wire.Truncate(raw, 40))})
		return
	}
	_, p := cluster.SplitID(id)
	notFound := func() { s.error(w, r, fmt.Errorf("%w: id %d", engine.ErrNotFound, id), "") }
	if p >= s.cluster.Partitions() {
		notFound()
		return
	}
	l := s.owned(w, r, p, nil)
	if l == nil {
		return
	}
	defer l.Release()
	loc, ok := l.LocalID(id)
	if !ok {
		notFound()
		return
	}
	rec, err := l.DB().Get(r.Context(), loc)
	t := tenantOf(r)
	if err == nil && !t.allows(rec.Agent) {
		notFound() // another tenant's record reads as an id never assigned
		return
	}
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	publicRecord(l, &rec)
	s.reply(w, http.StatusOK, wire.FromRecord(rec))
}

// clusterForget forgets what sel names (public ids) through the stream,
// from the owner of its partition: the owner catches up with the stream,
// resolves sel on its copy, publishes the forget and erases the records'
// messages from the stream.
func (s *server) clusterForget(w http.ResponseWriter, r *http.Request, body []byte, sel engine.Selector) {
	p := -1
	if sel.Agent != "" {
		// Ids of another partition cannot be the agent's: ignored, as
		// ids never assigned are (a forget that names none forgets
		// nothing).
		p = s.cluster.Partition(sel.Agent)
		ids := sel.IDs[:0:0]
		for _, id := range sel.IDs {
			if _, ip := cluster.SplitID(id); ip == p {
				ids = append(ids, id)
			}
		}
		if len(sel.IDs) > 0 && len(ids) == 0 {
			s.reply(w, http.StatusOK, map[string]any{"forgotten": 0, "ranges": [][2]uint64{}, "reindexed": 0})
			return
		}
		sel.IDs = ids
	}
	for _, id := range sel.IDs {
		_, ip := cluster.SplitID(id)
		if p == -1 {
			p = ip
		}
		if ip != p {
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "selector.ids",
				Message: fmt.Sprintf("selector.ids: %d is of another partition than the first id: in cluster mode a forget without an agent names one partition's records", id)})
			return
		}
	}
	if p < 0 || p >= s.cluster.Partitions() {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "selector.agent", Message: "selector.agent: name the agent (or ids of this cluster)"})
		return
	}
	l := s.owned(w, r, p, body)
	if l == nil {
		return
	}
	l.Release() // routed here: taken again once caught up
	// Every message of the partition before this point is applied first,
	// so the selector sees every acknowledged record.
	ctx, cancel := context.WithTimeout(r.Context(), s.lim.requestTimeout)
	defer cancel()
	for hop := 0; ; hop++ {
		caught, err := s.cluster.CatchUp(ctx, p)
		if errors.Is(err, cluster.ErrNotOwner) && r.Header.Get(forwardedHeader) == "" && hop < maxReroutes {
			// Given up while catching up (a rebalance): route again.
			if l = s.owned(w, r, p, body); l == nil {
				return
			}
			l.Release()
			continue
		}
		if err != nil {
			s.clusterError(w, r, err, "")
			return
		}
		l = caught // the partition as it is now (it may have been reopened)
		break
	}
	defer l.Release()
	pubs, err := s.forgetSelected(r.Context(), p, l, sel)
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	ranges := make([][2]uint64, 0, len(pubs))
	for _, pub := range pubs {
		ranges = append(ranges, [2]uint64{pub, pub})
	}
	s.reply(w, http.StatusOK, map[string]any{"forgotten": len(pubs), "ranges": ranges, "reindexed": 0})
}

// forgetSelected forgets what sel names (public ids of partition p) on
// l, the partition's store caught up with the stream: it resolves sel on
// it, publishes the forget and erases the records' messages from the
// stream. It returns the public ids forgotten.
func (s *server) forgetSelected(ctx context.Context, p int, l *cluster.Local, sel engine.Selector) ([]uint64, error) {
	locSel := sel
	if len(sel.IDs) > 0 {
		locSel.IDs = nil
		for _, id := range sel.IDs {
			if loc, ok := l.LocalID(id); ok {
				locSel.IDs = append(locSel.IDs, loc)
			}
		}
		if len(locSel.IDs) == 0 {
			return nil, nil
		}
	}
	locs, err := l.DB().Select(ctx, locSel)
	if err != nil {
		return nil, err
	}
	pubs := make([]uint64, 0, len(locs))
	for _, loc := range locs {
		if pub, ok := l.Public(loc); ok {
			pubs = append(pubs, pub)
		}
	}
	if len(pubs) > 0 {
		if _, err := s.cluster.Forget(ctx, p, pubs); err != nil {
			return nil, err
		}
	}
	return pubs, nil
}

// clusterStats answers the node's view of the cluster to an admin.
func (s *server) clusterStats(w http.ResponseWriter, r *http.Request) {
	if t := tenantOf(r); !t.all && !t.has(scopeAdmin) {
		s.fail(w, r, http.StatusNotImplemented, apiError{Code: "not_in_cluster_mode", Message: "per-agent stats are not served in cluster mode"})
		return
	}
	s.reply(w, http.StatusOK, s.cluster.Status())
}

// openEither opens the store of cfg, or its cluster node with --cluster
// (url: where this daemon listens, the node's default --cluster-url).
func openEither(cfg config, url string, onBackground func(error), logger *slog.Logger) openResult {
	if cfg.cluster.on() {
		return openCluster(cfg, url, onBackground, logger)
	}
	return openStore(cfg, onBackground)
}

// close closes what the open opened: the node (and its stores) or the
// store.
func (res openResult) close() error {
	if res.node != nil {
		return res.node.Close()
	}
	return res.db.Close()
}
