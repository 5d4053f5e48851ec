package segment_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/internal/storetest"
	"github.com/lazymem/lazymem/segment"
)

// TestSegmentValuesVisibleToScans: every sealed segment value is found by
// the scans for forgotten data (internal/storetest: a file's raw bytes,
// its zstd frames, and an sstable's keys and values read through Pebble's
// reader). The log's tail and segments spans are on Pebble's fast
// compression (Snappy for the log's tables; spanByPrefix), which shrinks blocks of small
// segments (8 records) by back-references: without the reader's view
// (the raw bytes and zstd frames alone) this test fails on them.
func TestSegmentValuesVisibleToScans(t *testing.T) {
	dir := t.TempDir()
	for _, records := range []int{512, 8} {
		sub := filepath.Join(dir, fmt.Sprint(records))
		l, err := segment.Open(sub, segment.Options{SegmentRecords: records})
		if err != nil {
			t.Fatal(err)
		}
		// Short texts of a few words repeating: the package's chat records
		// (chatRecords) leave Snappy nothing to shrink in these blocks, and
		// the test would pass without the reader's view too (checked).
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
		values, err := segment.SealedValuesForTest(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if len(values) < 5 {
			t.Fatalf("%d records a segment: %d segments sealed", records, len(values))
		}
		var raw, zstd, table []byte
		tables := 0
		for _, im := range storetest.Images(t, sub) {
			if strings.HasSuffix(im.Path, ".sst") {
				tables++
				raw, zstd, table = append(raw, im.Raw...), append(zstd, im.Zstd...), append(table, im.Table...)
			}
		}
		if tables == 0 {
			t.Fatalf("%d records a segment: no sstable after the flush", records)
		}
		for k, v := range values {
			if !bytes.Contains(raw, v) && !bytes.Contains(zstd, v) && !bytes.Contains(table, v) {
				t.Fatalf("%d records a segment: segment %d of %d (%d bytes) is nowhere the scans look", records, k, len(values), len(v))
			}
		}
	}
}
