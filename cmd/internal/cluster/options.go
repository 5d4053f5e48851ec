package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// Options configure a Node.
type Options struct {
	// NATS is the NATS servers' URLs, comma-separated: required.
	NATS string
	// NodeID names this node in the cluster: required, unique among the
	// nodes, letters, digits, '-' and '_' only (it is part of KV keys).
	NodeID string
	// URL is where the other nodes reach this node's HTTP API to forward
	// requests (http://host:port): required.
	URL string
	// Dir holds the node's partition stores (Dir/p<N>) and its validator
	// store (Dir/node): required.
	Dir string
	// Partitions is P, the number of partitions agents are hashed into;
	// fixed for the cluster's life (a node given another number than the
	// stream's is refused). Default 16, at most MaxPartitions.
	Partitions int
	// Replicas is the stream's and the KV buckets' replication factor.
	// Default 3; 1 for a single NATS server.
	Replicas int
	// LeaseTTL is how long a node's leases outlive its last heartbeat:
	// how long a dead node's partitions stay unowned. Default 10s.
	LeaseTTL time.Duration
	// Stream is the JetStream stream's name; its subjects are
	// Stream-in-lowercase.p.<partition>. Default "LAZYMEM".
	Stream string
	// OpenDB opens a partition's store (and the validator store) in dir;
	// required (lazymemd passes its embedder and options).
	OpenDB func(dir string) (*engine.DB, error)
	// Logger receives lease changes and apply errors. Default: discard.
	Logger *slog.Logger
	// FetchBatch is how many messages an apply round takes at most.
	// Default 512.
	FetchBatch int
	// SnapshotEvery: the owner of a partition uploads a snapshot of its
	// store (engine Backup and the applied sequence) to the snapshots
	// stream once this many of the partition's messages were applied
	// since the last one: a restore replays at most about this many.
	// Default 50000; negative: never by count.
	SnapshotEvery int
	// SnapshotInterval: the owner also uploads a snapshot when this long
	// has passed since the last one and something was applied since.
	// Default 10 minutes; negative: never by time. With SnapshotEvery
	// negative too, this node takes no snapshot (it still restores the
	// ones it finds). A forget applied always leads to a new snapshot
	// (the older ones are erased: they hold the forgotten records).
	SnapshotInterval time.Duration
	// SnapshotKeep is how many snapshots of a partition are kept; the
	// stream is purged of the partition's messages at and below the
	// oldest one kept. Default 2.
	SnapshotKeep int

	// snapshotNoIndex takes snapshots without the index (engine Backup):
	// the benchmarks' peer of the indexed ones.
	snapshotNoIndex bool
	// snapshotWhole uploads each snapshot whole, as a tar (the format
	// before incremental snapshots): the benchmarks' peer.
	snapshotWhole bool
	// lagged (tests) makes a partition's fetch round find nothing while
	// it returns true (it blocks as long as a fetch would): a consumer
	// on a replica that lags the stream's leader.
	lagged func(ctx context.Context, p int) bool
	// refreshFails (tests) makes the lease round's refresh of partition
	// p fail with the error it returns before it reaches NATS (nil: the
	// refresh is sent): a refresh that timed out on a loaded machine.
	refreshFails func(p int) error
	// opening (tests) is called as a partition opens: at "listed", once
	// it has read the snapshots and the purge floor and opened its copy;
	// at "opened", once it chose to resume or restore and before its
	// consumer starts. A test purges the stream there, as a prune of a
	// former owner running across the open would.
	opening func(p int, at string)
}

// EnsureDefaults fills the unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Partitions == 0 {
		o.Partitions = 16
	}
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.Stream == "" {
		o.Stream = "LAZYMEM"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FetchBatch == 0 {
		o.FetchBatch = 512
	}
	if o.SnapshotEvery == 0 {
		o.SnapshotEvery = 50000
	}
	if o.SnapshotInterval == 0 {
		o.SnapshotInterval = 10 * time.Minute
	}
	if o.SnapshotKeep == 0 {
		o.SnapshotKeep = 2
	}
}

// snapshots reports whether this node takes snapshots.
func (o *Options) snapshots() bool { return o.SnapshotEvery > 0 || o.SnapshotInterval > 0 }

// Validate checks the options; the error names the field.
func (o *Options) Validate() error {
	switch {
	case o.NATS == "":
		return fmt.Errorf("%w: NATS: missing: give the NATS servers' URLs", ErrOptions)
	case o.NodeID == "" || !nameOK(o.NodeID):
		return fmt.Errorf("%w: NodeID %q: want letters, digits, '-' and '_'", ErrOptions, o.NodeID)
	case o.URL == "":
		return fmt.Errorf("%w: URL: missing: where other nodes reach this one", ErrOptions)
	case o.Dir == "":
		return fmt.Errorf("%w: Dir: missing", ErrOptions)
	case o.Partitions < 1 || o.Partitions > MaxPartitions:
		return fmt.Errorf("%w: Partitions %d: want 1..%d", ErrOptions, o.Partitions, MaxPartitions)
	case o.Replicas < 1 || o.Replicas > 5:
		return fmt.Errorf("%w: Replicas %d: want 1..5", ErrOptions, o.Replicas)
	case o.LeaseTTL < 100*time.Millisecond:
		return fmt.Errorf("%w: LeaseTTL %v: want at least 100ms", ErrOptions, o.LeaseTTL)
	case !nameOK(o.Stream):
		return fmt.Errorf("%w: Stream %q: want letters, digits, '-' and '_'", ErrOptions, o.Stream)
	case o.OpenDB == nil:
		return fmt.Errorf("%w: OpenDB: missing", ErrOptions)
	case o.FetchBatch < 1:
		return fmt.Errorf("%w: FetchBatch %d: want a positive number", ErrOptions, o.FetchBatch)
	case o.SnapshotKeep < 1 || o.SnapshotKeep > 16:
		return fmt.Errorf("%w: SnapshotKeep %d: want 1..16", ErrOptions, o.SnapshotKeep)
	}
	return nil
}

func nameOK(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
