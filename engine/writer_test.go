package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/segment"
)

// recordingWriter is a segment.Writer in front of another: it counts the
// payloads it is given and can refuse them.
type recordingWriter struct {
	next     segment.Writer
	payloads int
	fail     error
}

func (w *recordingWriter) AppendBatch(ctx context.Context, payloads [][]byte) (uint64, error) {
	if w.fail != nil {
		return 0, w.fail
	}
	w.payloads += len(payloads)
	return w.next.AppendBatch(ctx, payloads)
}

// TestAppendThroughWriter: single and batch appends reach the log only
// through DB.w (the segment.Writer a cluster mode replaces), and a writer
// that refuses makes Append fail without indexing anything.
func TestAppendThroughWriter(t *testing.T) {
	t.Chdir(t.TempDir())
	db, err := Open("store", memStoreOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := &recordingWriter{next: db.w}
	db.w = w
	ctx := context.Background()
	b := storeRecords()[0]
	if _, err := db.Append(ctx, b[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendBatch(ctx, b[1:]); err != nil {
		t.Fatal(err)
	}
	if w.payloads != len(b) {
		t.Fatalf("the writer saw %d payloads, want %d", w.payloads, len(b))
	}
	refused := errors.New("replica unavailable")
	w.fail = refused
	if _, err := db.Append(ctx, Record{Agent: "a1", Text: "zebra crossing"}); !errors.Is(err, refused) {
		t.Fatalf("Append through a refusing writer = %v", err)
	}
	res, err := db.Recall(ctx, Query{Agent: "a1", Text: "zebra", Mode: ModeSparse})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Hits != 0 || db.log.Next() != uint64(len(b))+1 {
		t.Fatalf("a refused append left %d hits, log next %d", res.Stats.Hits, db.log.Next())
	}
}
