package segment

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
)

// TestSegmentValuesVisibleToScans: every sealed segment value lies in the
// log's sstables as it is or inside a zstd frame Pebble wrote, the two
// places the scans for forgotten data look (internal/storetest: the files'
// raw bytes and their zstd frames). A Pebble compression other than zstd
// for the log's blocks would hide a compressed block's segments from
// those scans: with the segments' span on Pebble's fast compression
// (MinLZ, tried for ingest CPU: docs/benchmarks/log-size.md section 10),
// or MinLZ for every block, this test fails: segments of 8 records share
// blocks that MinLZ shrinks (those of 512 it leaves as they are).
func TestSegmentValuesVisibleToScans(t *testing.T) {
	dir := t.TempDir()
	for _, records := range []int{512, 8} {
		sub := filepath.Join(dir, fmt.Sprint(records))
		l, err := Open(sub, Options{SegmentRecords: records})
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields("budget launch deploy review the team agreed on a date for the release and the costs")
		for i := range 3000 {
			text := fmt.Sprintf("%s %s %s note %d", words[i%len(words)], words[(i*7)%len(words)], words[(i*3)%len(words)], i)
			p := codec.AppendRecord(nil, &codec.Record{Time: int64(i) * 1e9, Agent: "agent-1", Session: fmt.Sprint("s", i/40), Role: "user", Text: text})
			if _, err := l.Append(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		l.segMu.RLock()
		segs := slices.Clone(l.segs)
		l.segMu.RUnlock()
		var values [][]byte
		db, err := l.rdb()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range segs {
			v, c, err := value(db, m)
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, bytes.Clone(v))
			c.Close()
		}
		// Into sstables: Close flushes only a memtable worth it.
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		l.dbMu.RUnlock()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		var ssts []byte
		ents, err := os.ReadDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".sst") {
				b, err := os.ReadFile(filepath.Join(sub, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				ssts = append(ssts, b...)
			}
		}
		if len(ssts) == 0 {
			t.Fatalf("%d records a segment: no sstable after the flush", records)
		}
		if len(values) < 5 {
			t.Fatalf("%d records a segment: %d segments sealed", records, len(values))
		}
		frames := zstdFrames(t, ssts)
		for k, v := range values {
			if !bytes.Contains(ssts, v) && !bytes.Contains(frames, v) {
				t.Fatalf("%d records a segment: segment %d of %d (%d bytes) is neither in the sstables as it is nor in a zstd frame of theirs", records, k, len(values), len(v))
			}
		}
	}
}

// zstdFrames returns what every zstd frame found in b decompresses to
// (frames without a dictionary: Pebble's), one after the other.
func zstdFrames(t *testing.T, b []byte) []byte {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	var out []byte
	for off := 0; ; off += len(magic) {
		i := bytes.Index(b[off:], magic)
		if i < 0 {
			return out
		}
		off += i
		r := bytes.NewReader(b[off:])
		if err := dec.Reset(r); err == nil {
			d, _ := io.ReadAll(dec) // a frame's blocks, up to its end or the first damage
			out = append(out, d...)
		}
	}
}
