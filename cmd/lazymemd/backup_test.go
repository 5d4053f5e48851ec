package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestBackupRoute: an admin's POST /v1/backup writes a copy of the store
// while appends go on; the copy opens and holds every record acknowledged
// before the request; a second backup into the same directory is refused
// naming backup.to.
func TestBackupRoute(t *testing.T) {
	ts, _ := newTestServer(t, defaultMaxBody)
	for i := range 50 {
		if st := call(t, "POST", ts.URL+"/v1/records", fmt.Sprintf(`{"agent":"a1","text":"record number %d"}`, i), nil); st != 200 {
			t.Fatal(st)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // appends continue during the backup
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			call(t, "POST", ts.URL+"/v1/records", fmt.Sprintf(`{"agent":"a2","text":"concurrent %d"}`, i), nil)
		}
	}()
	to := filepath.Join(t.TempDir(), "copy")
	var out struct {
		To      string  `json:"to"`
		Seconds float64 `json:"seconds"`
	}
	st := call(t, "POST", ts.URL+"/v1/backup", fmt.Sprintf(`{"to":%q}`, to), &out)
	close(stop)
	wg.Wait()
	if st != 200 || out.To != to {
		t.Fatalf("backup: %d %+v", st, out)
	}
	var e errorReply
	if st := call(t, "POST", ts.URL+"/v1/backup", fmt.Sprintf(`{"to":%q}`, to), &e); st != 400 || e.Error.Field != "backup.to" {
		t.Fatalf("second backup into the same directory: %d %+v", st, e.Error)
	}
	db, err := engine.Open(to, engine.Options{})
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer db.Close()
	for id := uint64(1); id <= 50; id++ {
		r, err := db.Get(context.Background(), id)
		if err != nil || r.Text != fmt.Sprintf("record number %d", id-1) {
			t.Fatalf("copy: record %d: %+v %v", id, r, err)
		}
	}
}
