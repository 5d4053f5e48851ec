package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
	"github.com/nats-io/nats.go/jetstream"
)

// TestStaleCopyPurgedWhileOpening: a node opens a partition from its
// own copy, applied through A, while the partition's owner takes
// snapshots and purges the stream above A (a prune of the former owner
// running across the take-over). The copy must not resume from A+1
// past the purged messages: it restores a snapshot that covers them and
// holds every record under its id. The purge lands at two points of the
// open: after the snapshots were listed ("listed": the list is older
// than the purge) and after the open chose to resume ("opened": before
// the consumer starts). Before the purge floor was recorded and checked,
// both lost the 20 records between A and the purge (the CI failure of
// TestClusterFailoverSnapshots: 216 records of one partition).
func TestStaleCopyPurgedWhileOpening(t *testing.T) {
	for _, at := range []string{"listed", "opened"} {
		t.Run("at="+at, func(t *testing.T) {
			t.Parallel() // a NATS server and nodes of its own
			staleCopyPurged(t, at)
		})
	}
}

func staleCopyPurged(t *testing.T, at string) {
	nc := clustertest.Start(t, 1)
	ctx := context.Background()
	// An agent whose partition's rendezvous owner among a and b is b: a
	// never takes it through its leases, the test opens it on a.
	agent := ""
	for i := 0; agent == ""; i++ {
		if a := fmt.Sprintf("ag%d", i); rendezvous(PartitionOf(a, 4), []string{"a", "b"}) == "b" {
			agent = a
		}
	}
	adir := t.TempDir()
	a := snapNode(t, nc, "a", adir, -1, nil)
	waitOwned(t, a)
	p := a.Partition(agent)
	want := map[string]uint64{}
	stale := appendN(t, a, agent, "early", 30, want)
	snapshotAt(t, a, p, stale) // the snapshot list's oldest: the stale copy's own sequence
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	defer b.Close()
	waitOwned(t, b)
	last := appendN(t, b, agent, "late", 20, want)
	s1 := snapshotAt(t, b, p, last) // kept beside the stale copy's: the stream is purged through it
	lateFirst, _ := SplitID(want["late 0"])
	if f, _ := streamFloor(t, b, p); f > lateFirst {
		t.Fatalf("the stream's first message of the partition is %d before the race, want at most %d", f, lateFirst)
	}

	// The prune that runs across the open: one more snapshot on b; its
	// prune keeps s1 and the new one and purges the stream through s1.
	// The hook (in a's partition loop) waits while the test does it.
	reached, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func(hp int, hat string) {
		if hp == p && hat == at {
			once.Do(func() {
				close(reached)
				<-resume
			})
		}
	}
	a, err := Open(Options{NATS: nc.URLs(), NodeID: "a", URL: "http://a", Dir: adir, Partitions: 4,
		Replicas: 1, LeaseTTL: time.Second, OpenDB: openDB, SnapshotEvery: -1, SnapshotInterval: -1, opening: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Not a's lease: the test's partition, closed below.
	pt := lingerOn(a, p)
	defer func() {
		if err := pt.close(); err != nil {
			t.Error(err)
		}
	}()
	defer once.Do(func() {}) // a failure below: the hook no longer waits
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case <-reached:
	case <-wctx.Done():
		t.Fatalf("partition %d's open on a never reached %q", p, at)
	}
	last = appendN(t, b, agent, "later", 20, want)
	snapshotAt(t, b, p, last)
	if f, _ := streamFloor(t, b, p); f <= s1 {
		t.Fatalf("the stream's first message of the partition is %d after the prune, want past %d", f, s1)
	}
	close(resume)
	select {
	case <-pt.ready:
	case <-wctx.Done():
		t.Fatalf("partition %d not open on a after 30s", p)
	}
	if err := pt.wait(wctx, last); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	locs, err := pt.db.Select(ctx, engine.Selector{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range locs {
		r, err := pt.db.Get(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		got[r.Text], _ = pt.ids.public(loc)
	}
	pt.mu.Lock()
	resumed, restored := pt.resumed, pt.restored
	pt.mu.Unlock()
	t.Logf("stale copy at %d, purge through %d; opened at %d, restored from %d; %d records, want %d", stale, s1, resumed, restored, len(got), len(want))
	sameRecords(t, "stale copy opened across a purge", got, want)
}

// TestPurgeFloorRaised: the purge floor only goes up, concurrent raises
// end at the highest, and the subject keeps one message.
func TestPurgeFloorRaised(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), -1, nil)
	defer a.Close()
	ctx := context.Background()
	floorIs := func(want uint64) {
		t.Helper()
		got, _, err := a.purgeFloor(ctx, 1)
		if err != nil || got != want {
			t.Fatalf("purge floor %d (%v), want %d", got, err, want)
		}
	}
	floorIs(0)
	if err := a.raiseFloor(ctx, 1, 10); err != nil {
		t.Fatal(err)
	}
	if err := a.raiseFloor(ctx, 1, 5); err != nil {
		t.Fatal(err)
	}
	floorIs(10)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() { errs <- a.raiseFloor(ctx, 1, uint64(20+i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	floorIs(27)
	other, _, _ := a.purgeFloor(ctx, 2)
	if other != 0 {
		t.Fatalf("partition 2's floor %d after raises of partition 1's", other)
	}
	if err := a.checkFloor(ctx, 1, 26); !errors.Is(err, errGap) {
		t.Fatalf("a copy at 26 under the floor 27: %v, want errGap", err)
	}
	if err := a.checkFloor(ctx, 1, 27); err != nil {
		t.Fatalf("a copy at the floor: %v", err)
	}
	info, err := a.snaps.Info(ctx, jetstream.WithSubjectFilter(a.floorSubject(1)))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[a.floorSubject(1)]; n != 1 {
		t.Fatalf("%d messages hold partition 1's floor, want 1", n)
	}
}

// TestPurgeUnderRunningPartition: a partition without a fresh lease
// whose consumer lags (its fetch rounds find nothing) while another
// owner purges the stream above what it applied (two owners at once: a
// lease lost under a pause) applies nothing past the purge once its
// consumer delivers again: its loop ends and it gives the partition up,
// its copy still at what it applied. (Before the floor was checked, the
// consumer delivered the messages after the purge and the copy kept
// the hole.)
func TestPurgeUnderRunningPartition(t *testing.T) {
	nc := clustertest.Start(t, 1)
	ctx := context.Background()
	agent := ""
	for i := 0; agent == ""; i++ {
		if a := fmt.Sprintf("ag%d", i); rendezvous(PartitionOf(a, 4), []string{"a", "b"}) == "b" {
			agent = a
		}
	}
	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	defer b.Close()
	waitOwned(t, b)
	p := b.Partition(agent)
	want := map[string]uint64{}
	applied := appendN(t, b, agent, "early", 20, want)
	snapshotAt(t, b, p, applied)

	var lagging atomic.Bool
	a, err := Open(Options{NATS: nc.URLs(), NodeID: "a", URL: "http://a", Dir: t.TempDir(), Partitions: 4,
		Replicas: 1, LeaseTTL: time.Second, OpenDB: openDB, SnapshotEvery: -1, SnapshotInterval: -1,
		lagged: func(ctx context.Context, lp int) bool {
			if lp != p || !lagging.Load() {
				return false
			}
			select { // as long as an empty fetch
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
			return true
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The test's partition on a: b owns it.
	pt := lingerOn(a, p)
	defer pt.close()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pt.wait(wctx, applied); err != nil {
		t.Fatal(err)
	}
	lagging.Store(true)
	for _, prefix := range []string{"late", "later"} {
		last := appendN(t, b, agent, prefix, 20, want)
		snapshotAt(t, b, p, last)
	}
	if floor, _, err := b.purgeFloor(ctx, p); err != nil || floor <= applied {
		t.Fatalf("purge floor %d (%v), want past a's %d", floor, err, applied)
	}
	lagging.Store(false) // its consumer delivers what the purge left
	select {
	case <-pt.done:
	case <-wctx.Done():
		t.Fatalf("a's partition still runs 30 s after a purge past what it applied (%d): applied %d", applied, pt.appliedSeq())
	}
	if got := pt.appliedSeq(); got != applied {
		t.Fatalf("a's partition applied %d after the purge; it had applied %d", got, applied)
	}
}

// lingerOn opens partition p on n without its lease, listed as lingering
// so that n's lease rounds neither release it nor sweep its copy (another
// node owns the partition). The caller closes it.
func lingerOn(n *Node, p int) *partition {
	n.mu.Lock()
	defer n.mu.Unlock()
	pt := n.openPartition(p)
	n.lingering[p] = pt
	return pt
}
