package engine

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// memStoreOptions are options of a store on fs with the hash embedder and
// the test clock.
func memStoreOptions(fs vfs.FS) Options {
	o := storeOptions()
	o.FS = fs
	return o
}

// TestFSSeam: a store on an in-memory filesystem works end to end (append,
// lazy recall through the disk cache, reopen) and writes nothing to the OS:
// every file of the log, the index and the embedding cache goes through
// Options.FS.
func TestFSSeam(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd) // a relative store path would land here if the OS were used
	mem := vfs.NewMem()
	ctx := context.Background()
	db, err := Open("store", memStoreOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, b := range storeRecords() {
		recs = append(recs, b...)
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	q := Query{Text: "connection pool size", Agent: "a1", Now: storeClock}
	want, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"log", "index", "cache"} {
		names, err := mem.List(mem.PathJoin("store", sub))
		if err != nil || len(names) == 0 {
			t.Errorf("store/%s on the memory FS: %v %v", sub, names, err)
		}
	}
	if ents, err := os.ReadDir(cwd); err != nil || len(ents) != 0 {
		t.Fatalf("the OS filesystem was written: %v %v", ents, err)
	}

	db, err = Open("store", memStoreOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(memIDs(got.Memories), memIDs(want.Memories)) {
		t.Errorf("after reopen %v, before %v", memIDs(got.Memories), memIDs(want.Memories))
	}
	if got.Stats.DiskHits == 0 || got.Stats.Embedded != 0 {
		t.Errorf("after reopen the cache on the memory FS was not used: %+v", got.Stats)
	}
}

// TestIndexRepairFS: the corrupt index is moved aside through Options.FS.
func TestIndexRepairFS(t *testing.T) {
	t.Chdir(t.TempDir())
	mem := vfs.NewMem()
	ctx := context.Background()
	db, err := Open("store", memStoreOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendBatch(ctx, storeRecords()[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	man := mem.PathJoin("store", "index", "MANIFEST")
	f, err := mem.OpenReadWrite(man, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xde, 0xad}, 20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("store", memStoreOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := db.Metrics()
	if !strings.HasPrefix(m.IndexRepaired, mem.PathJoin("store", "index.corrupt-")) {
		t.Fatalf("IndexRepaired = %q", m.IndexRepaired)
	}
	if _, err := mem.Stat(m.IndexRepaired); err != nil {
		t.Errorf("the corrupt index is not at %s on the memory FS: %v", m.IndexRepaired, err)
	}
	if m.Index.Docs != uint64(len(storeRecords()[0])) {
		t.Errorf("rebuilt index holds %d docs, want %d", m.Index.Docs, len(storeRecords()[0]))
	}
}

func memIDs(ms []Memory) []uint64 {
	out := make([]uint64, len(ms))
	for i := range ms {
		out[i] = ms[i].ID
	}
	return out
}
