package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Append publishes recs, validated first (engine.ValidateBatch; single
// names the one record "record"), and returns their public ids and the
// stream sequence of the last one once JetStream has stored them all.
// One record is one message; several are one atomic batch publish, so
// that a batch is stored whole or not at all. msgID, when set, makes a
// single record's publish idempotent within the stream's duplicate
// window (two minutes): a client retrying with the same request id gets
// the first publish's id back.
func (n *Node) Append(ctx context.Context, recs []engine.Record, single bool, msgID string) ([]uint64, uint64, error) {
	if err := n.check(); err != nil {
		return nil, 0, err
	}
	for i := range recs {
		if _, ok := recs[i].Meta[MetaID]; ok {
			name := fmt.Sprintf("records[%d]", i)
			if single {
				name = "record"
			}
			return nil, 0, &engine.FieldError{Field: fmt.Sprintf("%s.meta[%q]", name, MetaID), Reason: ErrReserved, Detail: "kept for the cluster's record ids"}
		}
	}
	if err := n.validator.ValidateBatch(recs, single); err != nil {
		return nil, 0, err
	}
	msgs := make([]*nats.Msg, len(recs))
	parts := make([]int, len(recs))
	var buf []byte
	for i := range recs {
		parts[i] = n.Partition(recs[i].Agent)
		c := toCodec(&recs[i])
		start := len(buf)
		buf = codec.AppendRecord(buf, &c)
		msgs[i] = &nats.Msg{Subject: n.subject(parts[i]), Data: buf[start:len(buf):len(buf)], Header: nats.Header{kindHeader: []string{kindRecord}}}
	}
	if len(msgs) == 1 {
		var opts []jetstream.PublishOpt
		if msgID != "" {
			opts = append(opts, jetstream.WithMsgID(msgID))
		}
		ack, err := n.js.PublishMsg(ctx, msgs[0], opts...)
		if err != nil {
			return nil, 0, fmt.Errorf("lazymem: cluster: publish: %w", err)
		}
		n.publish(parts[0], ack.Sequence)
		return []uint64{PublicID(ack.Sequence, parts[0])}, ack.Sequence, nil
	}
	last, err := n.publishBatch(ctx, msgs)
	if err != nil {
		return nil, 0, err
	}
	first := last - uint64(len(msgs)) + 1
	ids := make([]uint64, len(msgs))
	for i := range ids {
		ids[i] = PublicID(first+uint64(i), parts[i])
		n.publish(parts[i], first+uint64(i))
	}
	return ids, last, nil
}

// batchAck is the acknowledgement of an atomic batch's commit.
type batchAck struct {
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
	Batch  string `json:"batch"`
	Count  int    `json:"count"`
	Error  *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// publishBatch publishes msgs as one atomic batch (JetStream stores them
// at consecutive sequences, or none) and returns the last one's sequence.
func (n *Node) publishBatch(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	id := nuid.Next()
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i == len(msgs)-1 {
			m.Header.Set("Nats-Batch-Commit", "1")
			break
		}
		if err := n.nc.PublishMsg(m); err != nil {
			return 0, fmt.Errorf("lazymem: cluster: publish batch: %w", err)
		}
	}
	reply, err := n.nc.RequestMsgWithContext(ctx, msgs[len(msgs)-1])
	if err != nil {
		return 0, fmt.Errorf("lazymem: cluster: publish batch: %w", err)
	}
	var ack batchAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return 0, fmt.Errorf("lazymem: cluster: publish batch: acknowledgement %q: %w", reply.Data, err)
	}
	if ack.Error != nil {
		return 0, fmt.Errorf("lazymem: cluster: publish batch: %s (%d)", ack.Error.Description, ack.Error.ErrCode)
	}
	if ack.Count != len(msgs) || ack.Seq < uint64(len(msgs)) {
		return 0, fmt.Errorf("lazymem: cluster: publish batch: %d of %d messages acknowledged", ack.Count, len(msgs))
	}
	return ack.Seq, nil
}

// Forget forgets the records of partition p with the given public ids
// on every node: it publishes a forget message (the apply on each node
// forgets them from its store), then securely deletes the records'
// messages from the stream, so that a replay can no longer find them,
// then waits until this node has applied the forget when it owns p. It
// returns the forget message's sequence.
func (n *Node) Forget(ctx context.Context, p int, ids []uint64) (uint64, error) {
	if err := n.check(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, ip := SplitID(id); ip != p {
			return 0, fmt.Errorf("%w: id %d is of partition %d, not %d", ErrBadID, id, ip, p)
		}
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	body, err := json.Marshal(forgetBody{IDs: slices.Compact(ids)})
	if err != nil {
		return 0, err
	}
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: n.subject(p), Data: body, Header: nats.Header{kindHeader: []string{kindForget}}})
	if err != nil {
		return 0, fmt.Errorf("lazymem: cluster: publish forget: %w", err)
	}
	var gone uint64 // the lowest sequence whose message was gone
	for _, id := range ids {
		seq, _ := SplitID(id)
		err := n.stream.SecureDeleteMsg(ctx, seq)
		if err != nil && !msgGone(err) {
			// The forget is in the stream: every replay forgets the record;
			// the message's bytes stay until a later purge.
			return ack.Sequence, fmt.Errorf("lazymem: cluster: erase seq %d from the stream: %w", seq, err)
		}
		if err != nil && gone == 0 {
			gone = seq // ids are sorted
		}
	}
	if gone > 0 {
		// Purged below a snapshot (at or below the purge floor, raised
		// before each purge), not erased by an earlier forget: sweep.
		// When the floor cannot be read, sweep too.
		if floor, _, err := n.purgeFloor(ctx, p); err != nil || gone <= floor {
			if err := n.sweepPurged(ctx, p); err != nil {
				return ack.Sequence, err
			}
		}
	}
	if err := n.Wait(ctx, p, ack.Sequence); err != nil && !errors.Is(err, ErrNotOwner) {
		return ack.Sequence, err
	}
	return ack.Sequence, nil
}

// streamBlockSize is the size of the message block files of the
// records' stream in nats-server 2.15 (a file store without byte
// limits, retention by limits: defaultLargeBlockSize); sweepPurged
// writes more than it to start a new block.
const streamBlockSize = 8 << 20

// sweepPurged clears the stream's files of the bytes of records of
// partition p purged below a snapshot before their forget: a purge is
// not a secure delete, and a purged message's bytes stay in the message
// block file that holds it until JetStream removes the block (once no
// message in it is left) or rewrites it (not the block being written;
// once more than half of its bytes are deleted, at its next sync).
// Other partitions' messages, and any message published after the
// forget, keep the block alive. So sweepPurged
//   - fills the block being written with filler messages on p's subject
//     (more than a block's worth; the apply skips them), so that
//     JetStream seals it and writes what follows in a new block;
//   - then publishes a purge message to every partition (one atomic
//     batch): each owner applying it takes a snapshot, keeps none
//     older, and purges the stream of its partition through it.
//
// Every message published before the purge messages is then purged,
// and the block holding the record's bytes holds only such messages:
// JetStream removes it with the last one (docs/CLUSTER.md, "Forget").
func (n *Node) sweepPurged(ctx context.Context, p int) error {
	size := min(int(n.nc.MaxPayload())-1024, 1<<20)
	if size <= 0 {
		size = int(n.nc.MaxPayload()) / 2
	}
	filler := make([]byte, size)
	for range streamBlockSize/size + 1 {
		m := &nats.Msg{Subject: n.subject(p), Data: filler, Header: nats.Header{kindHeader: []string{kindFiller}}}
		if _, err := n.js.PublishMsg(ctx, m); err != nil {
			return fmt.Errorf("lazymem: cluster: the forget is in the stream; fill the stream's block (a forgotten record's message was purged before: its bytes stay in the stream's files until the next purges): %w", err)
		}
	}
	msgs := make([]*nats.Msg, n.opts.Partitions)
	for q := range msgs {
		msgs[q] = &nats.Msg{Subject: n.subject(q), Header: nats.Header{kindHeader: []string{kindPurge}}}
	}
	var err error
	if len(msgs) == 1 {
		_, err = n.js.PublishMsg(ctx, msgs[0])
	} else {
		_, err = n.publishBatch(ctx, msgs)
	}
	if err != nil {
		return fmt.Errorf("lazymem: cluster: the forget is in the stream; publish the partitions' purge (a forgotten record's message was purged before: its bytes stay in the stream's files until the next purges): %w", err)
	}
	return nil
}

// Feedback publishes a judgement (signal +1 useful, -1 not) on records
// of partition p by public id, which the caller (the partition's owner)
// checked: every node applying the partition counts it in its store, so
// a copy and a rebuild from the stream agree. It waits until this node
// has applied it when it owns p, and returns the message's sequence.
func (n *Node) Feedback(ctx context.Context, p int, ids []uint64, signal int) (uint64, error) {
	if err := n.check(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, ip := SplitID(id); ip != p {
			return 0, fmt.Errorf("%w: id %d is of partition %d, not %d", ErrBadID, id, ip, p)
		}
	}
	body, err := json.Marshal(feedbackBody{IDs: ids, Signal: signal})
	if err != nil {
		return 0, err
	}
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: n.subject(p), Data: body, Header: nats.Header{kindHeader: []string{kindFeedback}}})
	if err != nil {
		return 0, fmt.Errorf("lazymem: cluster: publish feedback: %w", err)
	}
	n.publish(p, ack.Sequence)
	if err := n.Wait(ctx, p, ack.Sequence); err != nil && !errors.Is(err, ErrNotOwner) {
		return ack.Sequence, err
	}
	return ack.Sequence, nil
}

// msgGone reports whether a message delete failed because the message is
// not in the stream (deleted before, or purged below a snapshot).
// JetStream answers that with a delete failure kept only as text by the
// client: the store's error ("no message found": past the stream's
// last message, or a store left empty), or the API's "sequence N not
// found" (error code 10043: a message deleted or purged below the
// stream's last). The second was missed: a forget of a record purged
// below a snapshot failed after its forget message was published
// (TestForgetPurgedSharedBlock).
func msgGone(err error) bool {
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	if !errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "no message found") || strings.Contains(s, "err_code=10043")
}

// check fails once the node is closed.
func (n *Node) check() error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return ErrClosed
	}
	return nil
}

// toCodec is the log encoding of r, its metadata sorted by key as the
// codec requires.
func toCodec(r *engine.Record) codec.Record {
	c := codec.Record{Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text}
	if !r.Time.IsZero() {
		c.Time = r.Time.UnixNano()
	} else {
		c.Time = time.Now().UnixNano()
	}
	keys := make([]string, 0, len(r.Meta))
	for k := range r.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c.Meta = append(c.Meta, codec.Field{Key: k, Values: r.Meta[k]})
	}
	return c
}

// lastSeq is the sequence of partition p's last message in the stream
// (0: none), as the stream's leader has it: a message get that is not
// direct is answered by the leader, which holds every message
// acknowledged (a direct get may be answered by a lagging replica).
// Failures (a leader election while a NATS server is down) are retried
// until ctx is done.
func (n *Node) lastSeq(ctx context.Context, p int) (uint64, error) {
	backoff := 20 * time.Millisecond
	for {
		m, err := n.stream.GetLastMsgForSubject(ctx, n.subject(p))
		switch {
		case err == nil:
			return m.Sequence, nil
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return 0, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("the stream's last sequence of the partition: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}
