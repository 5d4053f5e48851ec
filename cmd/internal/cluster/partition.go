package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine"
	"github.com/nats-io/nats.go/jetstream"
)

// Message kinds, in the kindHeader of each stream message. Never change
// them: the stream holds them.
const (
	kindHeader   = "Lazymem-Kind"
	kindRecord   = "record"   // body: the record in the log's codec
	kindForget   = "forget"   // body: forgetBody
	kindFeedback = "feedback" // body: feedbackBody
	// kindPurge: snapshot and purge the partition through this message
	// (body: none); kindFiller: nothing to apply (body: zeros). Published
	// by a forget whose records were purged from the stream already
	// (publish.go, sweepPurged).
	kindPurge  = "purge"
	kindFiller = "filler"
)

// forgetBody is a forget message: the public ids to forget.
type forgetBody struct {
	IDs []uint64 `json:"ids"`
}

// feedbackBody is a feedback message: a judgement (+1 useful, -1 not) on
// records by public id, checked by the owner that published it.
type feedbackBody struct {
	IDs    []uint64 `json:"ids"`
	Signal int      `json:"signal"`
}

// Files of a partition store beside the engine's own.
const (
	idsFile     = "cluster.ids"     // 16-byte (public, local) pairs, in apply order
	appliedFile = "cluster.applied" // 8 bytes: the last applied sequence
)

// partition is one owned partition: its store, its id map, and the loop
// that opens the store (restoring a snapshot when needed) and applies
// its messages.
type partition struct {
	n   *Node
	p   int
	dir string
	// db, ids and idsOut are set by the loop before ready is closed.
	db  *engine.DB
	ids idMap
	// idsOut appends to idsFile.
	idsOut *os.File
	ready  chan struct{}
	// storeMu is held by closeStore (write) and by a copy of the store
	// (read, copyTo): a copy never has the store closed under it, and
	// sees db nil once it is closed.
	storeMu sync.RWMutex

	// applyMu is held by an apply round and by a snapshot's backup, so
	// that a snapshot holds exactly what was applied through its
	// sequence.
	applyMu sync.Mutex

	mu sync.Mutex
	// applied is the last sequence applied; advanced signals waiters.
	applied  uint64
	advanced chan struct{}
	// caughtUp: the last fetch found nothing pending (as the consumer's
	// server saw it: Status only, never a read's wait).
	caughtUp bool
	// resumed is applied when the partition was opened; restored the
	// sequence of the snapshot it was restored from (0: none); replayed
	// counts the messages applied since.
	resumed, restored, replayed uint64
	// Snapshots (snapshot.go): the newest one's sequence and when this
	// node took or found it, how many this node took, one in progress.
	snapSeq   uint64
	snapAt    time.Time
	sinceSnap uint64 // messages applied since the last snapshot's backup
	snapshots uint64
	snapping  bool
	// lastUpload is what this node's last snapshot of the partition
	// uploaded and referenced.
	lastUpload uploadStats
	// forgotSinceSnap: a forget was applied since the last snapshot
	// began. forgetSeq is the last forget's sequence (at open, the
	// applied sequence: forgets before it are unknown here);
	// compactedSeq and compactedExpired are the sequence applied and
	// the records expired when the last Compact before a snapshot began.
	forgotSinceSnap                           bool
	forgetSeq, compactedSeq, compactedExpired uint64
	// sweptSinceSnap: a purge message was applied since the last
	// snapshot began; sweepSeq is the last one's sequence. The next
	// snapshot is due at once and keeps no snapshot older than it, so
	// the stream is purged of the partition's messages through it (no
	// Compact: nothing of this store was forgotten).
	sweptSinceSnap bool
	sweepSeq       uint64
	snapWG         sync.WaitGroup

	// closing is closed when close begins: waiters (wait, Node.Local)
	// stop waiting on a partition this node gives up, and look again.
	closing   chan struct{}
	closeOnce sync.Once
	// holds counts the Locals handed out and not released (hold); once
	// shut is set (close began) no more are handed out, and close waits
	// for holds to drop to zero before it closes the store: a request
	// never has the store closed (or nil) under it.
	holdMu  sync.Mutex
	holdsCV *sync.Cond
	holds   int
	shut    bool

	cancel context.CancelFunc
	done   chan struct{}
}

// openPartition starts partition p's loop: it opens the store, then
// applies the stream from the sequence after the last one applied.
func (n *Node) openPartition(p int) *partition {
	pt := &partition{n: n, p: p, dir: filepath.Join(n.opts.Dir, fmt.Sprintf("p%d", p)),
		advanced: make(chan struct{}), ready: make(chan struct{}), closing: make(chan struct{}), done: make(chan struct{})}
	pt.holdsCV = sync.NewCond(&pt.holdMu)
	ctx, cancel := context.WithCancel(context.Background())
	pt.cancel = cancel
	go pt.run(ctx)
	return pt
}

// isReady reports whether the partition's store is open.
func (pt *partition) isReady() bool {
	select {
	case <-pt.ready:
		return true
	default:
		return false
	}
}

// open opens the partition's store and starts its consumer. A store
// that is missing, that applied less than the oldest snapshot kept, or
// less than the partition's purge floor (floor.go: the stream was purged
// of what it lacks), is replaced by the newest snapshot at or past the
// floor first. The floor is read again once the consumer exists: a
// purge since (a prune of the former owner across the take-over) makes
// the copy restore then. Records past their retention window leave it
// before it is served.
func (pt *partition) open(ctx context.Context) (jetstream.Consumer, error) {
	snaps, _, err := pt.n.snapshots(ctx, pt.p)
	if err != nil {
		return nil, err
	}
	floor, _, err := pt.n.purgeFloor(ctx, pt.p)
	if err != nil {
		return nil, err
	}
	if err := pt.openStore(); err != nil {
		return nil, err
	}
	pt.hook("listed")
	var restored uint64
	applied := pt.appliedSeq()
	restore := applied < floor || len(snaps) > 0 && applied < snaps[0].seq
	var cons jetstream.Consumer
	for try := 0; ; try++ {
		if restore {
			if err := pt.closeStore(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			if restored, err = pt.restore(ctx, snaps, floor); err != nil {
				return nil, err
			}
			t1 := time.Now()
			if err := pt.openStore(); err != nil {
				return nil, err
			}
			pt.n.mu.Lock()
			pt.n.restores[pt.p] = restored
			pt.n.mu.Unlock()
			pt.n.opts.Logger.Info("cluster: partition restored from a snapshot", "partition", pt.p, "seq", restored,
				"copy", applied, "floor", floor, "download", t1.Sub(t0).Round(time.Millisecond), "open", time.Since(t1).Round(time.Millisecond),
				"reindexed", pt.db.Metrics().Index.Rebuilt)
		}
		pt.hook("opened")
		cons, err = pt.consumer(ctx)
		if err != nil && !errors.Is(err, errGap) {
			// No consumer yet (a leader election): follow creates one,
			// and checks the floor then, as at every consumer start.
			pt.n.opts.Logger.Warn("cluster: partition consumer not created; retried", "partition", pt.p, "err", err)
			cons = nil
		}
		if cons != nil || !errors.Is(err, errGap) {
			break
		}
		if try > 0 {
			_ = pt.closeStore()
			return nil, err
		}
		// Purged since the snapshots were listed: list them again.
		pt.n.opts.Logger.Warn("cluster: the stream was purged past the copy while it opened; restoring a snapshot", "partition", pt.p, "err", err)
		if snaps, _, err = pt.n.snapshots(ctx, pt.p); err == nil {
			floor, _, err = pt.n.purgeFloor(ctx, pt.p)
		}
		if err != nil {
			_ = pt.closeStore()
			return nil, err
		}
		restore = true
	}
	if _, err := pt.db.ApplyRetention(ctx); err != nil {
		if cons != nil {
			pt.n.dropConsumer(pt.n.stream, cons)
		}
		_ = pt.closeStore()
		return nil, fmt.Errorf("lazymem: cluster: partition %d: retention: %w", pt.p, err)
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.resumed, pt.restored, pt.forgetSeq = pt.applied, restored, pt.applied
	pt.snapAt = time.Now()
	if len(snaps) > 0 {
		pt.snapSeq = snaps[len(snaps)-1].seq
	}
	return cons, nil
}

// consumer creates the partition's consumer from the message after the
// last applied one, then checks the purge floor (errGap: the stream was
// purged above the sequence applied, whatever the consumer would
// deliver skips messages).
func (pt *partition) consumer(ctx context.Context) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{FilterSubject: pt.n.subject(pt.p), DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute}
	applied := pt.appliedSeq()
	if applied > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, applied+1
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cons, err := pt.n.js.CreateConsumer(cctx, pt.n.opts.Stream, cfg)
	if err != nil {
		return nil, err
	}
	if err := pt.n.checkFloor(cctx, pt.p, applied); err != nil {
		pt.n.dropConsumer(pt.n.stream, cons)
		return nil, err
	}
	return cons, nil
}

// hook calls the test's opening hook, if any.
func (pt *partition) hook(at string) {
	if h := pt.n.opts.opening; h != nil {
		h(pt.p, at)
	}
}

// openStore opens the store in pt.dir and reads its bookkeeping.
func (pt *partition) openStore() error {
	db, err := pt.n.opts.OpenDB(pt.dir)
	if err != nil {
		return fmt.Errorf("lazymem: cluster: open partition %d: %w", pt.p, err)
	}
	pt.db = db
	pt.ids.reset()
	pt.mu.Lock()
	pt.applied = 0
	pt.mu.Unlock()
	if err := pt.load(); err != nil {
		_ = pt.closeStore()
		return err
	}
	return nil
}

// closeStore closes what openStore opened.
func (pt *partition) closeStore() error {
	pt.storeMu.Lock()
	defer pt.storeMu.Unlock()
	var errs []error
	if pt.idsOut != nil {
		errs = append(errs, pt.idsOut.Close())
		pt.idsOut = nil
	}
	if pt.db != nil {
		errs = append(errs, pt.db.Close())
		pt.db = nil
	}
	return errors.Join(errs...)
}

// load reads the id map and the applied sequence. The map file may lag
// the engine's log (it is written after the log): the log's tail past
// the map's last local id is read for the ids its records carry. The
// applied sequence is the larger of the file's and the highest id's.
func (pt *partition) load() error {
	b, err := os.ReadFile(filepath.Join(pt.dir, idsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lazymem: cluster: partition %d: %w", pt.p, err)
	}
	b = b[:len(b)/16*16] // a torn last pair is re-read from the log
	for i := 0; i < len(b); i += 16 {
		pub, loc := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if lp, ll := pt.ids.last(); pub <= lp || loc <= ll {
			return fmt.Errorf("lazymem: cluster: partition %d: %s out of order at byte %d", pt.p, idsFile, i)
		}
		pt.ids.add(pub, loc)
	}
	f, err := os.OpenFile(filepath.Join(pt.dir, idsFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("lazymem: cluster: partition %d: %w", pt.p, err)
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return err
	}
	pt.idsOut = f
	_, lastLoc := pt.ids.last()
	next := pt.db.Metrics().Log.Next
	ctx := context.Background()
	var tail []byte
	for loc := lastLoc + 1; loc < next; loc++ {
		r, err := pt.db.Get(ctx, loc)
		if errors.Is(err, engine.ErrNotFound) {
			continue // forgotten: nothing will ask for it
		}
		if err != nil {
			return fmt.Errorf("lazymem: cluster: partition %d: read local id %d: %w", pt.p, loc, err)
		}
		pub, err := recordID(r)
		if err != nil {
			return fmt.Errorf("lazymem: cluster: partition %d: local id %d: %w", pt.p, loc, err)
		}
		pt.ids.add(pub, loc)
		tail = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(tail, pub), loc)
	}
	if len(tail) > 0 {
		if _, err := pt.idsOut.Write(tail); err != nil {
			return err
		}
	}
	var applied uint64
	if b, err := os.ReadFile(filepath.Join(pt.dir, appliedFile)); err == nil && len(b) == 8 {
		applied = binary.LittleEndian.Uint64(b)
	}
	if pub, _ := pt.ids.last(); pub>>partitionBits > applied {
		applied = pub >> partitionBits
	}
	pt.mu.Lock()
	pt.applied = applied
	pt.mu.Unlock()
	return nil
}

// recordID is the public id a stored record carries in MetaID.
func recordID(r engine.Record) (uint64, error) {
	v := r.Meta[MetaID]
	if len(v) != 1 {
		return 0, fmt.Errorf("no %s", MetaID)
	}
	return strconv.ParseUint(v[0], 10, 64)
}

// run opens the store, then applies the partition's messages until ctx
// is done. A consumer that finds the stream purged past what the copy
// applied (errGap) ends the loop and gives the partition up: the lease
// round takes it back and opens it, restoring a snapshot.
func (pt *partition) run(ctx context.Context) {
	defer close(pt.done)
	backoff := 50 * time.Millisecond
	var cons jetstream.Consumer
	for {
		var err error
		if cons, err = pt.open(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		pt.n.opts.Logger.Warn("cluster: open partition; retrying", "partition", pt.p, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	close(pt.ready)
	backoff = 50 * time.Millisecond
	for ctx.Err() == nil {
		err := pt.follow(ctx, cons)
		cons = nil
		if ctx.Err() != nil {
			return
		}
		pt.mu.Lock()
		pt.caughtUp = false
		pt.mu.Unlock()
		if errors.Is(err, errGap) {
			pt.n.opts.Logger.Error("cluster: the stream was purged past the partition's copy; giving it up to reopen it from a snapshot", "partition", pt.p, "err", err)
			go pt.n.releaseIf(pt.p, pt)
			return
		}
		pt.n.opts.Logger.Warn("cluster: partition consumer stopped; restarting", "partition", pt.p, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// follow consumes the partition from the message after the last applied
// one, in stream order, until ctx is done or an error. The consumer is
// an ephemeral pull consumer without acks: each round's Fetch is a new
// pull request, so a round begun after a read arrived answers with what
// the stream held then (wait). A gap in its delivery sequence (a fetch
// lost with a connection) or any error ends it; run starts another
// from the last applied sequence. (JetStream's ordered consumer does
// this too, but creates a new consumer at every Fetch, and retries its
// creation with backoffs up to 10 s: partitions stalled for tens of
// seconds after a NATS server was killed.) cons is the consumer open
// created, or nil: follow creates one (consumer, which checks the purge
// floor: errGap ends the partition's loop, which gives it up).
func (pt *partition) follow(ctx context.Context, cons jetstream.Consumer) error {
	if cons == nil {
		var err error
		if cons, err = pt.consumer(ctx); err != nil {
			return err
		}
	}
	// Deleted at the end, else it expires.
	defer pt.n.dropConsumer(pt.n.stream, cons)
	var delivered uint64 // the consumer's delivery sequence
	// An R1 consumer whose NATS server died answers every round with
	// nothing, and no error: after stallCheck of empty rounds the stream's
	// leader is asked for the partition's last sequence, and a consumer
	// behind it ends (run starts another on a live server).
	progress := time.Now()
	idle := false // the last round delivered nothing
	streak := 0   // rounds in a row that delivered
	for ctx.Err() == nil {
		if lag := pt.n.opts.lagged; lag != nil && lag(ctx, pt.p) {
			// A test's consumer on a lagging replica: the round finds
			// nothing, though the stream's leader acknowledged more.
			pt.applyMu.Lock()
			err := pt.apply(ctx, nil)
			pt.applyMu.Unlock()
			if err != nil {
				return err
			}
			continue
		}
		// An idle partition's round waits for one message: a fetch
		// waits for its whole batch or its expiry, and with a batch of
		// 512 and 250 ms a lone append was applied 250 ms after its
		// acknowledgement (a read of it through the same node waited
		// that long). The round after a delivery asks a batch with a
		// short expiry. (A fetch without waiting answered nothing while
		// the consumer had messages pending.)
		want, expiry := pt.n.opts.FetchBatch, busyExpiry
		switch {
		case idle:
			want, expiry = 1, idleExpiry
		case streak >= loadedAfter:
			expiry = loadedExpiry
		}
		batch, err := cons.Fetch(want, jetstream.FetchMaxWait(expiry))
		if err != nil {
			return err
		}
		var msgs []jetstream.Msg
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			if md.Sequence.Consumer != delivered+1 {
				// Drain and start over from the applied sequence.
				for range batch.Messages() {
				}
				return fmt.Errorf("delivery gap: consumer sequence %d after %d", md.Sequence.Consumer, delivered)
			}
			delivered++
			msgs = append(msgs, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if !idle && len(msgs) == 0 {
			// Nothing within the short expiry: the next round waits,
			// and only a round that waited says the partition caught up.
			idle, streak = true, 0
			continue
		}
		if err := pt.checkRound(ctx, msgs); err != nil {
			return err
		}
		pt.applyMu.Lock()
		err = pt.apply(ctx, msgs)
		pt.applyMu.Unlock()
		if err != nil {
			return err
		}
		pt.startSnapshot(ctx)
		idle, streak = len(msgs) == 0, streak+1
		if idle {
			streak = 0
		}
		if len(msgs) > 0 {
			progress = time.Now()
		} else if time.Since(progress) > stallCheck {
			progress = time.Now()
			lctx, cancel := context.WithTimeout(ctx, time.Second)
			last, err := pt.n.lastSeq(lctx, pt.p)
			cancel()
			applied := pt.appliedSeq()
			if err == nil && last > applied {
				return fmt.Errorf("consumer stalled: the stream holds the partition through %d, applied %d", last, applied)
			}
			// A purge since the consumer started (a former owner's, sent
			// across the take-over) is seen here at the latest.
			lctx, cancel = context.WithTimeout(ctx, time.Second)
			err = pt.n.checkFloor(lctx, pt.p, applied)
			cancel()
			if errors.Is(err, errGap) {
				return err
			}
		}
	}
	return ctx.Err()
}

// checkRound checks the purge floor before a round's messages are
// applied, unless this node's lease on the partition is fresh
// (leaseFresh). A fresh lease has been this node's since the consumer
// started (a refresh is revision-checked: it fails once another node
// took the lease, and the partition is then given up), so no other node
// purged since (a purge needs its sender's lease fresh), and the purges
// before were seen at the consumer's start. Without it (a node paused
// past its lease, still applying until its next lease round; a refresh
// that timed out), another owner may have purged what this consumer
// skipped: the floor says so (errGap) before anything after the purge is
// applied, so the copy never keeps a hole. (Checked only at the
// consumer's start, such a copy applied the messages after the purge,
// and later resumed from past the hole.)
func (pt *partition) checkRound(ctx context.Context, msgs []jetstream.Msg) error {
	if len(msgs) == 0 {
		return nil
	}
	if _, fresh := pt.n.leaseFresh(pt.p); fresh {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return pt.n.checkFloor(cctx, pt.p, pt.appliedSeq())
}

// idleExpiry is how long a round of an idle partition's consumer waits
// for a message; busyExpiry how long the round after a delivery waits
// to fill its batch, loadedExpiry after loadedAfter deliveries in a
// row: under a steady load the rounds stay large (each is one durable
// engine batch; applied as they came, batches of a dozen appends halved
// a node's append rate). After two deliveries in a row, a client's
// append and read back met a 50 ms round whenever two clients' appends
// came close together (p99 56 ms).
const (
	idleExpiry, busyExpiry, loadedExpiry = 250 * time.Millisecond, 2 * time.Millisecond, 50 * time.Millisecond
	loadedAfter                          = 4
)

// stallCheck is how long a consumer may deliver nothing before follow
// checks it against the stream's leader.
const stallCheck = 2 * time.Second

// apply applies msgs in order: runs of records as one engine batch, a
// forget after the records before it. A message at or below the applied
// sequence is skipped (a replay after a restart).
func (pt *partition) apply(ctx context.Context, msgs []jetstream.Msg) error {
	var recs []engine.Record
	var pubs []uint64
	var last uint64
	pending := true
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		ids, err := pt.db.AppendBatch(ctx, recs)
		if err != nil && len(ids) != len(recs) {
			return fmt.Errorf("lazymem: cluster: partition %d: apply %d records: %w", pt.p, len(recs), err)
		}
		// ids with an error: stored, indexed at the next open.
		var out []byte
		for i, loc := range ids {
			pt.ids.add(pubs[i], loc)
			out = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(out, pubs[i]), loc)
		}
		if _, err := pt.idsOut.Write(out); err != nil {
			return err
		}
		recs, pubs = recs[:0], pubs[:0]
		return nil
	}
	var c codec.Record
	for _, m := range msgs {
		md, err := m.Metadata()
		if err != nil {
			return err
		}
		seq := md.Sequence.Stream
		pending = md.NumPending > 0
		if seq <= pt.appliedSeq() || seq <= last {
			continue
		}
		last = seq
		pt.mu.Lock()
		pt.replayed++
		pt.sinceSnap++
		pt.mu.Unlock()
		switch m.Headers().Get(kindHeader) {
		case kindRecord:
			if _, err := codec.DecodeRecord(m.Data(), &c); err != nil {
				return fmt.Errorf("lazymem: cluster: partition %d: seq %d: %w", pt.p, seq, err)
			}
			pub := PublicID(seq, pt.p)
			if lp, _ := pt.ids.last(); pub <= lp {
				continue // applied before a failed round: the map has it
			}
			r := fromCodec(&c, pub)
			if pt.db.Expired(&r) {
				continue // past its retention window: a replay never brings it back
			}
			recs = append(recs, r)
			pubs = append(pubs, pub)
		case kindForget:
			if err := flush(); err != nil {
				return err
			}
			var fb forgetBody
			if err := json.Unmarshal(m.Data(), &fb); err != nil {
				return fmt.Errorf("lazymem: cluster: partition %d: seq %d: forget: %w", pt.p, seq, err)
			}
			if err := pt.forgetLocal(ctx, fb.IDs); err != nil {
				return err
			}
			pt.mu.Lock()
			pt.forgetSeq, pt.forgotSinceSnap = seq, true
			pt.mu.Unlock()
		case kindFeedback:
			if err := flush(); err != nil {
				return err
			}
			var fb feedbackBody
			if err := json.Unmarshal(m.Data(), &fb); err != nil {
				return fmt.Errorf("lazymem: cluster: partition %d: seq %d: feedback: %w", pt.p, seq, err)
			}
			pt.feedbackLocal(ctx, seq, fb)
		case kindPurge:
			pt.mu.Lock()
			pt.sweepSeq, pt.sweptSinceSnap = seq, true
			pt.mu.Unlock()
		case kindFiller:
		default:
			// Not ours (a message published by another tool): skipped, as
			// it carries nothing a node could apply.
			pt.n.opts.Logger.Warn("cluster: message of unknown kind skipped", "partition", pt.p, "seq", seq)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	pt.advance(last, len(msgs) == 0 || !pending)
	return nil
}

// feedbackLocal counts a feedback message on the records of its public
// ids this store holds. The owner checked them before publishing; a
// record forgotten since (or left out as expired) is skipped, one at a
// time: a judgement never stops the apply loop.
func (pt *partition) feedbackLocal(ctx context.Context, seq uint64, fb feedbackBody) {
	for _, id := range fb.IDs {
		loc, ok := pt.ids.local(id)
		if !ok {
			continue
		}
		if err := pt.db.Feedback(ctx, 0, []uint64{loc}, fb.Signal); err != nil && !errors.Is(err, engine.ErrUnknown) {
			pt.n.opts.Logger.Warn("cluster: feedback not counted", "partition", pt.p, "seq", seq, "id", id, "err", err)
		}
	}
}

// forgetLocal forgets the records of the public ids this store holds.
func (pt *partition) forgetLocal(ctx context.Context, pubs []uint64) error {
	var locs []uint64
	for _, id := range pubs {
		if loc, ok := pt.ids.local(id); ok {
			locs = append(locs, loc)
		}
	}
	if len(locs) == 0 {
		return nil
	}
	if _, err := pt.db.Forget(ctx, engine.Selector{IDs: locs}); err != nil {
		return fmt.Errorf("lazymem: cluster: partition %d: forget: %w", pt.p, err)
	}
	return nil
}

func (pt *partition) appliedSeq() uint64 {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.applied
}

// advance records seq as applied (0: nothing new) at the end of a fetch
// round and wakes the waiters.
func (pt *partition) advance(seq uint64, caughtUp bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.caughtUp = caughtUp
	if seq > pt.applied {
		pt.applied = seq
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], seq)
		// Not synced: after a power loss the file may be behind, and the
		// replay of what follows is skipped or idempotent (load).
		if err := os.WriteFile(filepath.Join(pt.dir, appliedFile), b[:], 0o644); err != nil {
			pt.n.opts.Logger.Warn("cluster: write applied sequence", "partition", pt.p, "err", err)
		}
	}
	close(pt.advanced)
	pt.advanced = make(chan struct{})
}

// wait blocks until the partition is applied through seq (seq may be
// another partition's, or math.MaxUint64 for "everything"), or ctx is
// done (ErrNotCaughtUp), or the partition is closing (errMoved: nothing
// would advance it any more).
//
// When the partition has not applied seq yet, the stream's leader is
// asked for the partition's last sequence (lastSeq): the wait is for
// min(seq, that), every message of the partition acknowledged before
// the read. (It used to end at a fetch round begun after the read that
// found nothing pending; but the consumer is an R1 one on any replica,
// which can lag the leader while a NATS server fails: a read missed an
// acknowledged record.)
func (pt *partition) wait(ctx context.Context, seq uint64) error {
	if pt.appliedSeq() >= seq {
		return nil
	}
	last, err := pt.n.lastSeq(ctx, pt.p)
	if err != nil {
		return fmt.Errorf("%w: partition %d: %w", ErrNotCaughtUp, pt.p, err)
	}
	seq = min(seq, last)
	for {
		pt.mu.Lock()
		applied, ch := pt.applied, pt.advanced
		pt.mu.Unlock()
		if applied >= seq {
			return nil
		}
		select {
		case <-ch:
		case <-pt.closing:
			return errMoved
		case <-ctx.Done():
			return fmt.Errorf("%w: partition %d applied through %d, want %d", ErrNotCaughtUp, pt.p, applied, seq)
		}
	}
}

// stop hands out no more Locals, stops applying and snapshotting, and
// reports whether Locals still hold the store.
func (pt *partition) stop() (held bool) {
	pt.holdMu.Lock()
	pt.shut = true
	pt.holdMu.Unlock()
	pt.closeOnce.Do(func() { close(pt.closing) })
	pt.cancel()
	<-pt.done
	pt.snapWG.Wait()
	pt.holdMu.Lock()
	defer pt.holdMu.Unlock()
	return pt.holds > 0
}

// close stops the partition (stop), waits until every Local handed out
// is released, and closes the store.
func (pt *partition) close() error {
	pt.stop()
	pt.holdMu.Lock()
	for pt.holds > 0 {
		pt.holdsCV.Wait()
	}
	pt.holdMu.Unlock()
	if !pt.isReady() {
		return nil // the loop closed what it had opened
	}
	return pt.closeStore()
}

// hold counts one more user of the open store, unless close began
// (false): the store stays open until the matching unhold.
func (pt *partition) hold() bool {
	pt.holdMu.Lock()
	defer pt.holdMu.Unlock()
	if pt.shut {
		return false
	}
	pt.holds++
	return true
}

// unhold ends a hold; the last one lets a waiting close go on.
func (pt *partition) unhold() {
	pt.holdMu.Lock()
	pt.holds--
	if pt.holds == 0 {
		pt.holdsCV.Broadcast()
	}
	pt.holdMu.Unlock()
}

// fromCodec is the engine record of a record message, carrying its
// public id in MetaID.
func fromCodec(c *codec.Record, pub uint64) engine.Record {
	r := engine.Record{Time: time.Unix(0, c.Time).UTC(), Agent: c.Agent, Session: c.Session, Role: c.Role, Text: c.Text,
		Meta: make(map[string][]string, len(c.Meta)+1)}
	for _, f := range c.Meta {
		r.Meta[f.Key] = slices.Clone(f.Values)
	}
	r.Meta[MetaID] = []string{strconv.FormatUint(pub, 10)}
	return r
}
