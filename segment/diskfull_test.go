package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

func checkDiskFull(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("append on a full disk succeeded")
	}
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrDiskFull) {
		t.Fatalf("append on a full disk: %v: want errors.Is ENOSPC and ErrDiskFull", err)
	}
}

// TestDiskFull fills the disk three ways: errorfs returning ENOSPC for
// every write, errorfs failing only sstable writes (flushes), and, as root,
// a real 4 MiB tmpfs.
func TestDiskFull(t *testing.T) {
	t.Run("errorfs", diskFullErrorfs)
	t.Run("flush-retries", diskFullFlushRetries)
	t.Run("tmpfs", diskFullTmpfs)
}

// diskFullErrorfs fills the disk under a working log (Pebble's errorfs returns
// ENOSPC for every write): appends fail with ErrDiskFull and ENOSPC, reads
// go on, and once space returns appends work again on the same Log, with
// dense ids. Then the log is opened on a full disk (read-only), and
// becomes writable again when space returns, without reopening.
func diskFullErrorfs(t *testing.T) {
	disk := &faultfs.FullDisk{}
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, disk)
	opts := Options{FS: fs, SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: 64 << 10}
	l, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64][]byte{}
	appendOK := func(l *Log, i int) {
		t.Helper()
		p := payload(i)
		id, err := l.Append(ctx, p)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if id != uint64(len(want)+1) {
			t.Fatalf("append %d got id %d, want %d (ids must stay dense)", i, id, len(want)+1)
		}
		want[id] = p
	}
	readAll := func(l *Log) {
		t.Helper()
		for id, p := range want {
			if got := mustGet(t, l, id); !bytes.Equal(got, p) {
				t.Fatalf("id %d: wrong payload", id)
			}
		}
		n := 0
		if err := l.Scan(1, l.Next(), func(uint64, []byte) error { n++; return nil }); err != nil || n != len(want) {
			t.Fatalf("scan: %d records (want %d), %v", n, len(want), err)
		}
	}
	for i := 0; i < 25; i++ {
		appendOK(l, i)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("db/" + reserveName); err != nil {
		t.Fatalf("no space reserve: %v", err)
	}

	disk.On.Store(true)
	files := func() int {
		names, err := mem.List("db")
		if err != nil {
			t.Fatal(err)
		}
		return len(names)
	}
	var filesAfter5 int
	for i := 0; i < 50; i++ { // each failed append may try to reopen Pebble
		_, err := l.AppendBatch(ctx, [][]byte{[]byte("lost"), []byte("lost too")})
		checkDiskFull(t, err)
		if i == 4 {
			filesAfter5 = files()
		}
	}
	if n := files(); n > filesAfter5+2 {
		t.Fatalf("files in the log directory grew from %d to %d over 45 failed appends", filesAfter5, n)
	}
	if _, err := mem.Stat("db/" + reserveName); err == nil {
		t.Fatal("the space reserve was not released when the disk filled")
	}
	readAll(l) // reads go on
	if m := l.Metrics(); m.WriteError == "" {
		t.Fatal("metrics do not say writes fail")
	}

	disk.On.Store(false)
	for i := 25; i < 40; i++ { // same Log, no reopen by the caller
		appendOK(l, i)
	}
	readAll(l)
	if l.Metrics().Reopens == 0 {
		t.Fatal("appends resumed without reopening Pebble: the failure was not exercised")
	}
	if _, err := mem.Stat("db/" + reserveName); err != nil {
		t.Fatalf("space reserve not made again: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Open on a full disk: read-only, reads work, appends fail clearly.
	disk.On.Store(true)
	l, err = Open("db", opts)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	if !l.Metrics().ReadOnly {
		t.Fatal("opened writable on a full disk")
	}
	readAll(l)
	_, err = l.Append(ctx, []byte("lost"))
	checkDiskFull(t, err)
	disk.On.Store(false)
	for i := 40; i < 50; i++ {
		appendOK(l, i)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	if l.Next() != uint64(len(want)+1) {
		t.Fatalf("after reopen ids end at %d, want %d: a failed append left records", l.Next()-1, len(want))
	}
	readAll(l)
	if names, _ := mem.List("db/archive"); len(names) > 0 {
		t.Fatalf("archive holds %d files", len(names))
	}
}

// diskFullFlushRetries fills the disk for sstables only while the WAL
// still takes writes: Pebble's background flush fails and retries at once.
// No file piles up (the archive cleaner moved every abandoned sstable into
// archive/), and once space returns the data flushes.
func diskFullFlushRetries(t *testing.T) {
	var full atomic.Bool
	var creates atomic.Int64
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !strings.HasSuffix(op.Path, ".sst") {
			return nil
		}
		if op.Kind == errorfs.OpCreate {
			creates.Add(1)
		}
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && op.Kind != errorfs.OpRemove {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	opts := Options{FS: fs, SegmentRecords: 10, DisableBackgroundSeal: true, MemTableBytes: 1 << 20, ReserveBytes: -1}
	l, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	full.Store(true)
	big := bytes.Repeat([]byte("x"), 64<<10)
	// ~3 MiB through a 1 MiB memtable: flushes are due and fail. Appends
	// succeed until the first flush fails, then fail with ErrDiskFull
	// instead of stalling in Pebble until a flush succeeds.
	var acked []uint64
	var refused int
	for i := 0; i < 48; i++ {
		id, err := l.Append(ctx, big)
		if err != nil {
			checkDiskFull(t, err)
			refused++
			continue
		}
		acked = append(acked, id)
	}
	if refused == 0 {
		t.Fatal("no append refused although no flush could complete")
	}
	for creates.Load() < 3 {
		waitBrief() // at least a few failed flush attempts
	}
	names, err := mem.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var ssts int
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			ssts++
		}
	}
	if ssts > 2 {
		t.Fatalf("%d sstables left by failed flushes: %v", ssts, names)
	}
	if archived, _ := mem.List("db/archive"); len(archived) > 0 {
		t.Fatalf("archive holds %d files", len(archived))
	}
	full.Store(false)
	// Once a flush succeeds appends work again (the retry is Pebble's; the
	// bound is a count, not a clock).
	var id uint64
	for i := 0; i < 1_000_000; i++ {
		if id, err = l.Append(ctx, big); err == nil {
			break
		}
		checkDiskFull(t, err)
		waitBrief()
	}
	if err != nil {
		t.Fatalf("appends never resumed: %v", err)
	}
	acked = append(acked, id)
	for _, id := range acked {
		if got := mustGet(t, l, id); !bytes.Equal(got, big) {
			t.Fatalf("id %d: wrong payload", id)
		}
	}
	if want := uint64(len(acked)); id != want {
		t.Fatalf("ids not dense: last %d after %d acknowledged appends", id, want)
	}
}

// diskFullTmpfs fills a real 4 MiB tmpfs: the kernel's ENOSPC, not an
// injected one. It needs root to mount; without root it fails under CI
// (where it must run) and is skipped elsewhere.
func diskFullTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("TestDiskFull/tmpfs needs root to mount a tmpfs; CI must run it as root")
		}
		t.Skip("not root: cannot mount a tmpfs to fill (runs under CI=true as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	logDir := dir + "/log"
	opts := Options{FS: vfs.Default, SegmentRecords: 10, MemTableBytes: 1 << 20, ReserveBytes: 256 << 10}
	l, err := Open(logDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the rest of the tmpfs with a ballast file, then append until the
	// disk is full.
	ballast := dir + "/ballast"
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	var acked [][]byte
	var full error
	for i := 0; i < 100000 && full == nil; i++ {
		p := fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte("y"), 2000))
		if _, err := l.Append(ctx, p); err != nil {
			full = err
			break
		}
		acked = append(acked, p)
	}
	checkDiskFull(t, full)
	for i, p := range acked {
		if got := mustGet(t, l, uint64(i+1)); !bytes.Equal(got, p) {
			t.Fatalf("id %d: wrong payload on a full disk", i+1)
		}
	}
	// Space returns: appends work again on the same Log.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	id, err := l.Append(ctx, []byte("after"))
	if err != nil || id != uint64(len(acked)+1) {
		t.Fatalf("append after space returned: id %d (want %d) %v", id, len(acked)+1, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// And the log opens on a full disk.
	f, err = os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	l, err = Open(logDir, opts)
	if err != nil {
		t.Fatalf("open on a full tmpfs: %v", err)
	}
	defer l.Close()
	if got := mustGet(t, l, id); string(got) != "after" {
		t.Fatalf("last record: %q", got)
	}
}

// TestReleaseWaitsForSSTWrite: an sstable write that passed sstRoom while
// the reserve was held holds releaseReserve back until it ends, so that it
// cannot land on the space the release frees; the next one is checked
// against the free space (the race behind a MANIFEST write that found no
// space after the reserve was released).
func TestReleaseWaitsForSSTWrite(t *testing.T) {
	mem := vfs.NewMem()
	d := newDiskModel(mem, 1<<40, -1, 0)
	l, err := Open("db", Options{FS: d, SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.reserveHeld.Load() {
		t.Fatal("no reserve after open")
	}
	unlock, ok := l.sstRoom(1 << 20)
	if !ok {
		t.Fatal("an sstable write refused while the reserve is held")
	}
	released := make(chan bool)
	go func() { released <- l.releaseReserve() }()
	// The release must not finish while the write is in flight. A wait
	// that is too short can only let a broken gate pass, never fail a
	// sound one.
	select {
	case <-released:
		t.Fatal("the reserve was released during an sstable write admitted while it was held")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	if !<-released {
		t.Fatal("releaseReserve did not release the reserve")
	}
	// Now the free space decides: the model's disk has room for the write
	// but not for one that would eat into the half of the reserve kept
	// for the WAL and the MANIFEST.
	free, _ := l.avail()
	d.mu.Lock()
	d.capacity -= int64(free) - 200<<10 // 200 KB free
	d.mu.Unlock()
	unlock, ok = l.sstRoom(100 << 10)
	unlock()
	if ok {
		t.Fatal("an sstable write of 100 KB admitted with 200 KB free and the reserve released")
	}
	unlock, ok = l.sstRoom(50 << 10)
	unlock()
	if !ok {
		t.Fatal("an sstable write of 50 KB refused with 200 KB free (128 KB headroom)")
	}
}

// TestRecycledWALSpendsReserve: a WAL file Pebble recycles (ReuseForWrite)
// is wrapped like a new one, so that its write on a full disk releases
// the space reserve and is tried again instead of failing (a failed WAL
// write makes Pebble's memtable rotation panic).
func TestRecycledWALSpendsReserve(t *testing.T) {
	d := newDiskModel(vfs.NewMem(), 1<<40, -1, 0)
	l, err := Open("db", Options{FS: d, SegmentRecords: 10, DisableBackgroundSeal: true, ReserveBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	old, err := d.Create("db/999990.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	fs := noArchiveFS{FS: noPreallocFS{d}, archive: "db/archive", log: l}
	f, err := fs.ReuseForWrite("db/999990.log", "db/999991.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.capacity = d.usedLocked() // the disk is full
	d.mu.Unlock()
	n, err := f.Write(make([]byte, 4096))
	d.grow(1 << 40)
	if err != nil || n != 4096 {
		t.Fatalf("a recycled WAL's write on a full disk: %d bytes, %v; want the reserve spent and the write done", n, err)
	}
	if l.reserveHeld.Load() {
		t.Fatal("the reserve is still held")
	}
	f.Close()
}
