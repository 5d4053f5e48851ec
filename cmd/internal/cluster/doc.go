// Package cluster is the node logic of lazymemd --cluster: a daemon that
// shares a NATS JetStream stream with other daemons instead of owning its
// store alone (docs/CLUSTER.md draws it).
//
// Writes are published to the stream LAZYMEM, one message per record on
// the subject lazymem.p.<partition> (a batch is one atomic batch
// publish), and acknowledged once JetStream has stored them. A record's
// public id is its stream sequence and partition (PublicID), the same on
// every node. Each node owns some partitions (leases in a JetStream KV
// bucket, rendezvous-hashed over the live nodes) and applies each owned
// partition's messages in order into a local engine.DB, one per
// partition, remembering the last applied sequence so that a restart
// neither skips nor repeats a message. Snapshots of the stores bound the
// replay, and the stream is purged below them; a copy resumes only when
// the stream still holds every message after it (the purge floor,
// floor.go), else it restores a snapshot. Forgets travel through the stream
// as messages naming public ids, and the forgotten records' messages are
// then securely deleted from the stream; a record whose message was
// purged below a snapshot already is swept instead (publish.go,
// sweepPurged): filler seals the stream's message block, and a purge
// message makes every partition snapshot and purge through it.
//
// The HTTP side (forwarding a request to the owner, read-your-writes
// waits, tenancy) lives in cmd/lazymemd; this package answers who owns a
// partition, where it is reached, and waits for a sequence to be applied.
package cluster
