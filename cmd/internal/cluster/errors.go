package cluster

import "errors"

var (
	// ErrOptions is wrapped by Options.Validate errors; the message names
	// the field.
	ErrOptions = errors.New("lazymem: cluster: invalid options")
	// ErrNotOwner: this node does not own the partition (the lease is
	// elsewhere or nowhere yet); the caller forwards or retries.
	ErrNotOwner = errors.New("lazymem: cluster: partition not owned here")
	// ErrNotCaughtUp: the partition was not applied through the sequence
	// asked for before the deadline.
	ErrNotCaughtUp = errors.New("lazymem: cluster: not caught up")
	// ErrReserved: a record carries the metadata key the cluster keeps for
	// the public id (MetaID).
	ErrReserved = errors.New("lazymem: cluster: reserved metadata key")
	// ErrPartitions: the stream was created with another number of
	// partitions than this node was given.
	ErrPartitions = errors.New("lazymem: cluster: partition count differs from the cluster's")
	// ErrClosed: the node is closed.
	ErrClosed = errors.New("lazymem: cluster: closed")
	// ErrBadID: a public id whose partition is out of range.
	ErrBadID = errors.New("lazymem: cluster: not a record id of this cluster")

	// errMoved: the partition a caller waited on was closed meanwhile
	// (this node gave up its lease); Node.Local looks it up again.
	errMoved = errors.New("lazymem: cluster: the partition was released while waiting")
	// errGap: the stream was purged of a partition's messages above what
	// its copy applied (floor.go): the copy must not resume from it.
	errGap = errors.New("lazymem: cluster: the stream was purged past the copy")
)
