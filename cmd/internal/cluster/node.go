package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Node is one lazymemd of a cluster. Its methods are safe for concurrent
// use.
type Node struct {
	opts   Options
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	nodes  jetstream.KeyValue // node.<id> = URL, heartbeat
	leases jetstream.KeyValue // part.<p> = node id
	snaps  jetstream.Stream   // the partitions' snapshots (snapshot.go)
	// validator checks records before they are published
	// (engine.ValidateBatch): the partition stores may all be elsewhere.
	validator *engine.DB

	// published is, for each partition, the highest sequence this node
	// published to it (Published).
	published []atomic.Uint64

	// partMu serializes acquire and release (the lease loop's, a
	// test's).
	partMu sync.Mutex
	mu     sync.RWMutex
	parts  map[int]*partition // owned
	// lingering are the partitions released whose store requests still
	// hold; closers closes them when the requests end.
	lingering map[int]*partition
	closers   sync.WaitGroup
	// refreshed is, for each partition this node holds the lease of,
	// when its last successful refresh (or creation) was sent: the lease
	// lasts at least LeaseTTL from then (the lease loop's alone).
	refreshed []time.Time
	// leaseSent is refreshed for leaseFresh (under mu: a prune reads it).
	leaseSent []time.Time
	// restores is, for each partition this node restored from a
	// snapshot since it started, the last snapshot's sequence (Status).
	restores map[int]uint64
	owners   []string          // node id holding each partition's lease, "" none
	urls     map[string]string // node id -> URL of the live nodes
	closed   bool

	stop chan struct{}
	done chan struct{}
}

// Open connects to NATS, creates the stream and the KV buckets if they
// are missing, registers the node and starts taking leases. It returns
// once the node is registered; partitions are taken in the background
// (Owned, Status).
func Open(opts Options) (*Node, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	// A snapshot or a restore cut short by a crash left its directory.
	for _, pattern := range []string{".snapshot-p*", ".restore-p*"} {
		tmps, _ := filepath.Glob(filepath.Join(opts.Dir, pattern))
		for _, d := range tmps {
			_ = os.RemoveAll(d)
		}
	}
	validator, err := opts.OpenDB(filepath.Join(opts.Dir, "node"))
	if err != nil {
		return nil, fmt.Errorf("lazymem: cluster: open the validator store: %w", err)
	}
	// The connection's asynchronous errors (a watch's consumer gone with
	// its NATS server) go to the node's log, not to stderr as text.
	onError := nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		opts.Logger.Warn("cluster: nats", "subject", subject, "err", err)
	})
	nc, err := nats.Connect(opts.NATS, nats.Name("lazymemd "+opts.NodeID), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), onError)
	if err != nil {
		_ = validator.Close()
		return nil, fmt.Errorf("lazymem: cluster: connect to %s: %w", opts.NATS, err)
	}
	n := &Node{opts: opts, nc: nc, validator: validator, parts: map[int]*partition{}, lingering: map[int]*partition{}, restores: map[int]uint64{},
		owners: make([]string, opts.Partitions), refreshed: make([]time.Time, opts.Partitions), leaseSent: make([]time.Time, opts.Partitions), urls: map[string]string{}, published: make([]atomic.Uint64, opts.Partitions),
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := n.setup(); err != nil {
		nc.Close()
		_ = validator.Close()
		return nil, err
	}
	go n.leaseLoop()
	return n, nil
}

// setupStep bounds each JetStream call of setup.
const setupStep = 3 * time.Second

// setup creates or checks the stream and the buckets and registers the
// node. A JetStream that is electing leaders answers errors for a while:
// retried for a minute.
func (n *Node) setup() error {
	var err error
	deadline := time.Now().Add(time.Minute)
	for {
		if err = n.trySetup(); err == nil || errors.Is(err, ErrPartitions) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (n *Node) trySetup() error {
	// Each call has its own deadline: two nodes creating the buckets of
	// a new three-server JetStream at once both waited for the whole
	// attempt's deadline (10 s) on a bucket the other had just created,
	// twice, and took 21 s to open; a call that timed out is tried
	// again at the next attempt, which finds what it created.
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	step := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), setupStep)
		cancels = append(cancels, cancel)
		return ctx
	}
	var err error
	if n.js, err = jetstream.New(n.nc); err != nil {
		return err
	}
	want := strconv.Itoa(n.opts.Partitions)
	cfg := jetstream.StreamConfig{
		Name: n.opts.Stream, Subjects: []string{n.prefix() + ".>"}, Storage: jetstream.FileStorage,
		Replicas: n.opts.Replicas, AllowAtomicPublish: true,
		Duplicates: 2 * time.Minute,
		// The partition count is the stream's for life.
		Metadata: map[string]string{"lazymem-partitions": want},
	}
	n.stream, err = n.js.Stream(step(), n.opts.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		n.stream, err = n.js.CreateStream(step(), cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			n.stream, err = n.js.Stream(step(), n.opts.Stream)
		}
	}
	if err != nil {
		return fmt.Errorf("lazymem: cluster: stream %s: %w", n.opts.Stream, err)
	}
	if got := n.stream.CachedInfo().Config.Metadata["lazymem-partitions"]; got != want {
		return fmt.Errorf("%w: this node has %s, the stream %s was created with %q", ErrPartitions, want, n.opts.Stream, got)
	}
	if got := n.stream.CachedInfo().Config.Replicas; got != n.opts.Replicas {
		// The records' stream keeps the count it was created with (the
		// buckets and the snapshots' stream take this node's).
		n.opts.Logger.Warn("cluster: the records' stream keeps its replica count, not this node's --cluster-replicas",
			"stream", n.opts.Stream, "replicas", got, "flag", n.opts.Replicas,
			"change", "nats stream edit "+n.opts.Stream+" --replicas N")
	}
	kv := func(name string) (jetstream.KeyValue, error) {
		return n.js.CreateOrUpdateKeyValue(step(), jetstream.KeyValueConfig{Bucket: n.opts.Stream + "-" + name,
			TTL: n.opts.LeaseTTL, Replicas: n.opts.Replicas, History: 1, Storage: jetstream.FileStorage})
	}
	if n.nodes, err = kv("nodes"); err != nil {
		return fmt.Errorf("lazymem: cluster: KV nodes: %w", err)
	}
	if n.leases, err = kv("leases"); err != nil {
		return fmt.Errorf("lazymem: cluster: KV leases: %w", err)
	}
	if n.snaps, err = n.js.CreateOrUpdateStream(step(), jetstream.StreamConfig{Name: n.snapStream(),
		Subjects: []string{strings.ToLower(n.snapStream()) + ".>"}, Storage: jetstream.FileStorage,
		Replicas: n.opts.Replicas}); err != nil {
		return fmt.Errorf("lazymem: cluster: stream %s: %w", n.snapStream(), err)
	}
	_, err = n.nodes.Put(step(), "node."+n.opts.NodeID, []byte(n.opts.URL))
	return err
}

// prefix is the subjects' prefix: the stream's name in lowercase.
func (n *Node) prefix() string { return strings.ToLower(n.opts.Stream) }

// subject is partition p's subject.
func (n *Node) subject(p int) string { return n.prefix() + ".p." + strconv.Itoa(p) }

// Partitions is P.
func (n *Node) Partitions() int { return n.opts.Partitions }

// ID is the node's id.
func (n *Node) ID() string { return n.opts.NodeID }

// Partition is the partition of agent.
func (n *Node) Partition(agent string) int { return PartitionOf(agent, n.opts.Partitions) }

// Validator is the store that checks records before they are published;
// it holds no records.
func (n *Node) Validator() *engine.DB { return n.validator }

// Owner is the node holding partition p's lease and its URL; local
// reports that it is this node and the partition's store is open here.
func (n *Node) Owner(p int) (id, url string, local bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	id = n.owners[p]
	pt, open := n.parts[p]
	return id, n.urls[id], id == n.opts.NodeID && open && pt.isReady()
}

// Route is where partition p is served: this node (local) or the owner
// at url. When this node's view has no reachable owner (a lease moving,
// a node just joined), it reads the lease and the owner's URL from the
// KV buckets, and waits for an owner until ctx is done (ErrNotOwner).
func (n *Node) Route(ctx context.Context, p int) (url string, local bool, err error) {
	for {
		id, url, local := n.Owner(p)
		if local || id != "" && id != n.opts.NodeID && url != "" {
			return url, local, nil
		}
		if e, err := n.leases.Get(ctx, leaseKey(p)); err == nil {
			id = string(e.Value())
			if id != n.opts.NodeID {
				if e, err := n.nodes.Get(ctx, "node."+id); err == nil {
					return string(e.Value()), false, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", false, fmt.Errorf("%w: partition %d has no reachable owner yet", ErrNotOwner, p)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Local is partition p's store when this node owns it, after waiting
// until it has applied the stream through minSeq (0: no wait) or ctx is
// done (ErrNotCaughtUp). ErrNotOwner when the partition is not open here,
// also when this node gives it up during the wait (a rebalance, a lease
// lost): the waiter is told at once, not at its deadline. A partition
// released and taken back during the wait is waited on again.
//
// The store stays open until the Local is released (Release): a node
// giving the partition up waits for it, so call Release as soon as the
// request is answered, and before waiting on anything else.
func (n *Node) Local(ctx context.Context, p int, minSeq uint64) (*Local, error) {
	for {
		n.mu.RLock()
		pt, ok := n.parts[p]
		n.mu.RUnlock()
		if !ok {
			return nil, fmt.Errorf("%w: partition %d", ErrNotOwner, p)
		}
		select {
		case <-pt.closing:
			// Still listed while closing: the node is closing (release
			// unlists a partition before it closes it).
			return nil, fmt.Errorf("%w: partition %d is closing", ErrNotOwner, p)
		default:
		}
		select {
		case <-pt.ready:
		case <-pt.closing:
			continue
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: partition %d: its store is still opening", ErrNotCaughtUp, p)
		}
		if minSeq > 0 {
			err := pt.wait(ctx, minSeq)
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		if !pt.hold() {
			continue // closing since: unlisted, or the node is closing
		}
		return &Local{pt: pt, db: pt.db}, nil
	}
}

// Wait waits as Local does, and releases the store at once: for a caller
// that only needs partition p applied through minSeq.
func (n *Node) Wait(ctx context.Context, p int, minSeq uint64) error {
	l, err := n.Local(ctx, p, minSeq)
	if err == nil {
		l.Release()
	}
	return err
}

// Local is an owned partition's store with the id translations, held
// open until Release.
type Local struct {
	pt       *partition
	db       *engine.DB
	released atomic.Bool
}

// DB is the partition's store, open until Release. Its ids are local:
// translate with Public and LocalID.
func (l *Local) DB() *engine.DB { return l.db }

// Release lets the node close the store once it gives the partition up;
// the Local must not be used after. Calling it again does nothing.
func (l *Local) Release() {
	if l != nil && l.released.CompareAndSwap(false, true) {
		l.pt.unhold()
	}
}

// Public is the public id of local id loc (false: unknown).
func (l *Local) Public(loc uint64) (uint64, bool) { return l.pt.ids.public(loc) }

// LocalID is the local id of public id pub (false: not applied here).
func (l *Local) LocalID(pub uint64) (uint64, bool) { return l.pt.ids.local(pub) }

// Applied is the last sequence applied.
func (l *Local) Applied() uint64 { return l.pt.appliedSeq() }

// Status is what a node owns and how far it has applied each partition.
type Status struct {
	Node       string   `json:"node"`
	Partitions int      `json:"partitions"`
	Owners     []string `json:"owners"`
	// The maps are keyed by the owned partitions' numbers.
	Applied  map[string]uint64 `json:"applied"`   // last sequence applied
	CaughtUp map[string]bool   `json:"caught_up"` // the last fetch found nothing pending
	// Resumed is the applied sequence the partition's store had when
	// this node opened it (0: a new store, replayed from the stream).
	Resumed map[string]uint64 `json:"resumed"`
	// Records is how many records the partition's store was given
	// (forgotten ones included): a replay that applied a message twice
	// would show here.
	Records map[string]uint64 `json:"records"`
	// Restored is the sequence of the snapshot the partition's store
	// was restored from when this node opened it (absent: none).
	Restored map[string]uint64 `json:"restored"`
	// Replayed is how many messages this node applied from the stream
	// since it opened the partition (records left out as expired
	// included).
	Replayed map[string]uint64 `json:"replayed"`
	// Restores is, for each partition this node restored from a snapshot
	// since it started (owned now or not), the last snapshot's sequence:
	// a partition given up and reopened from the restored copy shows it
	// here, and in Resumed, not in Restored.
	Restores map[string]uint64 `json:"restores"`
	// Snapshot is the sequence of the partition's newest snapshot known
	// here, and Snapshots how many this node uploaded since it opened
	// the partition.
	Snapshot  map[string]uint64 `json:"snapshot"`
	Snapshots map[string]uint64 `json:"snapshots"`
	// Opening lists the partitions owned whose store is not open yet
	// (being opened or restored).
	Opening []int `json:"opening,omitempty"`
}

// Status reports the node's view of the cluster.
func (n *Node) Status() Status {
	n.mu.RLock()
	defer n.mu.RUnlock()
	st := Status{Node: n.opts.NodeID, Partitions: n.opts.Partitions, Owners: append([]string(nil), n.owners...),
		Applied: map[string]uint64{}, CaughtUp: map[string]bool{}, Resumed: map[string]uint64{}, Records: map[string]uint64{},
		Restored: map[string]uint64{}, Replayed: map[string]uint64{}, Snapshot: map[string]uint64{}, Snapshots: map[string]uint64{},
		Restores: map[string]uint64{}}
	for p, seq := range n.restores {
		st.Restores[strconv.Itoa(p)] = seq
	}
	for p, pt := range n.parts {
		if !pt.isReady() {
			st.Opening = append(st.Opening, p)
			continue
		}
		if !pt.hold() {
			continue // closing (the node is closing)
		}
		k := strconv.Itoa(p)
		pt.mu.Lock()
		st.Applied[k], st.CaughtUp[k], st.Resumed[k] = pt.applied, pt.caughtUp, pt.resumed
		st.Replayed[k], st.Snapshot[k], st.Snapshots[k] = pt.replayed, pt.snapSeq, pt.snapshots
		if pt.restored > 0 {
			st.Restored[k] = pt.restored
		}
		pt.mu.Unlock()
		st.Records[k] = pt.db.Metrics().Log.Next - 1
		pt.unhold()
	}
	slices.Sort(st.Opening)
	return st
}

// Close stops taking leases, releases the ones held (their partitions
// move at once instead of after the TTL), and closes the partition
// stores and the connection.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	close(n.stop)
	<-n.done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var errs []error
	for p, pt := range n.parts {
		errs = append(errs, pt.close())
		_ = n.leases.Delete(ctx, leaseKey(p)) // best effort: else it expires
	}
	n.closers.Wait()
	_ = n.nodes.Delete(ctx, "node."+n.opts.NodeID)
	n.nc.Close()
	errs = append(errs, n.validator.Close())
	return errors.Join(errs...)
}

// CatchUp waits until partition p, owned here, has applied every message
// the stream holds for it now, and returns its store.
func (n *Node) CatchUp(ctx context.Context, p int) (*Local, error) {
	return n.Local(ctx, p, math.MaxUint64)
}

// Published is the highest sequence this node published to partition p
// (0: none since it started): a read that waits for it sees every
// append made through this node (read your node's writes, without the
// client carrying ?min_seq=).
func (n *Node) Published(p int) uint64 {
	if p < 0 || p >= len(n.published) {
		return 0
	}
	return n.published[p].Load()
}

// published records seq as published to partition p.
func (n *Node) publish(p int, seq uint64) {
	a := &n.published[p]
	for {
		old := a.Load()
		if seq <= old || a.CompareAndSwap(old, seq) {
			return
		}
	}
}

// Backup writes a copy of each partition this node owns and has open to
// dir/p<N> (dir is created; each p<N> must be new), once it has applied
// every message the stream held when Backup was called: the store with
// its index, the id map and the sequence applied, as a snapshot holds
// them.
// Placed in a node's directory, a copy is resumed from when it is not
// older than the partition's oldest snapshot kept, else replaced by the
// newest snapshot. It returns the sequence each copy holds.
func (n *Node) Backup(ctx context.Context, dir string) (map[int]uint64, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lazymem: cluster: backup: %w", err)
	}
	n.mu.RLock()
	var parts []int
	for p, pt := range n.parts {
		if pt.isReady() {
			parts = append(parts, p)
		}
	}
	n.mu.RUnlock()
	slices.Sort(parts)
	// Every partition catches up with the stream first (in parallel: a
	// fetch round each), so that each copy holds every record
	// acknowledged before the backup was asked for.
	locals := make([]*Local, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { locals[i], errs[i] = n.CatchUp(ctx, p) })
	}
	wg.Wait()
	defer func() {
		for _, l := range locals {
			l.Release() // each is released after its copy; these are the ones an error skipped
		}
	}()
	seqs := map[int]uint64{}
	for i, p := range parts {
		l, err := locals[i], errs[i]
		if errors.Is(err, ErrNotOwner) {
			continue // given up meanwhile
		}
		if err != nil {
			return seqs, err
		}
		seq, err := l.pt.copyTo(ctx, filepath.Join(dir, fmt.Sprintf("p%d", p)), false)
		l.Release()
		if errors.Is(err, ErrNotOwner) || errors.Is(err, engine.ErrClosed) {
			continue // given up meanwhile: its store closed
		}
		if err != nil {
			return seqs, fmt.Errorf("lazymem: cluster: backup partition %d: %w", p, err)
		}
		seqs[p] = seq
	}
	return seqs, nil
}
