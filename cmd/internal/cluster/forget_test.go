package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetBytes is issue 9's byte scan in cluster mode. Node a holds
// every partition, then node b joins and takes its share, so a
// partition may have had two copies. After a forget through the stream
// and a Compact of every open store, no file of either node holds the
// forgotten text, and neither do the stream's message files on any of
// the three NATS servers. The servers' Raft logs are scanned too and
// what they hold is reported: docs/CLUSTER.md says when it goes.
func TestForgetBytes(t *testing.T) { forgetScan(t, 0) }

// forgetScan runs TestForgetBytes; with raftWait > 0 it then waits that
// long at most for the Raft logs to lose the forgotten text too, and
// fails if they do not.
func forgetScan(t *testing.T, raftWait time.Duration) {
	nc := clustertest.Start(t, 3)
	adir, bdir := t.TempDir(), t.TempDir()
	a := testNode(t, nc, "a", adir, 3)
	defer a.Close()
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "zqxjkvbw"
	var forget []uint64
	var last uint64
	agent := "tenant"
	for i := range 10 {
		text := fmt.Sprintf("ordinary note number %d", i)
		if i%3 == 0 {
			text = fmt.Sprintf("the passcode is %s%d", secret, i)
		}
		ids, seq, err := a.Append(ctx, []engine.Record{{Agent: agent, Text: text}, {Agent: agent + "-other", Text: "noise " + text[:5]}}, false, "")
		if err != nil {
			t.Fatal(err)
		}
		last = seq
		if i%3 == 0 {
			forget = append(forget, ids[0])
		}
	}
	if err := a.Wait(ctx, a.Partition(agent), last); err != nil {
		t.Fatal(err)
	}
	b := testNode(t, nc, "b", bdir, 3)
	defer b.Close()
	waitOwned(t, a, b)
	time.Sleep(2 * time.Second) // a lease round or two: the share moves to b
	waitOwned(t, a, b)
	owner := a
	if _, _, local := b.Owner(a.Partition(agent)); local {
		owner = b
	}
	if _, err := owner.Forget(ctx, owner.Partition(agent), forget); err != nil {
		t.Fatal(err)
	}
	got := recordsOf(t, owner, agent, 0)
	if len(got) != 10-len(forget) {
		t.Fatalf("%d records after the forget, want %d", len(got), 10-len(forget))
	}
	time.Sleep(time.Second) // the other node's sweep of copies it no longer owns
	for _, n := range []*Node{a, b} {
		n.mu.RLock()
		for _, pt := range n.parts {
			if !pt.isReady() {
				continue
			}
			if err := pt.db.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n.mu.RUnlock()
	}
	for _, dir := range []string{adir, bdir} {
		if where := storetest.Find(storetest.Images(t, dir), []byte(secret)); len(where) > 0 {
			t.Errorf("a node's files hold the forgotten text: %v", where)
		}
	}
	forgotAt := time.Now()
	for {
		nraft := 0
		for i := range 3 {
			var msgs, raft []string
			for _, f := range storetest.Find(storetest.Images(t, nc.StoreDir(i)), []byte(secret)) {
				if isRaft(f) {
					raft = append(raft, f)
				} else {
					msgs = append(msgs, f)
				}
			}
			if len(msgs) > 0 {
				t.Errorf("NATS server %d: the stream's files hold the forgotten text: %v", i, msgs)
			}
			if len(raft) > 0 {
				t.Logf("%v after the forget, NATS server %d: Raft log files holding the forgotten text: %v", time.Since(forgotAt).Round(time.Second), i, raft)
			}
			nraft += len(raft)
		}
		if nraft == 0 {
			t.Logf("%v after the forget, no file of any NATS server holds the forgotten text", time.Since(forgotAt).Round(time.Second))
			return
		}
		if time.Since(forgotAt) > raftWait {
			if raftWait > 0 {
				t.Errorf("the Raft logs still hold the forgotten text %v after the forget", raftWait)
			}
			return
		}
		time.Sleep(15 * time.Second)
	}
}

// isRaft reports whether a file of a NATS server's store is of a Raft
// group's log (under $SYS/_js_), not of a stream.
func isRaft(path string) bool { return strings.Contains(path, "/_js_/") }
