package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The purge floor (docs/CLUSTER.md, "The purge floor"). A partition's
// messages are purged from the stream only at and below a snapshot's
// sequence, and the owner first raises the partition's purge floor to
// that sequence: one message on the subject
// <prefix>-snapshots.p<p>.floor of the snapshots stream, its body the
// floor in decimal. The floor never goes down (the message is written
// with the subject's last sequence expected) and the older message is
// deleted after it. (It was first put in the records' stream, outside
// the partitions' subjects: it kept alive the message blocks the purges
// used to empty, and the bytes of records purged before their forget's
// secure delete stayed in them: TestForgetReplacesSnapshot's scan found
// a forgotten text in the stream's first block.)
//
// A copy that applied A can resume from A+1 only when the floor is at
// most A: messages of the partition above the floor are all in the
// stream. The floor is read once the copy's consumer exists, when a
// consumer has delivered nothing for stallCheck, and before each round
// of a partition whose lease is not fresh (checkRound): a purge that
// skips messages the consumer has yet to deliver raised the floor
// before it.
// The stream's first sequence of the partition's subject cannot tell
// this: the sequences are the stream's, shared by every partition, so a
// first message at A+k may follow A with nothing purged between.

// floorSubject is the subject of partition p's purge floor.
func (n *Node) floorSubject(p int) string { return n.snapPrefix(p) + "floor" }

// purgeFloor is partition p's purge floor (0: never purged) and the
// stream sequence of the message holding it, as the stream's leader has
// them (a message get that is not direct: the snapshots stream does not
// allow direct gets).
func (n *Node) purgeFloor(ctx context.Context, p int) (floor, at uint64, err error) {
	m, err := n.snaps.GetLastMsgForSubject(ctx, n.floorSubject(p))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("lazymem: cluster: partition %d: read the purge floor: %w", p, err)
	}
	floor, err = strconv.ParseUint(string(m.Data), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("lazymem: cluster: partition %d: purge floor at seq %d: %w", p, m.Sequence, err)
	}
	return floor, m.Sequence, nil
}

// raiseFloor raises partition p's purge floor to seq, unless it is there
// already. The write expects the floor's message read just before as the
// subject's last: a concurrent raise makes it fail, and it is read and
// tried again. Each round of concurrent raises has one winner, so one
// among N needs up to N tries: 5 failed under the race detector with the
// test's 8 (CI, 2026-12-07).
func (n *Node) raiseFloor(ctx context.Context, p int, seq uint64) error {
	var err error
	for range raiseTries {
		var cur, at uint64
		if cur, at, err = n.purgeFloor(ctx, p); err != nil {
			return err
		}
		if cur >= seq {
			return nil
		}
		msg := &nats.Msg{Subject: n.floorSubject(p), Data: strconv.AppendUint(nil, seq, 10)}
		if _, err = n.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(at)); err == nil {
			if at > 0 {
				_ = n.snaps.DeleteMsg(ctx, at) // else it stays, below the new one
			}
			return nil
		}
	}
	return fmt.Errorf("lazymem: cluster: partition %d: raise the purge floor to %d: %w", p, seq, err)
}

// raiseTries bounds raiseFloor's rounds.
const raiseTries = 64

// checkFloor fails with errGap when partition p's stream was purged
// above applied: messages after applied may be gone.
func (n *Node) checkFloor(ctx context.Context, p int, applied uint64) error {
	floor, _, err := n.purgeFloor(ctx, p)
	if err != nil {
		return err
	}
	if floor > applied {
		return fmt.Errorf("%w: partition %d: the stream was purged through %d, the copy applied %d", errGap, p, floor, applied)
	}
	return nil
}

// leaseFresh reports whether this node's lease on partition p was
// refreshed (or created) less than 3/4 of the lease TTL ago: no other
// node can hold it before a TTL has passed since, whatever the lease
// bucket's replicas answer. It returns how long the lease lasts at
// least.
func (n *Node) leaseFresh(p int) (time.Duration, bool) {
	n.mu.RLock()
	sent := n.leaseSent[p]
	n.mu.RUnlock()
	age := time.Since(sent)
	return n.opts.LeaseTTL - age, !sent.IsZero() && age < n.opts.LeaseTTL*3/4
}
