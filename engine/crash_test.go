package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/internal/faultfs"
	"github.com/lazymem/lazymem/segment"
)

// opFS calls hook after every filesystem operation that changes what a
// crash could leave behind (create, write, sync, close of a file opened for
// writing, rename, remove, link, mkdir): a crash image taken in the hook is
// the filesystem crashed between that operation and the next.
type opFS struct {
	vfs.FS
	hook func(op string)
}

type opFile struct {
	vfs.File
	fs   *opFS
	name string
}

func (f *opFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.fs.hook("write " + f.name)
	return n, err
}

func (f *opFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.fs.hook("writeat " + f.name)
	return n, err
}

func (f *opFile) Sync() error {
	err := f.File.Sync()
	f.fs.hook("sync " + f.name)
	return err
}

func (f *opFile) SyncData() error {
	err := f.File.SyncData()
	f.fs.hook("syncdata " + f.name)
	return err
}

func (f *opFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	f.fs.hook("syncto " + f.name)
	return full, err
}

func (f *opFile) Close() error {
	err := f.File.Close()
	f.fs.hook("close " + f.name)
	return err
}

func (o *opFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	o.hook("open " + name)
	if err != nil {
		return nil, err
	}
	return &opFile{File: f, fs: o, name: name}, nil
}

func (o *opFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := o.FS.Create(name, c)
	return o.wrap(name, f, err)
}

func (o *opFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := o.FS.OpenReadWrite(name, c, opts...)
	return o.wrap(name, f, err)
}

func (o *opFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := o.FS.ReuseForWrite(old, name, c)
	return o.wrap(name, f, err)
}

func (o *opFS) OpenDir(name string) (vfs.File, error) {
	f, err := o.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &opFile{File: f, fs: o, name: name + "/"}, nil
}

func (o *opFS) Link(a, b string) error {
	err := o.FS.Link(a, b)
	o.hook("link " + b)
	return err
}

func (o *opFS) Remove(name string) error {
	err := o.FS.Remove(name)
	o.hook("remove " + name)
	return err
}

func (o *opFS) RemoveAll(name string) error {
	err := o.FS.RemoveAll(name)
	o.hook("removeall " + name)
	return err
}

func (o *opFS) Rename(a, b string) error {
	err := o.FS.Rename(a, b)
	o.hook("rename " + a + " " + b)
	return err
}

func (o *opFS) MkdirAll(dir string, perm os.FileMode) error {
	err := o.FS.MkdirAll(dir, perm)
	o.hook("mkdir " + dir)
	return err
}

// crashPlan is the records the crash workload appends, in order: record i
// gets id i+1 (one writer), and its text holds a token no other record has.
func crashPlan() []Record {
	var out []Record
	for i := range 24 {
		r := Record{Agent: []string{"a1", "a2"}[i%2], Session: fmt.Sprintf("s%d", i/5), Role: []string{"user", "assistant"}[i%2],
			Text: fmt.Sprintf("%s common note %d about the connection pool", crashToken(i), i)}
		if i%7 == 3 {
			r.Text = crashToken(i) + " 我们讨论了数据库连接池的配置 common"
			r.Meta = map[string][]string{"lang": {"zh"}}
		}
		out = append(out, r)
	}
	return out
}

// crashToken is record i's own word: letters only, ending in a consonant
// no stemmer strips.
func crashToken(i int) string {
	return fmt.Sprintf("qz%c%cx", 'a'+i/26, 'a'+i%26)
}

func crashOptions(fs vfs.FS) Options {
	h, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		panic(err) // the hash embedder's options are constant and valid
	}
	return Options{
		FS:       fs,
		Embedder: h,
		Clock:    func() time.Time { return storeClock },
		Log:      segment.Options{SegmentRecords: 5},
		// Flushes and merges happen where the workload asks for them.
		Index: index.Options{FlushDocs: -1, DisableBackgroundMerge: true, MergeFactor: 2, MergeMinDocs: 1},
	}
}

// crashImage is the filesystem crashed after one operation, and how far
// the workload had got: records submitted to Append and acknowledged.
type crashImage struct {
	n         int
	op        string
	fs        *vfs.MemFS
	submitted int
	acked     int
}

// crashWorkload runs appends (single and batch), lazy recalls (they write
// the embedding cache), index flushes and a merge, and Close, on a
// crashable memory FS; emit receives a crash image after every filesystem
// operation (with all, none or half of the unsynced data kept, in turn).
func crashWorkload(t *testing.T, emit func(crashImage)) {
	plan := crashPlan()
	mem := vfs.NewCrashableMem()
	var submitted, acked atomic.Int64
	var n int
	var mu sync.Mutex // the hook runs on Pebble's goroutines too
	rng := rand.New(rand.NewPCG(1, 2))
	hook := func(op string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		cfg := faultfs.CrashCfg(n, rng)
		// Acknowledgements are read before the image is taken: what was
		// acknowledged then must be in it.
		img := crashImage{n: n, op: op, acked: int(acked.Load())}
		img.fs = mem.CrashClone(cfg)
		img.submitted = int(submitted.Load())
		emit(img)
	}
	db, err := Open("store", crashOptions(&opFS{FS: mem, hook: hook}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	next := 0
	appendN := func(k int) {
		t.Helper()
		recs := plan[next : next+k]
		submitted.Add(int64(k))
		var ids []uint64
		if k == 1 {
			id, err := db.Append(ctx, recs[0])
			if err != nil {
				t.Fatal(err)
			}
			ids = []uint64{id}
		} else {
			var err error
			if ids, err = db.AppendBatch(ctx, recs); err != nil {
				t.Fatal(err)
			}
		}
		if ids[0] != uint64(next+1) {
			t.Fatalf("record %d got id %d", next, ids[0])
		}
		next += k
		acked.Add(int64(k))
	}
	recallLazy := func(text string) {
		t.Helper()
		if _, err := db.Recall(ctx, Query{Agents: []string{"a1", "a2"}, Text: text, Now: storeClock}); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	appendN(1)
	appendN(1)
	appendN(5)
	recallLazy("common note connection pool")
	must(db.idx.Flush())
	appendN(4)
	appendN(1)
	recallLazy("note about the pool")
	must(db.idx.Flush())
	appendN(6)
	must(db.log.Seal()) // and the background sealer, every 5 records
	must(db.idx.Flush())
	must(db.idx.Merge())
	appendN(1)
	appendN(5)
	recallLazy("数据库连接池")
	if m := db.idx.Metrics(); m.Flushes < 3 || m.Merges < 1 {
		t.Fatalf("the workload did %d flushes and %d merges, want 3 and 1", m.Flushes, m.Merges)
	}
	if m := db.log.Metrics(); m.Segments == 0 || m.TailRecords == 0 {
		t.Fatalf("the log has %d segments and %d tail records, want both", m.Segments, m.TailRecords)
	}
	must(db.Close())
	if next != len(plan) {
		t.Fatalf("appended %d of %d", next, len(plan))
	}
}

// verifyCrashImage reopens a crash image and checks it: it opens; every
// acknowledged record is there (Get) and recallable (a sparse recall of its
// own token finds it); every recovered id holds exactly the record
// submitted with it, and none lies beyond what was submitted; the index
// holds nothing the log lacks; lazy recall and appends work.
func verifyCrashImage(img crashImage) error {
	plan := crashPlan()
	ctx := context.Background()
	db, err := Open("store", crashOptions(img.fs))
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer db.Close()
	recovered := int(db.log.Next() - 1)
	if recovered < img.acked {
		return fmt.Errorf("%d records acknowledged, %d recovered", img.acked, recovered)
	}
	if recovered > img.submitted {
		return fmt.Errorf("%d records submitted, %d recovered: ids invented", img.submitted, recovered)
	}
	for id := 1; id <= recovered; id++ {
		want := plan[id-1]
		r, err := db.Get(ctx, uint64(id))
		if err != nil {
			return fmt.Errorf("get %d: %w", id, err)
		}
		if r.Text != want.Text || r.Agent != want.Agent || r.Session != want.Session || r.Role != want.Role {
			return fmt.Errorf("id %d holds %q of %s/%s, want %q", id, r.Text, r.Agent, r.Session, want.Text)
		}
		res, err := db.Recall(ctx, Query{Agent: want.Agent, Text: crashToken(id - 1), Mode: ModeSparse, K: 3})
		if err != nil {
			return fmt.Errorf("recall id %d: %w", id, err)
		}
		// K 3: session context also indexes a turn with the words of the
		// turn before it in its session.
		if !slices.Contains(memIDs(res.Memories), uint64(id)) {
			return fmt.Errorf("a recall of %s does not find id %d: %v", crashToken(id-1), id, memIDs(res.Memories))
		}
	}
	res, err := db.Recall(ctx, Query{Agents: []string{"a1", "a2"}, Text: "common", Mode: ModeSparse, K: 100, Candidates: 100})
	if err != nil {
		return err
	}
	got := memIDs(res.Memories)
	slices.Sort(got)
	if len(got) != recovered || (recovered > 0 && got[len(got)-1] != uint64(recovered)) {
		return fmt.Errorf("the index finds ids %v, the log holds 1..%d", got, recovered)
	}
	if _, err := db.Recall(ctx, Query{Agents: []string{"a1", "a2"}, Text: "connection pool note", Now: storeClock}); err != nil {
		return fmt.Errorf("lazy recall: %w", err)
	}
	id, err := db.Append(ctx, Record{Agent: "a1", Text: "after the crash"})
	if err != nil || id != uint64(recovered+1) {
		return fmt.Errorf("append after recovery: id %d (want %d): %v", id, recovered+1, err)
	}
	return nil
}

// TestCrashAnyOperation takes a crash image after every filesystem
// operation of the engine workload (appends single and batched, log
// seals, lazy recalls writing the embedding cache, index flushes and a
// merge, Close)
// and checks each reopens with every acknowledged record present and
// recallable and nothing invented. Images are verified while the workload
// runs (two workers, a short queue: memory stays bounded). Every image is
// checked: the workload is small enough (about 160 operations, under a
// second) that no sampling is needed.
func TestCrashAnyOperation(t *testing.T) {
	v := faultfs.Verify(t, verifyCrashImage, func(img crashImage) string {
		return fmt.Sprintf("crash after op %d (%s; %d acked, %d submitted)", img.n, img.op, img.acked, img.submitted)
	})
	total := 0
	crashWorkload(t, func(img crashImage) {
		total++
		v.Add(img)
	})
	checked := v.Wait(t, 0)
	t.Logf("%d filesystem operations, %d crash images verified", total, checked)
	if total < 100 {
		t.Fatalf("only %d filesystem operations: the hook does not see the store's I/O", total)
	}
}

// walChildEnv names the store directory of the child process of
// TestInjectedWALErrors; walKindEnv the operation to fail.
const (
	walChildEnv = "LAZYMEM_TEST_WAL_CHILD"
	walKindEnv  = "LAZYMEM_TEST_WAL_KIND"
)

var walKinds = map[string]errorfs.OpKind{"write": errorfs.OpFileWrite, "syncdata": errorfs.OpFileSyncData}

// TestInjectedWALErrors: once writes or syncs of the log's WAL fail, no
// append is acknowledged, and the store reopens with every acknowledged
// record and only records that were submitted.
//
// Pebble treats a failed WAL write or sync as fatal (its commit pipeline
// cannot tell what reached the disk): it calls Logger.Fatalf, which ends
// the process. So the appends run in a child process (this test binary
// re-executed) on an error-injecting filesystem over a real directory; the
// child prints each acknowledgement as it gets it, and the parent checks
// that none came after the injection started, whether the child then got
// errors or was ended by Pebble, and reopens the directory.
func TestInjectedWALErrors(t *testing.T) {
	if dir := os.Getenv(walChildEnv); dir != "" {
		walChild(t, dir, walKinds[os.Getenv(walKindEnv)])
		return
	}
	for name := range walKinds {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			cmd := exec.Command(os.Args[0], "-test.run=^TestInjectedWALErrors$", "-test.count=1")
			cmd.Env = append(os.Environ(), walChildEnv+"="+dir, walKindEnv+"="+name)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			acked, submitted, injecting := 0, 0, false
			for _, l := range lines {
				var id int
				switch {
				case l == "inject":
					injecting = true
				case strings.HasPrefix(l, "submit "):
					n, _ := strconv.Atoi(strings.TrimPrefix(l, "submit "))
					submitted += n
				case strings.HasPrefix(l, "ack "):
					id, _ = strconv.Atoi(strings.TrimPrefix(l, "ack "))
					if injecting {
						t.Errorf("id %d acknowledged while the WAL fails", id)
					}
					acked = max(acked, id)
				}
			}
			if !injecting {
				t.Fatalf("the child never started injecting (%v): %s\n%s", err, out, stderr.String())
			}
			fatal := strings.Contains(stderr.String(), "injected error")
			if err != nil && !fatal {
				t.Fatalf("the child failed for another reason: %v\n%s\n%s", err, out, stderr.String())
			}
			t.Logf("child: %d acknowledged, %d submitted, ended by Pebble: %v", acked, submitted, err != nil)
			verifyReopened(t, dir, acked, submitted)
		})
	}
}

// walChild runs in the child process of TestInjectedWALErrors.
func walChild(t *testing.T, dir string, kind errorfs.OpKind) {
	ctx := context.Background()
	plan := crashPlan()
	var on atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && op.Kind == kind && strings.HasPrefix(op.Path, filepath.Join(dir, "log")) && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})
	db, err := Open(dir, crashOptions(errorfs.Wrap(vfs.Default, inj)))
	if err != nil {
		t.Fatal(err)
	}
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	for _, r := range plan[:5] {
		say("submit 1")
		id, err := db.Append(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		say("ack %d", id)
	}
	on.Store(true)
	say("inject")
	say("submit 1")
	if id, err := db.Append(ctx, plan[5]); err == nil {
		say("ack %d", id)
	}
	say("submit 3")
	if ids, err := db.AppendBatch(ctx, plan[6:9]); err == nil {
		say("ack %d", ids[len(ids)-1])
	}
	on.Store(false)
	_ = db.Close()
}

// verifyReopened opens the store in dir (on the OS) and checks it holds
// records 1..n of crashPlan with acked <= n <= submitted, and takes appends.
func verifyReopened(t *testing.T, dir string, acked, submitted int) {
	t.Helper()
	ctx := context.Background()
	plan := crashPlan()
	db, err := Open(dir, crashOptions(vfs.Default))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	n := int(db.log.Next() - 1)
	if n < acked || n > submitted {
		t.Fatalf("recovered %d records; %d acknowledged, %d submitted", n, acked, submitted)
	}
	for id := 1; id <= n; id++ {
		r, err := db.Get(ctx, uint64(id))
		if err != nil || r.Text != plan[id-1].Text {
			t.Fatalf("id %d: %q %v, want %q", id, r.Text, err, plan[id-1].Text)
		}
		res, err := db.Recall(ctx, Query{Agent: r.Agent, Text: crashToken(id - 1), Mode: ModeSparse, K: 3})
		if err != nil || !slices.Contains(memIDs(res.Memories), uint64(id)) {
			t.Fatalf("id %d not recallable: %v %v", id, memIDs(res.Memories), err)
		}
	}
	if id, err := db.Append(ctx, plan[n]); err != nil || id != uint64(n+1) {
		t.Fatalf("append after reopen: id %d, want %d: %v", id, n+1, err)
	}
}

// TestInjectedIndexErrors: write errors in the index's files fail the
// flush, not the appends (the log has the records); Close reports the
// failed flush, and the store reopens with every record recallable
// (re-indexed from the log). A failing FORMAT write fails Open cleanly.
func TestInjectedIndexErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	plan := crashPlan()
	base := vfs.NewMem()
	var on atomic.Bool
	var injected atomic.Int64
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && (strings.HasPrefix(op.Path, "store/index/") || strings.HasPrefix(op.Path, "store/FORMAT")) {
			injected.Add(1)
			return errorfs.ErrInjected
		}
		return nil
	})
	fs := errorfs.Wrap(base, inj)
	on.Store(true)
	if _, err := Open("store", crashOptions(fs)); err == nil || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Open with a failing FORMAT write = %v", err)
	}
	on.Store(false)
	db, err := Open("store", crashOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendBatch(ctx, plan[:10]); err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	if err := db.idx.Flush(); err == nil {
		t.Fatal("index flush succeeded on a failing filesystem")
	}
	if _, err := db.AppendBatch(ctx, plan[10:12]); err != nil {
		t.Fatalf("append with a failing index directory: %v", err)
	}
	if err := db.Close(); err == nil {
		t.Error("Close did not report the failed index flush")
	}
	on.Store(false)
	if injected.Load() == 0 {
		t.Fatal("no error injected")
	}
	db, err = Open("store", crashOptions(fs))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	for id := 1; id <= 12; id++ {
		res, err := db.Recall(ctx, Query{Agent: plan[id-1].Agent, Text: crashToken(id - 1), Mode: ModeSparse, K: 3})
		if err != nil || !slices.Contains(memIDs(res.Memories), uint64(id)) {
			t.Fatalf("id %d not recallable after reopen: %v %v", id, memIDs(res.Memories), err)
		}
	}
}
