package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func leaseKey(p int) string { return "part." + strconv.Itoa(p) }

// leaseLoop heartbeats the node and takes, keeps or gives up leases
// every quarter of the lease TTL, and at once when a lease is given up
// or a node joins or leaves (watch), until Close.
func (n *Node) leaseLoop() {
	defer close(n.done)
	tick := time.NewTicker(n.opts.LeaseTTL / 4)
	defer tick.Stop()
	kick := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		n.watch(ctx, kick)
	}()
	defer func() {
		cancel()
		<-watched
	}()
	for {
		n.leaseRound()
		select {
		case <-n.stop:
			return
		case <-tick.C:
		case <-kick:
		}
	}
}

// watch wakes the lease loop (kick) when a lease is deleted (given up
// by a rebalance or a closing node) or a node joins or leaves: the
// partition's next owner takes it then, not at its next tick. (At its
// next tick, a quarter of the TTL later, a daemon joining a cluster left
// a partition without an owner for 2.3 s, and reads failed with 503
// meanwhile.) A watch that fails is started again after a second; the
// ticks go on regardless.
func (n *Node) watch(ctx context.Context, kick chan<- struct{}) {
	wake := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		n.watchOnce(ctx, wake)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// watchOnce is one watch of both buckets, until ctx is done or a
// watcher ends.
func (n *Node) watchOnce(ctx context.Context, wake func()) {
	leases, err := n.leases.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return
	}
	defer leases.Stop()
	nodes, err := n.nodes.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return
	}
	defer nodes.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-leases.Updates():
			if !ok {
				return
			}
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				wake()
			}
		case e, ok := <-nodes.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue
			}
			// Heartbeats of known nodes are every node's every round:
			// only a node this one does not know yet, or one leaving.
			id, _ := strings.CutPrefix(e.Key(), "node.")
			n.mu.RLock()
			_, known := n.urls[id]
			n.mu.RUnlock()
			if e.Operation() != jetstream.KeyValuePut || !known {
				wake()
			}
		}
	}
}

// leaseRound is one heartbeat: register the node, read the live nodes
// and every lease, then for each partition whose rendezvous owner among
// the live nodes is this node take its free lease, refresh the leases
// this node holds, and give up those another live node should hold.
// Errors (NATS unreachable, a leader election) are logged and the round
// is tried again at the next tick; leases not refreshed expire.
func (n *Node) leaseRound() {
	ctx, cancel := context.WithTimeout(context.Background(), n.opts.LeaseTTL/2)
	defer cancel()
	log := n.opts.Logger
	if _, err := n.nodes.Put(ctx, "node."+n.opts.NodeID, []byte(n.opts.URL)); err != nil {
		log.Warn("cluster: heartbeat failed", "err", err)
		return
	}
	keys, err := n.nodes.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		log.Warn("cluster: list nodes", "err", err)
		return
	}
	urls := map[string]string{}
	var live []string
	whole := true // every node and every lease read in this round
	for _, k := range keys {
		id, ok := strings.CutPrefix(k, "node.")
		if !ok {
			continue
		}
		e, err := n.nodes.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // expired meanwhile
		}
		if err != nil {
			// Not read (the round's deadline passed): a node live in the
			// last round stays live, since a list without it would move
			// partitions by a wrong rendezvous; the round goes on, so
			// that the leases held are refreshed, but sweeps nothing.
			// (Stopping the round here left leases unrefreshed at load
			// 27: they lapsed.)
			log.Warn("cluster: read node", "node", id, "err", err)
			whole = false
			n.mu.RLock()
			u, was := n.urls[id]
			n.mu.RUnlock()
			if !was {
				continue
			}
			urls[id] = u
			live = append(live, id)
			continue
		}
		urls[id] = string(e.Value())
		live = append(live, id)
	}
	if _, ok := urls[n.opts.NodeID]; !ok {
		// This node's heartbeat was just written: a list of keys read
		// from a replica that lags it still has this node live.
		urls[n.opts.NodeID] = n.opts.URL
		live = append(live, n.opts.NodeID)
	}
	slices.Sort(live)
	owners := make([]string, n.opts.Partitions)
	wants := make([]string, n.opts.Partitions)
	for p := range owners {
		want := rendezvous(p, live)
		wants[p] = want
		e, err := n.leases.Get(ctx, leaseKey(p))
		holder, rev := "", uint64(0)
		switch {
		case err == nil:
			holder, rev = string(e.Value()), e.Revision()
		case !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted):
			log.Warn("cluster: read lease", "partition", p, "err", err)
			owners[p] = n.ownerOf(p)
			whole = false
			continue
		}
		me := n.opts.NodeID
		switch {
		case holder == me && want != me && urls[want] != "":
			// Rebalance: the partition's rendezvous owner is live.
			n.release(p)
			_ = n.leases.Delete(ctx, leaseKey(p), jetstream.LastRevision(rev))
			holder = ""
		case holder == me:
			sent := time.Now()
			err := n.refresh(ctx, p, rev)
			switch {
			case err == nil:
				n.refreshed[p] = sent
				n.setLeaseSent(p, sent)
				if err := n.acquire(p); err != nil {
					log.Error("cluster: open partition", "partition", p, "err", err)
				}
			case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || time.Since(n.refreshed[p]) >= n.opts.LeaseTTL:
				log.Warn("cluster: lease lost", "partition", p, "err", err)
				n.release(p)
				holder = ""
			default:
				// The refresh failed without an answer (a timeout on a
				// loaded machine, a leader election): the lease, refreshed
				// less than a TTL ago, is still this node's. Releasing here
				// reopened partitions of a lone node under load and
				// answered its reads "not owned here" meanwhile.
				log.Warn("cluster: lease refresh failed; kept while it lasts", "partition", p, "err", err)
			}
		case holder == "" && want == me:
			sent := time.Now()
			if _, err := n.leases.Create(ctx, leaseKey(p), []byte(me)); err == nil {
				holder = me
				n.refreshed[p] = sent
				n.setLeaseSent(p, sent)
				if err := n.acquire(p); err != nil {
					log.Error("cluster: open partition", "partition", p, "err", err)
					_ = n.leases.Delete(ctx, leaseKey(p))
					holder = ""
				} else {
					log.Info("cluster: partition taken", "partition", p)
				}
			}
		default:
			if holder != me {
				n.release(p) // another node took it (this one was paused past the TTL)
			}
		}
		owners[p] = holder
	}
	n.mu.Lock()
	n.owners, n.urls = owners, urls
	n.mu.Unlock()
	if whole {
		n.sweep(owners, wants)
	}
}

// sweep removes the copies of partitions another node owns and this
// node will not get back (their holder is their rendezvous owner, another
// live node), from a round that read every node and lease (a lease read from the
// view of an earlier round, with a list of live nodes that lacked this
// node, removed the copy of a partition it was about to take back: it
// replayed the partition from 0 after a restart under load):
// a copy this node no longer applies would keep records forgotten since
// (a forget reaches a store only through its apply loop). The copies of
// the partitions this node will take back are kept, so that a restart
// after a crash resumes from them.
func (n *Node) sweep(owners, wants []string) {
	ents, err := os.ReadDir(n.opts.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), "p")
		p, err := strconv.Atoi(s)
		if !ok || err != nil || !e.IsDir() || p < 0 || p >= len(owners) || owners[p] == "" || owners[p] == n.opts.NodeID || owners[p] != wants[p] {
			continue
		}
		n.mu.RLock()
		_, open := n.parts[p]
		_, lingering := n.lingering[p]
		n.mu.RUnlock()
		if !open && !lingering {
			if err := os.RemoveAll(filepath.Join(n.opts.Dir, e.Name())); err != nil {
				n.opts.Logger.Warn("cluster: remove the copy of a partition owned elsewhere", "partition", p, "err", err)
			}
		}
	}
}

// refresh renews this node's lease on partition p, held at revision rev.
func (n *Node) refresh(ctx context.Context, p int, rev uint64) error {
	if f := n.opts.refreshFails; f != nil {
		if err := f(p); err != nil {
			return err
		}
	}
	_, err := n.leases.Update(ctx, leaseKey(p), []byte(n.opts.NodeID), rev)
	return err
}

// setLeaseSent records when the last refresh (or creation) of this
// node's lease on p that succeeded was sent (zero: not held), for
// leaseFresh.
func (n *Node) setLeaseSent(p int, sent time.Time) {
	n.mu.Lock()
	n.leaseSent[p] = sent
	n.mu.Unlock()
}

func (n *Node) ownerOf(p int) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.owners[p]
}

// acquire starts opening partition p if it is not open (the store opens
// in the partition's loop: a restore does not hold up the lease round).
func (n *Node) acquire(p int) error {
	n.partMu.Lock()
	defer n.partMu.Unlock()
	n.mu.RLock()
	_, ok := n.parts[p]
	n.mu.RUnlock()
	if ok {
		return nil
	}
	pt := n.openPartition(p)
	n.mu.Lock()
	n.parts[p] = pt
	n.mu.Unlock()
	return nil
}

// release closes partition p if it is open; a store that requests still
// hold (Local.Release) is closed in the background once they end. Its
// store stays on disk: a
// later lease resumes from it, unless sweep removes it once another node
// owns the partition for good. (Removing it here lost the copy of a
// partition whose lease refresh merely timed out on a loaded machine:
// the node took the lease back and replayed the partition from 0.)
func (n *Node) release(p int) {
	n.releaseIf(p, nil)
}

// releaseIf releases partition p (release) if pt is the partition open
// for it, or pt is nil.
func (n *Node) releaseIf(p int, want *partition) {
	n.partMu.Lock()
	defer n.partMu.Unlock()
	n.mu.Lock()
	pt, ok := n.parts[p]
	if ok && want != nil && pt != want {
		ok = false
	}
	if ok {
		delete(n.parts, p)
		n.leaseSent[p] = time.Time{} // no purge of p without the lease taken again
	}
	n.mu.Unlock()
	if !ok {
		return
	}
	if pt.stop() {
		// Requests still hold the store (a recall, a consolidation that
		// may wait on a model): it is closed when the last one ends, not
		// in the lease round, whose other leases would expire meanwhile.
		// A store taken back before then opens once this one closed (its
		// open is retried); sweep leaves its directory alone.
		n.mu.Lock()
		n.lingering[p] = pt
		n.mu.Unlock()
		n.opts.Logger.Info("cluster: partition released; its store closes when the requests holding it end", "partition", p)
		n.closers.Go(func() {
			if err := pt.close(); err != nil {
				n.opts.Logger.Warn("cluster: close partition", "partition", p, "err", err)
			}
			n.mu.Lock()
			if n.lingering[p] == pt {
				delete(n.lingering, p)
			}
			n.mu.Unlock()
		})
		return
	}
	if err := pt.close(); err != nil {
		n.opts.Logger.Warn("cluster: close partition", "partition", p, "err", err)
	}
	n.opts.Logger.Info("cluster: partition released", "partition", p)
}
