package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTermDict: every term of a sealed segment is found at its table
// index, absent terms are not, and the table stays at most 3/4 full.
func TestTermDict(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 300} {
		t.Run(fmt.Sprintf("docs=%d", n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 3))
			x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if err := x.Add(genCorpus(rng, n, 5, 40)); err != nil {
				t.Fatal(err)
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			s := x.segs[0]
			if s.nTerms == 0 {
				t.Fatal("no terms")
			}
			if 4*s.nTerms > 3*len(s.dict.slots) {
				t.Fatalf("%d terms in %d slots", s.nTerms, len(s.dict.slots))
			}
			var ti termInfo
			for i := 0; i < s.nTerms; i++ {
				term := string(s.termAt(i))
				if got := s.dict.find(s, term); got != i {
					t.Fatalf("find(%q) = %d, want %d", term, got, i)
				}
				if !s.term(term, &ti) || ti.df == 0 {
					t.Fatalf("term(%q) not found", term)
				}
				for _, absent := range []string{term + "x", "x" + term, term[:len(term)-1]} {
					if j := s.dict.find(s, absent); j >= 0 && string(s.termAt(j)) != absent {
						t.Fatalf("find(%q) = %d, which holds %q", absent, j, s.termAt(j))
					}
				}
			}
			if s.dict.find(s, "") != -1 || s.term("never-a-term", &ti) {
				t.Fatal("found an absent term")
			}
		})
	}
}

// TestTermDictCollisions: with every term under one hash (one tag, one
// home slot), probing still finds each term and stops at an empty slot for
// an absent one.
func TestTermDictCollisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Add(genCorpus(rng, 100, 5, 40)); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	s := x.segs[0]
	const h = 0xdeadbeef_00000005
	d := newTermDict(s.nTerms)
	for i := 0; i < s.nTerms; i++ {
		d.insert(h, i)
	}
	for i := 0; i < s.nTerms; i++ {
		if got := d.findHash(s, string(s.termAt(i)), h); got != i {
			t.Fatalf("findHash(%q) = %d, want %d", s.termAt(i), got, i)
		}
	}
	if got := d.findHash(s, "absent", h); got != -1 {
		t.Fatalf("findHash(absent) = %d", got)
	}
	// Under its own hash an absent term misses too.
	if got := d.find(s, "absent"); got != -1 {
		t.Fatalf("find(absent) = %d", got)
	}
}

// TestLazyTFsDamaged: a block's tfs are decoded when first read; a damaged
// tf section then reads as zeros and sets Err (which Search turns into a
// CorruptionError), without a panic.
func TestLazyTFsDamaged(t *testing.T) {
	img := sampleSegment(t)
	img = append([]byte(nil), img...)
	s, err := openSegment("lazy", 1, img)
	if err != nil {
		t.Fatal(err)
	}
	var ti termInfo
	var p postingsIter
	for i := 0; i < s.nTerms; i++ {
		s.entry(i, &ti)
		if ti.df < 2 {
			continue
		}
		p.reset(&ti)
		if !p.Next() {
			t.Fatal("no posting")
		}
		if p.tfDone {
			t.Fatal("tfs decoded before TF was called")
		}
		for j := range p.tfData {
			p.tfData[j] = 0xff // varints that never end
		}
		if tf := p.TF(); tf != 0 || p.Err() == nil {
			t.Fatalf("damaged tfs: TF %d, Err %v", tf, p.Err())
		}
		for p.Next() {
			_ = p.TF()
		}
		return
	}
	t.Fatal("no term with two postings")
}

// TestLookupAll: the staged lookup over every segment gives what
// segment.term gives segment by segment, for every term of every segment
// (most in their home slot, some probed past it at the dictionaries' 3/8-3/4
// load) and for absent terms, with the mutable segment among them.
func TestLookupAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	id := uint64(1)
	for i := 0; i < 4; i++ {
		docs := genCorpus(rng, 200, id, 3000)
		if err := x.Add(docs); err != nil {
			t.Fatal(err)
		}
		id = docs[len(docs)-1].ID + 1
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Add(genCorpus(rng, 50, id, 3000)); err != nil {
		t.Fatal(err)
	}
	segs := x.allSegs()
	if len(segs) != 5 || segs[4].mut == nil {
		t.Fatalf("%d segments, want 4 sealed and the mutable one", len(segs))
	}
	terms := map[string]bool{"never-a-term": true, "": true}
	for _, s := range segs[:4] {
		for i := 0; i < s.nTerms; i++ {
			tt := string(s.termAt(i))
			terms[tt] = true
			terms[tt+"x"] = true
		}
	}
	// Terms go in groups of up to 7 (a query's), so the stages interleave
	// pairs of different terms.
	list := make([]string, 0, len(terms))
	for tt := range terms {
		list = append(list, tt)
	}
	slices.Sort(list)
	const group = 7
	row := make([]termInfo, group*len(segs))
	idx := make([]int, group*len(segs))
	hs := make([]uint64, group)
	var want termInfo
	found := 0
	for lo := 0; lo < len(list); lo += group {
		ts := list[lo:min(lo+group, len(list))]
		lookupAll(segs, ts, row[:len(ts)*len(segs)], hs[:len(ts)], idx[:len(ts)*len(segs)])
		for j, tt := range ts {
			for i, s := range segs {
				if !s.term(tt, &want) {
					want = termInfo{}
				} else {
					found++
				}
				got := row[j*len(segs)+i]
				if got.df != want.df || got.maxTF != want.maxTF || got.minDL != want.minDL || got.mem != want.mem ||
					len(got.data) != len(want.data) || got.lo != want.lo || got.hi != want.hi {
					t.Fatalf("lookupAll(%q) in segment %d = %+v, want %+v", tt, i, got, want)
				}
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d (term, segment) pairs found", found)
	}
}
