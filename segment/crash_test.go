package segment

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/lazymem/lazymem/codec"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCrashRecovery appends concurrently (single appends and batches, with
// the background sealer running), takes a crash image of the filesystem
// that keeps only synced data (plus, in some rounds, a random part of the
// unsynced data), reopens it and checks that every acknowledged record
// reads back byte-identical, that nothing was invented, and that ids are
// dense and keep growing from where they stopped.
func TestCrashRecovery(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 3
	}
	for round := 0; round < rounds; round++ {
		t.Run(fmt.Sprintf("round=%d", round), func(t *testing.T) { crashRound(t, uint64(round)) })
	}
}

func crashRound(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	fs := vfs.NewCrashableMem()
	opts := Options{SegmentRecords: 16 + rng.IntN(48), SegmentBytes: 4 << 10}
	l := openMem(t, fs, opts)
	records := seed/2%2 == 1 // payloads are engine records (framed segments with names), or raw bytes (rows)

	var (
		mu        sync.Mutex
		acked     = map[uint64][]byte{} // id -> payload, filled after AppendBatch returns
		attempted sync.Map              // payload string -> true
		stop      atomic.Bool
		wg        sync.WaitGroup
	)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; !stop.Load(); i++ {
				n := 1
				if r.IntN(3) == 0 {
					n = 1 + r.IntN(20)
				}
				batch := make([][]byte, n)
				for j := range batch {
					p := fmt.Appendf(nil, "w%d-%d-%d:", w, i, j)
					p = append(p, bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(300))...)
					if records {
						// An engine record: framed segments whose new
						// agents and sessions enter the name table in
						// the seal's batch.
						p = codec.AppendRecord(nil, &codec.Record{Time: int64(i), Agent: fmt.Sprintf("agent-%d", w),
							Session: fmt.Sprintf("session-%d-%d", w, i/8), Role: "user", Text: string(p)})
					}
					attempted.Store(string(p), true)
					batch[j] = p
				}
				first, err := l.AppendBatch(ctx, batch)
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("append: %v", err)
					}
					return
				}
				mu.Lock()
				for j, p := range batch {
					acked[first+uint64(j)] = p
				}
				mu.Unlock()
			}
		}(w)
	}
	// Crash at a random point once some appends were acknowledged (waiting
	// on a count, not a clock, so a slow machine changes nothing).
	target := 20 + rng.IntN(2000)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= target {
			break
		}
		time.Sleep(time.Millisecond)
	}

	// Everything acknowledged before the crash image is taken must survive.
	mu.Lock()
	mustSurvive := make(map[uint64][]byte, len(acked))
	for id, p := range acked {
		mustSurvive[id] = p
	}
	mu.Unlock()
	cfg := vfs.CrashCloneCfg{}
	if seed%2 == 1 {
		cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rand.New(rand.NewPCG(seed, 7))}
	}
	crashed := fs.CrashClone(cfg)

	stop.Store(true)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(mustSurvive) == 0 {
		t.Fatal("no append was acknowledged before the crash: the test proved nothing")
	}

	l2, err := Open("db", Options{FS: crashed, SegmentRecords: opts.SegmentRecords, SegmentBytes: opts.SegmentBytes})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer l2.Close()
	next := l2.Next()
	for id, want := range mustSurvive {
		if id >= next {
			t.Fatalf("acknowledged id %d lost: recovered ids end at %d", id, next-1)
		}
		got, err := l2.Get(id, nil)
		if err != nil {
			t.Fatalf("acknowledged id %d: %v", id, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("acknowledged id %d: got %.40q want %.40q", id, got, want)
		}
	}
	// Dense, and nothing invented: every recovered id holds a payload some
	// writer really tried to append, and no payload appears twice.
	seen := map[string]uint64{}
	count := uint64(0)
	err = l2.Scan(1, next, func(id uint64, p []byte) error {
		count++
		if _, ok := attempted.Load(string(p)); !ok {
			return fmt.Errorf("id %d holds a payload nobody appended: %.40q", id, p)
		}
		if prev, dup := seen[string(p)]; dup {
			return fmt.Errorf("payload at ids %d and %d", prev, id)
		}
		seen[string(p)] = id
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != next-1 {
		t.Fatalf("recovered %d records but ids run to %d: not dense", count, next-1)
	}
	// Appends continue densely after recovery.
	id, err := l2.Append(ctx, []byte("after crash"))
	if err != nil || id != next {
		t.Fatalf("append after recovery: id %d (want %d) err %v", id, next, err)
	}
	if err := l2.Seal(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, l2, id); string(got) != "after crash" {
		t.Fatalf("post-crash record: %q", got)
	}
	t.Logf("acked before crash %d, recovered %d, segments %d", len(mustSurvive), next-1, l2.Metrics().Segments)
}
