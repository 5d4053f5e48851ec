package cluster

import (
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
}

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
