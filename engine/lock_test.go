package engine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestStoreLock: a second Open of an open store, by any spelling of its
// path, is refused naming the holder; after Close it opens.
func TestStoreLock(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir, nil)
	load(t, db)
	t.Chdir(filepath.Dir(dir))
	for _, p := range []string{dir, filepath.Base(dir), "./" + filepath.Base(dir) + "/"} {
		_, err := engine.Open(p, engine.Options{DisableEmbedder: true})
		var le *engine.LockedError
		if !errors.Is(err, engine.ErrLocked) || !errors.As(err, &le) {
			t.Fatalf("second Open(%q) = %v, want ErrLocked", p, err)
		}
		host, _ := os.Hostname()
		if le.Holder.PID != os.Getpid() || le.Holder.Host != host || le.Holder.Since.IsZero() ||
			!strings.Contains(err.Error(), fmt.Sprintf("held by pid %d on %s since ", os.Getpid(), host)) {
			t.Fatalf("the error does not name the holder: %v (%+v)", err, le.Holder)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, dir, nil)
	defer db.Close()
	if m := db.Metrics(); m.Index.Docs != uint64(len(corpus())) {
		t.Fatalf("the refused opens changed the store: %d docs", m.Index.Docs)
	}
}

func TestMustExist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	_, err := engine.Open(dir, engine.Options{DisableEmbedder: true, MustExist: true})
	if !errors.Is(err, engine.ErrNoStore) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open of a missing store with MustExist = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused Open created %s", dir)
	}
	db, err := engine.Open(dir, engine.Options{DisableEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = engine.Open(dir, engine.Options{DisableEmbedder: true, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
