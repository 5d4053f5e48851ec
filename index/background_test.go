package index

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// failCreate makes the creation of the file whose name ends with suffix
// fail with errorfs.ErrInjected.
func failCreate(suffix string) errorfs.Injector {
	return errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpCreate && strings.HasSuffix(op.Path, suffix) {
			return errorfs.ErrInjected
		}
		return nil
	})
}

// TestOnBackgroundError: a background merge and a background flush that
// fail on the filesystem reach Options.OnBackgroundError (wrapping
// ErrBackground and the cause) and the Metrics counters, and the index
// keeps every document searchable.
func TestOnBackgroundError(t *testing.T) {
	for _, tc := range []struct {
		name string
		// file is the file whose creation fails: 000003.lzi is the merge
		// of the flushes 000001.lzi and 000002.lzi; 000001.lzi is the
		// first automatic flush.
		file      string
		flushDocs int
		what      string
	}{
		{"merge", "000003.lzi", -1, "merge"},
		{"flush", "000001.lzi", 100, "flush"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make(chan error, 16)
			fs := errorfs.Wrap(vfs.NewMem(), failCreate(tc.file))
			x, err := Open("idx", Options{FS: fs, Analyzer: SimpleAnalyzer{}, FlushDocs: tc.flushDocs,
				MergeFactor: 2, MergeMinDocs: 1000,
				OnBackgroundError: func(err error) { errs <- err }}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			rng := rand.New(rand.NewPCG(7, 7))
			docs := genCorpus(rng, 200, 1, 50)
			if tc.flushDocs < 0 {
				// Two explicit flushes (they succeed) make two tier-0
				// segments: the background merger picks them and fails.
				for _, half := range [][]*Doc{docs[:100], docs[100:]} {
					if err := x.Add(half); err != nil {
						t.Fatal(err)
					}
					if err := x.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			} else if err := x.Add(docs[:100]); err != nil { // the 100th freezes, the flusher fails
				t.Fatal(err)
			}
			var got error
			select {
			case got = <-errs:
			case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
				t.Fatal("OnBackgroundError was not called")
			}
			if !errors.Is(got, ErrBackground) || !errors.Is(got, errorfs.ErrInjected) || !strings.Contains(got.Error(), tc.what) {
				t.Fatalf("OnBackgroundError got %v, want ErrBackground, %s and the injected error", got, tc.what)
			}
			m := x.Metrics()
			if n := map[string]int64{"merge": m.MergeErrors, "flush": m.FlushErrors}[tc.what]; n < 1 {
				t.Fatalf("metrics count %d %s errors: %+v", n, tc.what, m)
			}
			if m.Docs != uint64(len(docs[:map[string]int{"merge": 200, "flush": 100}[tc.what]])) {
				t.Fatalf("%d live documents after the failure: %+v", m.Docs, m)
			}
			// (A failed merge leaves its inputs; a pending kick may retry it
			// with a new file number at once, so the segment count is not
			// checked.)
		})
	}
}
