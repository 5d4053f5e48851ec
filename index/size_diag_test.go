//go:build diag

package index

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"

	"runtime"
	"strconv"
	"syscall"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/bench/zipf"
	"sort"
	"testing"
)

// TestSegmentBytesDiag prints where a sealed segment's bytes go: each
// section, the postings split into block metas, doc gaps and tfs, and the
// terms by document frequency (go test -tags diag ./index -run
// TestSegmentBytesDiag -v with LAZYMEM_DIAG_INDEX_DIR set to an index
// directory; the files are only read).
func TestSegmentBytesDiag(t *testing.T) {
	dir := os.Getenv("LAZYMEM_DIAG_INDEX_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_DIAG_INDEX_DIR")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.lzi"))
	var segs []*segment
	for _, name := range names {
		buf, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := openSegment(name, 0, buf)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	segmentBytes(t, "as stored", segs)
	for _, ver := range []uint32{segVersion3, segVersion4, segVersion5} {
		restore := writeVersion(ver)
		var out []*segment
		for _, s := range segs {
			r, err := (&Index{}).buildMerged([]*segment{s}, roaring.New(), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		restore()
		segmentBytes(t, fmt.Sprintf("rewritten as version %d", ver), out)
	}
}

func segmentBytes(t *testing.T, label string, segs []*segment) {
	t.Logf("== %s", label)
	var sec [10]int64
	secName := []string{"header+footer", "present", "lens", "times", "fields", "strings", "term table", "block metas", "doc gaps", "tfs"}
	type dfClass struct {
		name             string
		max              uint32
		terms, postings  int64
		bytes, metaBytes int64
	}
	classes := []*dfClass{{name: "df=1", max: 1}, {name: "df 2-4", max: 4}, {name: "df 5-16", max: 16}, {name: "df 17-127", max: 127}, {name: "df >= 128", max: ^uint32(0)}}
	tfHist := map[uint32]int64{}
	var best, efBytes int64
	var total, packGaps, packTFs, packGapsTail int64
	for _, s := range segs {
		buf := s.buf
		total += int64(len(buf))
		ft := len(buf) - segFooterSize
		var offs [7]int64
		for i := range offs {
			offs[i] = int64(binary.LittleEndian.Uint64(buf[ft+8*i:]))
		}
		sec[0] += segHeaderSize + segFooterSize
		for i := 0; i < 6; i++ {
			sec[i+1] += offs[i+1] - offs[i]
		}
		var p postingsIter
		for i := 0; i < s.nTerms; i++ {
			var ti termInfo
			s.entry(i, &ti)
			nb := int((ti.df + blockSize - 1) / blockSize)
			metas := int64(nb * blockMetaSize)
			if ti.single {
				metas = 0
			}
			sec[7] += metas
			p.reset(&ti)
			var docBytes, tfBytes int64
			for bi := 0; bi < nb; bi++ {
				p.load(bi)
				off := 0
				if !ti.single {
					off = nb*blockMetaSize + int(binary.LittleEndian.Uint32(ti.data[bi*blockMetaSize+4:]))
				}
				end := len(p.tfData) // tf bytes run to the next block or further
				docBytes += int64(len(ti.data) - off - end)
				n := len(p.docs)
				p.decodeTFs()
				k := 0
				for j := 0; j < n; j++ {
					if !ti.v3 {
						_, w := uvarint32(p.tfData[k:])
						k += w
					}
					tfHist[p.tfs[j]]++
				}
				if ti.v3 {
					k = packedTFsLen(n, uint(p.tfData[0]))
				}
				tfBytes += int64(k)
				var gw, tw uint32
				prev := uint32(0)
				if bi > 0 {
					prev = p.blockLast(bi - 1)
				}
				for j := 0; j < n; j++ {
					gw = max(gw, uint32(bits.Len32(p.docs[j]-prev)))
					prev = p.docs[j]
					tw = max(tw, uint32(bits.Len32(p.tfs[j]-1)))
				}
				packGaps += int64((n*int(gw)+7)/8) + 1
				vb := int64(len(ti.data) - off - len(p.tfData))
				best += min(vb, int64((n*int(gw)+7)/8)) + 1
				ef := int64(n)*2 + int64(n)*int64(max(0, bits.Len32(uint32(int(p.docs[n-1]-p.docs[0])/n))))
				efBytes += (ef+7)/8 + 4
				packTFs += int64((n*int(tw)+7)/8) + 1
				if n < blockSize {
					packGapsTail += int64((n*int(gw)+7)/8) + 1
				}
			}
			sec[8] += docBytes
			sec[9] += tfBytes
			for _, c := range classes {
				if ti.df <= c.max {
					c.terms++
					c.postings += int64(ti.df)
					c.bytes += docBytes + tfBytes + metas + termEntrySize + int64(len(s.termAt(i)))
					c.metaBytes += metas
					break
				}
			}
		}
	}
	t.Logf("%d files, %d bytes", len(segs), total)
	for i, n := range sec {
		t.Logf("%-14s %10d  %5.1f%%", secName[i], n, 100*float64(n)/float64(total))
	}
	for _, c := range classes {
		t.Logf("%-10s terms %8d postings %10d bytes (entry+string+metas+blocks) %10d (metas %d)", c.name, c.terms, c.postings, c.bytes, c.metaBytes)
	}
	t.Logf("bit-packed per block (width byte + n*width bits): gaps %d (of which short blocks %d), tf-1 %d", packGaps, packGapsTail, packTFs)
	t.Logf("gaps: min(varint, packed) per block + 1 byte %d; Elias-Fano-ish %d", best, efBytes)
	var tfs []uint32
	var nPost int64
	for tf, n := range tfHist {
		tfs = append(tfs, tf)
		nPost += n
	}
	sort.Slice(tfs, func(i, j int) bool { return tfHist[tfs[i]] > tfHist[tfs[j]] })
	for _, tf := range tfs[:min(12, len(tfs))] {
		t.Logf("tf %5d: %5.2f%% of %d postings", tf, 100*float64(tfHist[tf])/float64(nPost), nPost)
	}
}

// TestIndexSizeDiag indexes the Zipf corpus of LAZYMEM_DIAG_N records
// (default 200000; LAZYMEM_DIAG_CORPUS=workload: bench/workload's; session context on, batches of 1000, as the Zipf
// report builds it) once per segment version into LAZYMEM_DIAG_SIZE_DIR,
// merges by the background policy until it rests, and prints each
// index's allocated bytes (du), its text's bytes and the heap of the
// reopened index:
//
//	LAZYMEM_DIAG_SIZE_DIR=/tmp/x LAZYMEM_DIAG_N=1000000 go test -tags diag ./index -run TestIndexSizeDiag -v -timeout 1h
func TestIndexSizeDiag(t *testing.T) {
	base := os.Getenv("LAZYMEM_DIAG_SIZE_DIR")
	if base == "" {
		t.Skip("set LAZYMEM_DIAG_SIZE_DIR")
	}
	n := 200000
	if v := os.Getenv("LAZYMEM_DIAG_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	var docs []Doc
	switch c := os.Getenv("LAZYMEM_DIAG_CORPUS"); c {
	case "", "zipf":
		cfg := zipf.Config{Seed: 20261201, Records: n}
		cfg.EnsureDefaults()
		recs, err := zipf.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		docs = make([]Doc, len(recs))
		for i := range recs {
			r := &recs[i]
			docs[i] = Doc{ID: uint64(i + 1), Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text,
				Meta: []Field{{Key: "channel", Values: []string{r.Channel}}}}
		}
	case "workload":
		docs = benchCorpus(t, n)
	default:
		t.Fatalf("LAZYMEM_DIAG_CORPUS=%q: want zipf or workload", c)
	}
	ptrs := make([]*Doc, len(docs))
	var text int64
	for i := range docs {
		ptrs[i] = &docs[i]
		text += int64(len(docs[i].Text))
	}
	t.Logf("%d records, %d bytes of text", n, text)
	for _, run := range []struct {
		ver uint32
		ctx bool
	}{{segVersion3, true}, {segVersion4, true}, {segVersion5, true}, {segVersion5, false}} {
		ver := run.ver
		dir := filepath.Join(base, fmt.Sprintf("v%d-context%v", ver, run.ctx))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		restore := writeVersion(ver)
		opts := Options{SessionContext: run.ctx, DisableBackgroundMerge: true}
		x, err := Open(dir, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < len(ptrs); lo += 1000 {
			if err := x.Add(ptrs[lo:min(lo+1000, len(ptrs))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			did, err := x.mergeOnce(false)
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				break
			}
		}
		nSegs := len(x.segs)
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		restore()
		du := duDir(t, dir)
		x = nil
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.GC() // and the pools' victims
		runtime.ReadMemStats(&m0)
		x, err = Open(dir, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		t.Logf("version %d, session context %v: %d segments, du %d bytes (%.3fx the text), heap of the open index %d bytes",
			ver, run.ctx, nSegs, du, float64(du)/float64(text), int64(m1.HeapAlloc)-int64(m0.HeapAlloc))
		runtime.KeepAlive(x)
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// duDir sums the allocated blocks of dir's files.
func duDir(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
	}
	return n
}
