package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
	"github.com/nats-io/nats.go/jetstream"
)

// snapNode opens a node of nc (one server) with snapshots every `every`
// messages (negative: none unless asked), opening its stores with open
// (nil: openDB).
func snapNode(t *testing.T, nc *clustertest.NATS, id, dir string, every int, open func(string) (*engine.DB, error)) *Node {
	t.Helper()
	if open == nil {
		open = openDB
	}
	n, err := Open(Options{NATS: nc.URLs(), NodeID: id, URL: "http://" + id, Dir: dir, Partitions: 4,
		Replicas: 1, LeaseTTL: time.Second, OpenDB: open, SnapshotEvery: every, SnapshotInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// part is partition p of n, open and ready.
func part(t *testing.T, n *Node, p int) *partition {
	t.Helper()
	n.mu.RLock()
	pt := n.parts[p]
	n.mu.RUnlock()
	if pt == nil || !pt.isReady() {
		t.Fatalf("partition %d is not open on %s", p, n.ID())
	}
	return pt
}

// waitSnapshot waits until n has a snapshot of p at seq or later and
// none in progress, and returns its sequence.
func waitSnapshot(t *testing.T, n *Node, p int, seq uint64) uint64 {
	t.Helper()
	pt := part(t, n, p)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pt.mu.Lock()
		got, busy := pt.snapSeq, pt.snapping
		pt.mu.Unlock()
		if got >= seq && !busy {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no snapshot of partition %d at %d or later after 30s: %+v", p, seq, n.Status())
	return 0
}

// snapshotAt waits until n has applied partition p up to seq, takes a
// snapshot of it and returns the snapshot's sequence.
func snapshotAt(t *testing.T, n *Node, p int, seq uint64) uint64 {
	t.Helper()
	ctx := context.Background()
	if err := n.Wait(ctx, p, seq); err != nil {
		t.Fatal(err)
	}
	s, err := part(t, n, p).snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// appendN appends n records of agent, one at a time, and returns their
// public ids by text and the last sequence.
func appendN(t *testing.T, n *Node, agent, prefix string, count int, want map[string]uint64) uint64 {
	t.Helper()
	var last uint64
	for i := range count {
		text := fmt.Sprintf("%s %d", prefix, i)
		ids, seq, err := n.Append(context.Background(), []engine.Record{{Agent: agent, Text: text}}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		want[text], last = ids[0], seq
	}
	return last
}

func sameRecords(t *testing.T, what string, got, want map[string]uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for text, id := range want {
		if got[text] != id {
			t.Fatalf("%s: %q has id %d, want %d", what, text, got[text], id)
		}
	}
}

// streamFloor is the sequence of the first message of partition p the
// stream holds (0: none) and how many it holds.
func streamFloor(t *testing.T, n *Node, p int) (first, count uint64) {
	t.Helper()
	ctx := context.Background()
	m, err := n.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(n.subject(p)))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	info, err := n.stream.Info(ctx, jetstream.WithSubjectFilter(n.subject(p)))
	if err != nil {
		t.Fatal(err)
	}
	return m.Sequence, info.State.Subjects[n.subject(p)]
}

// TestSnapshotRebuild: the owner snapshots its partition every 20
// messages and the stream is purged at and below the oldest snapshot
// kept; a wiped node restores the newest snapshot and replays only the
// messages after it, and holds every record under its id.
func TestSnapshotRebuild(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), 20, nil)
	waitOwned(t, a)
	want := map[string]uint64{}
	last := appendN(t, a, "ag", "note", 110, want)
	p := a.Partition("ag")
	if err := a.Wait(context.Background(), p, last); err != nil {
		t.Fatal(err)
	}
	// Snapshots are taken SnapshotEvery messages after the last one's
	// copy (later when one is still uploading, as under load): the last
	// one is within 20 of the end.
	newest := waitSnapshot(t, a, p, last-19)
	// A tail that stops before the next snapshot is due (20 messages
	// after the newest): no snapshot covers it. The newest may be 19
	// behind (rounds of a few messages, a snapshot still uploading): one
	// message at a time until there is room.
	for i := 0; newest+19 <= last; i++ {
		last = appendN(t, a, "ag", fmt.Sprintf("pad%d", i), 1, want)
		if err := a.Wait(context.Background(), p, last); err != nil {
			t.Fatal(err)
		}
		newest = waitSnapshot(t, a, p, last-19)
	}
	last = appendN(t, a, "ag", "tail", min(7, int(newest+19-last)), want)
	if err := a.Wait(context.Background(), p, last); err != nil {
		t.Fatal(err)
	}
	if got := waitSnapshot(t, a, p, 0); got != newest {
		t.Fatalf("a snapshot at %d covers the tail", got)
	}
	snaps, _, err := a.snapshots(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 || len(snaps) > 2 || snaps[len(snaps)-1].seq != newest {
		t.Fatalf("snapshots %+v, want at most 2, the newest at %d", snaps, newest)
	}
	first, count := streamFloor(t, a, p)
	t.Logf("snapshots kept %+v; the stream holds %d messages of the partition from seq %d", snaps, count, first)
	if first <= snaps[0].seq || count != last-snaps[0].seq {
		t.Fatalf("the stream holds %d messages of partition %d from seq %d; want the %d after the oldest snapshot kept (%d)",
			count, p, first, last-snaps[0].seq, snaps[0].seq)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := snapNode(t, nc, "b", filepath.Join(t.TempDir(), "wiped"), 20, nil)
	defer b.Close()
	waitOwned(t, b)
	sameRecords(t, "rebuilt", recordsOf(t, b, "ag", last), want)
	st := b.Status()
	k := strconv.Itoa(p)
	if st.Restored[k] != newest || st.Replayed[k] != last-newest {
		t.Fatalf("restored from %d, replayed %d messages; want %d and %d", st.Restored[k], st.Replayed[k], newest, last-newest)
	}
	// The snapshot carries the index: the restored store loaded it and
	// re-indexed nothing from its log.
	l, err := b.Local(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if m := l.DB().Metrics().Index; m.Rebuilt != 0 || m.Docs != uint64(len(want)) {
		t.Fatalf("the restored store re-indexed %d records and holds %d; want 0 and %d", m.Rebuilt, m.Docs, len(want))
	}
	t.Logf("%d records: restored the snapshot at %d, replayed %d messages", len(want), newest, st.Replayed[k])
}

// TestSnapshotStaleCopy: a node whose copy applied less than the oldest
// snapshot kept (the stream was purged of what it lacks) restores the
// newest snapshot instead of resuming from its copy.
func TestSnapshotStaleCopy(t *testing.T) {
	nc := clustertest.Start(t, 1)
	adir := t.TempDir()
	a := snapNode(t, nc, "a", adir, 10, nil)
	waitOwned(t, a)
	want := map[string]uint64{}
	last := appendN(t, a, "ag", "early", 30, want)
	p := a.Partition("ag")
	if err := a.Wait(context.Background(), p, last); err != nil {
		t.Fatal(err)
	}
	stale := last
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	waitOwned(t, b)
	for range 2 { // two snapshots past the stale copy: the oldest kept is too
		last = appendN(t, b, "ag", fmt.Sprint("late ", last), 20, want)
		if err := b.Wait(context.Background(), p, last); err != nil {
			t.Fatal(err)
		}
		if _, err := part(t, b, p).snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	snaps, _, err := b.snapshots(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if snaps[0].seq <= stale {
		t.Fatalf("oldest snapshot kept at %d, not past the stale copy's %d", snaps[0].seq, stale)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	a = snapNode(t, nc, "a", adir, 10, nil)
	defer a.Close()
	waitOwned(t, a)
	sameRecords(t, "stale copy reopened", recordsOf(t, a, "ag", last), want)
	if st := a.Status(); st.Restored[strconv.Itoa(p)] == 0 {
		t.Fatalf("the stale copy was resumed, not restored: %+v", st)
	}
}

// TestSnapshotForget: a snapshot taken before a forget never brings the
// forgotten records back: a node restoring it replays the forget after
// it; the next snapshot erases the older one, and then no file of the
// NATS server holds the forgotten text.
func TestSnapshotForget(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), -1, nil) // snapshots only when asked
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "qwpzmxvb"
	keep := map[string]uint64{}
	var forget []uint64
	var last uint64
	for i := range 12 {
		text := fmt.Sprintf("ordinary note %d", i)
		if i%4 == 1 {
			text = fmt.Sprintf("the key is %s%d", secret, i)
		}
		ids, seq, err := a.Append(ctx, []engine.Record{{Agent: "ag", Text: text}}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		last = seq
		if i%4 == 1 {
			forget = append(forget, ids[0])
		} else {
			keep[text] = ids[0]
		}
	}
	p := a.Partition("ag")
	s1 := snapshotAt(t, a, p, last)
	fseq, err := a.Forget(ctx, p, forget)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	bdir := t.TempDir()
	b := snapNode(t, nc, "b", bdir, -1, nil)
	waitOwned(t, b)
	sameRecords(t, "restored from the snapshot before the forget", recordsOf(t, b, "ag", fseq), keep)
	// The stream holds p's messages after s1: the forget, then the
	// sweep's filler and purge messages (its records were purged below
	// s1: Forget's sweepPurged). The restore replays exactly those.
	lastP, err := b.lastSeq(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(ctx, p, lastP); err != nil {
		t.Fatal(err)
	}
	first, after := streamFloor(t, b, p)
	if first != fseq {
		t.Fatalf("partition %d's first message after the snapshot at %d is %d, want the forget at %d", p, s1, first, fseq)
	}
	k := strconv.Itoa(p)
	if st := b.Status(); st.Restored[k] != s1 || st.Replayed[k] != after {
		t.Fatalf("restored from %d, replayed %d; want %d and %d", st.Restored[k], st.Replayed[k], s1, after)
	}
	s2, err := part(t, b, p).snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps, _, err := b.snapshots(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].seq != s2 || s2 < fseq {
		t.Fatalf("snapshots %+v after the forget at %d; want only the new one", snaps, fseq)
	}
	if where := storetest.Find(storetest.Images(t, nc.StoreDir(0)), []byte(secret)); len(where) > 0 {
		t.Errorf("the NATS server's files hold the forgotten text: %v", where)
	}
	if where := storetest.Find(storetest.Images(t, bdir), []byte(secret)); len(where) > 0 {
		t.Errorf("the restoring node's files hold the forgotten text: %v", where)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := snapNode(t, nc, "c", t.TempDir(), -1, nil)
	defer c.Close()
	waitOwned(t, c)
	sameRecords(t, "restored from the snapshot after the forget", recordsOf(t, c, "ag", fseq), keep)
	if st := c.Status(); st.Restored[k] != s2 || st.Replayed[k] != 0 {
		t.Fatalf("restored from %d, replayed %d; want %d and 0", st.Restored[k], st.Replayed[k], s2)
	}
}

// TestForgetReplacesSnapshot: with snapshots on, a forget applied makes
// the owner take a new snapshot and erase the older ones, without being
// asked; then no file of the NATS server holds the forgotten text.
func TestForgetReplacesSnapshot(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), 5, nil)
	defer a.Close()
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "vbnqzjxk"
	ids, _, err := a.Append(ctx, []engine.Record{{Agent: "ag", Text: "the code is " + secret}}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	last := appendN(t, a, "ag", "filler", 12, map[string]uint64{})
	p := a.Partition("ag")
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, a, p, 10)
	fseq, err := a.Forget(ctx, p, ids)
	if err != nil {
		t.Fatal(err)
	}
	// The record's message was purged below a snapshot already, so the
	// forget swept: filler and purge messages follow it, and the bytes
	// leave the stream's files with the snapshot the purge message makes
	// due. Wait for a snapshot at or after everything the stream holds
	// now (waiting for one at the forget's sequence alone raced the
	// sweep once apply rounds became short: the forget was applied and
	// snapshotted alone, and the check ran before the purge).
	l, err := a.CatchUp(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	waitSnapshot(t, a, p, max(fseq, part(t, a, p).appliedSeq()))
	snaps, _, err := a.snapshots(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if snaps[0].seq < fseq {
		t.Fatalf("snapshots %+v: one before the forget at %d is kept", snaps, fseq)
	}
	if where := storetest.Find(storetest.Images(t, nc.StoreDir(0)), []byte(secret)); len(where) > 0 {
		t.Errorf("the NATS server's files hold the forgotten text: %v", where)
	}
}

// TestRetentionThroughStream: with a retention window on the stores, a
// record past it is never applied from the stream, and a snapshot's
// records that expired since it was taken are gone before the restored
// store is served.
func TestRetentionThroughStream(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	open := func(dir string) (*engine.DB, error) {
		return engine.Open(dir, engine.Options{Clock: clock, Retention: engine.RetentionOptions{Window: time.Hour, Interval: -1}})
	}
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), -1, open)
	waitOwned(t, a)
	ctx := context.Background()
	put := func(n *Node, text string, age time.Duration) uint64 {
		t.Helper()
		ids, _, err := n.Append(ctx, []engine.Record{{Agent: "ag", Text: text, Time: clock().Add(-age)}}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	put(a, "expired on arrival", 2*time.Hour)
	mid := put(a, "fifty minutes old", 50*time.Minute)
	newID := put(a, "new", 0)
	last, _ := SplitID(newID)
	got := recordsOf(t, a, "ag", last)
	if len(got) != 2 || got["new"] != newID || got["fifty minutes old"] != mid {
		t.Fatalf("applied %v, want the two records inside the window", got)
	}
	p := a.Partition("ag")
	if _, err := part(t, a, p).snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	put(a, "fifty minutes old, after the snapshot", 50*time.Minute)
	new2 := put(a, "new, after the snapshot", 0)
	last, _ = SplitID(new2)
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	now.Add(int64(20 * time.Minute)) // the fifty-minute-old records are past the hour now

	b := snapNode(t, nc, "b", t.TempDir(), -1, open)
	defer b.Close()
	waitOwned(t, b)
	got = recordsOf(t, b, "ag", last)
	if len(got) != 2 || got["new"] != newID || got["new, after the snapshot"] != new2 {
		t.Fatalf("rebuilt from the snapshot and the stream: %v, want only the two records inside the window", got)
	}
	if st := b.Status(); st.Restored[strconv.Itoa(p)] == 0 {
		t.Fatalf("not restored from the snapshot: %+v", st)
	}
}

// TestSnapshotDamaged: a restore checks what it downloads. With the
// newest snapshot missing a chunk and an upload cut short (no end
// message) past it, a wiped node restores the older snapshot and
// replays from there: every record under its id.
func TestSnapshotDamaged(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), -1, nil)
	waitOwned(t, a)
	ctx := context.Background()
	want := map[string]uint64{}
	p := a.Partition("ag")
	var snaps []uint64
	var last uint64
	for i := range 2 {
		last = appendN(t, a, "ag", fmt.Sprint("round ", i), 10, want)
		s := snapshotAt(t, a, p, last)
		snaps = append(snaps, s)
	}
	last = appendN(t, a, "ag", "tail", 3, want)
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	n := snapNode(t, nc, "tool", t.TempDir(), -1, nil) // owns nothing of note: used for its streams
	newest := n.snapPrefix(p) + fmt.Sprint(snaps[1])
	m, err := n.snaps.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(newest))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.snaps.DeleteMsg(ctx, m.Sequence); err != nil {
		t.Fatal(err)
	}
	if _, err := n.js.Publish(ctx, n.snapPrefix(p)+"999999", []byte("a chunk of an upload cut short")); err != nil {
		t.Fatal(err)
	}
	complete, partial, err := n.snapshots(ctx, p)
	if err != nil || len(complete) != 2 || len(partial) != 1 {
		t.Fatalf("listed %v complete, %v partial (%v)", complete, partial, err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	defer b.Close()
	waitOwned(t, b)
	sameRecords(t, "restored past a damaged snapshot", recordsOf(t, b, "ag", last), want)
	if st := b.Status(); st.Restored[strconv.Itoa(p)] != snaps[0] {
		t.Fatalf("restored from %d, want the older snapshot %d", st.Restored[strconv.Itoa(p)], snaps[0])
	}
}

// appendBatches appends count records of agent in batches of 500 and
// returns the last sequence; texts are prefix and the record's number.
func appendBatches(t testing.TB, n *Node, agent, prefix string, from, count int, ids map[string]uint64) uint64 {
	t.Helper()
	var last uint64
	var batch []engine.Record
	for i := from; i < from+count; i++ {
		batch = append(batch, engine.Record{Agent: agent, Text: fmt.Sprintf("%s %d: the weather in city %d and the price of item %d", prefix, i, i%97, i*7%1013)})
		if len(batch) == 500 || i == from+count-1 {
			got, seq, err := n.Append(context.Background(), batch, false, "")
			if err != nil {
				t.Fatal(err)
			}
			if ids != nil {
				for j, r := range batch {
					ids[r.Text] = got[j]
				}
			}
			last, batch = seq, batch[:0]
		}
	}
	return last
}

// pieceSeqs is every message sequence on partition p's data subjects.
func pieceSeqs(t *testing.T, n *Node, p int) map[uint64]bool {
	t.Helper()
	ctx := context.Background()
	prefix := n.snapPrefix(p) + "d."
	info, err := n.snaps.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]bool{}
	for subj := range info.State.Subjects {
		seq := uint64(0)
		for {
			m, err := n.snaps.GetMsg(ctx, seq+1, jetstream.WithGetMsgSubject(subj))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out[m.Sequence] = true
			seq = m.Sequence
		}
	}
	return out
}

// TestSnapshotIncremental: a snapshot uploads only the pieces of the
// store's files that the snapshots kept lack (a partition grown by 1%
// uploads a fraction of its files), a wiped node restores it from the
// pieces of both uploads, and a forget's snapshot leaves no piece of the
// older ones that it does not reference itself: no file of the NATS
// server holds the forgotten text, though pieces are shared.
func TestSnapshotIncremental(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a := snapNode(t, nc, "a", t.TempDir(), -1, nil) // snapshots only when asked
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "zqxjvkwp"
	want := map[string]uint64{}
	ids, _, err := a.Append(ctx, []engine.Record{{Agent: "ag", Text: "the early secret is " + secret}}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	last := appendBatches(t, a, "ag", "note", 0, 6000, want)
	p := a.Partition("ag")
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	pt := part(t, a, p)
	if _, err := pt.snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	first := pt.lastUpload
	last = appendBatches(t, a, "ag", "later", 6000, 60, want) // 1%
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	s2, err := pt.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second := pt.lastUpload
	t.Logf("first snapshot uploaded %d bytes; after 1%% more records the second uploaded %d and referenced %d (manifest %d bytes)",
		first.Uploaded, second.Uploaded, second.Reused, second.Manifest)
	if second.Reused == 0 || second.Uploaded*4 > second.Uploaded+second.Reused {
		t.Fatalf("the second snapshot uploaded %d bytes and referenced %d: want under a quarter uploaded", second.Uploaded, second.Reused)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// A wiped node restores the second snapshot from both uploads' pieces.
	want["the early secret is "+secret] = ids[0]
	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	waitOwned(t, b)
	sameRecords(t, "restored from an incremental snapshot", recordsOf(t, b, "ag", last), want)
	if st := b.Status(); st.Restored[strconv.Itoa(p)] != s2 {
		t.Fatalf("restored from %d, want %d", st.Restored[strconv.Itoa(p)], s2)
	}

	// A forget: its snapshot erases both older ones and every piece it
	// does not reference itself.
	delete(want, "the early secret is "+secret)
	fseq, err := b.Forget(ctx, p, ids)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(ctx, p, fseq); err != nil {
		t.Fatal(err)
	}
	s3, err := part(t, b, p).snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps, _, err := b.snapshots(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].seq != s3 {
		t.Fatalf("snapshots %+v after the forget at %d; want only the new one", snaps, fseq)
	}
	m, err := b.readManifest(ctx, snaps[0].subject)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[uint64]bool{}
	for _, f := range m.Files {
		for _, r := range f.Pieces {
			refs[r.Seq] = true
		}
	}
	for seq := range pieceSeqs(t, b, p) {
		if !refs[seq] {
			t.Errorf("piece %d is in the snapshots stream, referenced by no snapshot kept", seq)
		}
	}
	if where := storetest.Find(storetest.Images(t, nc.StoreDir(0)), []byte(secret)); len(where) > 0 {
		t.Errorf("the NATS server's files hold the forgotten text: %v", where)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := snapNode(t, nc, "c", t.TempDir(), -1, nil)
	defer c.Close()
	waitOwned(t, c)
	sameRecords(t, "restored from the snapshot after the forget", recordsOf(t, c, "ag", fseq), want)
}

// TestSnapshotTarRestores: a snapshot in the format before incremental
// ones (the copy as one tar) still restores, and the restoring node's
// next snapshot, incremental, replaces it.
func TestSnapshotTarRestores(t *testing.T) {
	nc := clustertest.Start(t, 1)
	a, err := Open(Options{NATS: nc.URLs(), NodeID: "a", URL: "http://a", Dir: t.TempDir(), Partitions: 4,
		Replicas: 1, LeaseTTL: time.Second, OpenDB: openDB, SnapshotEvery: -1, SnapshotInterval: -1, snapshotWhole: true})
	if err != nil {
		t.Fatal(err)
	}
	waitOwned(t, a)
	ctx := context.Background()
	want := map[string]uint64{}
	last := appendN(t, a, "ag", "before the tar", 10, want)
	p := a.Partition("ag")
	s1 := snapshotAt(t, a, p, last)
	if snaps, _, err := a.snapshots(ctx, p); err != nil || len(snaps) != 1 || snaps[0].files {
		t.Fatalf("snapshots %+v (%v): want one tar", snaps, err)
	}
	last = appendN(t, a, "ag", "after the tar", 3, want)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := snapNode(t, nc, "b", t.TempDir(), -1, nil)
	waitOwned(t, b)
	sameRecords(t, "restored from a tar snapshot", recordsOf(t, b, "ag", last), want)
	if st := b.Status(); st.Restored[strconv.Itoa(p)] != s1 {
		t.Fatalf("restored from %d, want the tar at %d", st.Restored[strconv.Itoa(p)], s1)
	}
	var seqs []uint64
	for i := range 2 {
		last = appendN(t, b, "ag", fmt.Sprint("round ", i), 2, want)
		s := snapshotAt(t, b, p, last)
		seqs = append(seqs, s)
	}
	snaps, _, err := b.snapshots(ctx, p)
	if err != nil || len(snaps) != 2 || snaps[0].seq != seqs[0] || snaps[1].seq != seqs[1] || !snaps[0].files || !snaps[1].files {
		t.Fatalf("snapshots %+v (%v): want the two incremental ones at %v, the tar erased", snaps, err, seqs)
	}
	c := snapNode(t, nc, "c", t.TempDir(), -1, nil)
	defer c.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitOwned(t, c)
	sameRecords(t, "restored from the incremental snapshot after the tar", recordsOf(t, c, "ag", last), want)
}
