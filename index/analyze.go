package index

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/lazymem/lazymem/index/analysis"
)

type analyzed struct {
	off, n int // terms/tfs of the doc in batchTerms[off:off+n]
	// xoff, xn: terms added by withContext (the terms of a predecessor from
	// an earlier chunk that the document lacks), in [xoff:xoff+xn].
	xoff, xn int
	xh       int    // the terms' hashes in batchTerms.xhash[xh:xh+xn]
	dl       uint32 // indexed length: own plus context
	// own is the number of the document's own terms: the first own
	// entries of [off:off+n], their own frequencies in batchTerms.otfs.
	own   int
	ownDL uint32
	// pred is the chunk index of the document's predecessor in the chunk
	// (whose own terms analyze merged in), predEarlier when analyze merged
	// in a predecessor from an earlier chunk of the batch (its terms in
	// [xoff:xoff+xn], with chunk term ids), noPred if none; succ reports
	// that a later document of the chunk has this one as predecessor.
	pred int32
	succ bool
}

// batchTerms holds the analysed terms of a chunk, flat.
type batchTerms struct {
	terms []string
	tfs   []uint32 // indexed frequencies (own plus context)
	// otfs and tid are parallel to terms: otfs is the own frequency of a
	// document's own term (0 for a context term); tid is the term's id in
	// the chunk (its index in uterms), or -1 for a term withContext added.
	otfs []uint32
	tid  []int32
	docs []analyzed
	// Chunk term ids: analyze gives each distinct term of the chunk an id,
	// so that a document's terms are deduplicated and its predecessor's
	// merged by array index, and insert looks each distinct term up once
	// per chunk instead of once per posting (profile: the term map lookup
	// was a quarter of insert, the serial part of an Add).
	ids    chunkTable
	uterms []string // id -> term
	uhash  []uint64 // id -> termHash(term), for insert's lookup
	upre   []uint64 // id -> termPre(term), read here on the worker
	xhash  []uint64 // termHash of the terms withContext added
	// stamp: id -> 1 + the last document (in the chunk) holding it, at:
	// the term's entry in that document; once the chunk is analysed,
	// addPrevChunk reuses both with negative marks.
	stamp  []int32
	at     []int32
	slotOf []int32 // id -> slot in the mutable segment, filled by insert
	// sink keeps what insert's warming passes read (memSeg.warm, by half;
	// termTable.warm).
	sink    [3]uint32
	entSlot []int32 // the slot of each entry of terms, filled by insert
	// reused by analyze
	scratch []string
	kscr    []analysis.TermKey // the keys of scratch's terms
	lastOf  map[ctxKey]int32   // key -> latest doc of the chunk
	slow    bool               // made by withContextSlow (remembered already)
	// view is what later chunks' workers read of this one once its own
	// terms are analysed (Analyzed.own): slices no one writes afterwards.
	view     ownView
	viewDocs []analyzed
	// crossFrom is the first chunk of the batch whose documents this
	// one's took as predecessors (inheritEarlier), or its own index.
	crossFrom int
}

// ownView is a chunk's analysis as later chunks of the batch see it: the
// own terms of its documents and the last document of each session.
type ownView struct {
	terms  []string
	otfs   []uint32
	tid    []int32
	uhash  []uint64
	upre   []uint64
	docs   []analyzed
	lastOf map[ctxKey]int32
}

const (
	noPred      = -1
	predEarlier = -2
)

func (bt *batchTerms) reset() {
	bt.terms, bt.tfs, bt.otfs, bt.tid, bt.docs = bt.terms[:0], bt.tfs[:0], bt.otfs[:0], bt.tid[:0], bt.docs[:0]
	bt.uterms, bt.uhash, bt.upre, bt.xhash = bt.uterms[:0], bt.uhash[:0], bt.upre[:0], bt.xhash[:0]
	bt.ids.reset()
	bt.slow = false
}

// analyze analyses the texts of chunk c of batch a (or, with a nil a, a
// chunk alone). With SessionContext, a document whose predecessor (the
// previous document of its agent and session) is in the batch takes the
// predecessor's own terms here, on the worker goroutine: from the same
// chunk, then (inheritEarlier) from an earlier one; withContext later does
// the rest under addMu (the first document of each session in the batch,
// and deletions). It reads only the batch's documents: chunks of one batch
// are analysed concurrently.
func (x *Index) analyze(docs []*Doc, out *batchTerms, a *Analyzed, c int) {
	x.analyzeOwn(docs, out)
	if a == nil {
		return
	}
	out.crossFrom = c
	if x.opts.SessionContext {
		out.viewDocs = append(out.viewDocs[:0], out.docs...)
		out.view = ownView{terms: out.terms, otfs: out.otfs, tid: out.tid, uhash: out.uhash, upre: out.upre, docs: out.viewDocs, lastOf: out.lastOf}
	}
	if a.own != nil {
		close(a.own[c])
	}
	if x.opts.SessionContext && c > 0 {
		x.inheritEarlier(docs, out, a, c)
	}
}

// analyzeOwn analyses the texts of one chunk, and merges into a document
// the own terms of a predecessor in the chunk.
func (x *Index) analyzeOwn(docs []*Doc, out *batchTerms) {
	out.reset()
	scratch := out.scratch[:0]
	ctx := x.opts.SessionContext
	if ctx {
		if out.lastOf == nil {
			out.lastOf = make(map[ctxKey]int32, addChunk)
		}
		clear(out.lastOf)
	}
	ids := &out.ids
	cw := x.contextWeights()
	w := cw.own
	ka, _ := x.opts.Analyzer.(keyedAnalyzer)
	ks := out.kscr[:0]
	for i, d := range docs {
		if ka != nil {
			scratch, ks = ka.TermsKeyed(scratch[:0], ks[:0], d.Text)
		} else {
			scratch, ks = x.opts.Analyzer.Terms(scratch[:0], d.Text), ks[:0]
			for _, t := range scratch {
				ks = append(ks, analysis.TermKey{Hash: termHash(t), Prefix: termPre(t)})
			}
		}
		mark := int32(i + 1)
		a := analyzed{off: len(out.terms), dl: w * uint32(len(scratch)), ownDL: uint32(len(scratch)), pred: noPred}
		for k, t := range scratch {
			h := ks[k].Hash
			id, added := ids.findOrAdd(t, h, out.uterms, out.uhash)
			if added {
				out.uterms = append(out.uterms, t)
				out.uhash = append(out.uhash, h)
				out.upre = append(out.upre, ks[k].Prefix)
				out.stamp = append(out.stamp[:id], 0)
				out.at = append(out.at[:id], 0)
			}
			if out.stamp[id] == mark {
				out.tfs[out.at[id]] += w
				continue
			}
			out.stamp[id], out.at[id] = mark, int32(len(out.terms))
			out.terms = append(out.terms, t)
			out.tfs = append(out.tfs, w)
			out.tid = append(out.tid, id)
		}
		a.own = len(out.terms) - a.off
		for _, tf := range out.tfs[a.off:] {
			out.otfs = append(out.otfs, tf/w)
		}
		if ctx && d.Session != "" {
			k := ctxKey{d.Agent, d.Session}
			if j, ok := out.lastOf[k]; ok {
				// The predecessor's own terms: a shared term adds its
				// frequency, a new one is appended.
				p := &out.docs[j]
				h := cw.share(a.ownDL, p.ownDL)
				for e := p.off; e < p.off+p.own; e++ {
					id := out.tid[e]
					tf := h.tf(out.otfs[e])
					if tf == 0 {
						continue
					}
					if out.stamp[id] == mark {
						out.tfs[out.at[id]] += tf
						continue
					}
					out.terms = append(out.terms, out.terms[e])
					out.tfs = append(out.tfs, tf)
					out.otfs = append(out.otfs, 0)
					out.tid = append(out.tid, id)
				}
				a.dl += h.dl(p.ownDL)
				a.pred = j
				p.succ = true
			}
			out.lastOf[k] = int32(i)
		}
		a.n = len(out.terms) - a.off
		out.docs = append(out.docs, a)
	}
	clear(scratch) // do not pin document text
	out.scratch, out.kscr = scratch[:0], ks[:0]
}

// inheritEarlier gives each document of chunk c that has no predecessor
// in the chunk the own terms of its predecessor in an earlier chunk of
// the batch, if any, as terms [xoff:xoff+xn] with chunk term ids (a term
// the chunk lacks is added to its table): profile lesson (Zipf corpus,
// 100 agents, so two turns of one session are rarely in one 128-document
// chunk): withContext did this for most documents, serially under the
// index lock, hashing every inherited term. The predecessor's chunk is
// read through its view, once its worker published it (a.own). Whether a
// predecessor was deleted meanwhile is for withContext to check (ids are
// not known yet): it redoes the chunk when one was.
func (x *Index) inheritEarlier(docs []*Doc, out *batchTerms, a *Analyzed, c int) {
	cw := x.contextWeights()
	for i, d := range docs {
		ad := &out.docs[i]
		if d.Session == "" || ad.pred != noPred {
			continue
		}
		k := ctxKey{d.Agent, d.Session}
		var pv *ownView
		var j int32
		pc := c - 1
		for ; pc >= 0; pc-- {
			a.waitOwn(pc)
			v := &a.orig[pc].view
			var ok bool
			if j, ok = v.lastOf[k]; ok {
				pv = v
				break
			}
		}
		if pv == nil {
			continue
		}
		out.crossFrom = min(out.crossFrom, pc)
		mark := -int32(i + 1) // analyzeOwn's marks are positive; a document's own (an empty one's off is the next one's)
		for e := ad.off; e < ad.off+ad.own; e++ {
			id := out.tid[e]
			out.stamp[id], out.at[id] = mark, int32(e)
		}
		p := &pv.docs[j]
		h := cw.share(ad.ownDL, p.ownDL)
		ad.xoff = len(out.terms)
		for e := p.off; e < p.off+p.own; e++ {
			tf := h.tf(pv.otfs[e])
			if tf == 0 {
				continue
			}
			t, th := pv.terms[e], pv.uhash[pv.tid[e]]
			id, added := out.ids.findOrAdd(t, th, out.uterms, out.uhash)
			if added {
				out.uterms = append(out.uterms, t)
				out.uhash = append(out.uhash, th)
				out.upre = append(out.upre, pv.upre[pv.tid[e]])
				out.stamp = append(out.stamp[:id], 0)
				out.at = append(out.at[:id], 0)
			}
			if out.stamp[id] == mark {
				out.tfs[out.at[id]] += tf
				continue
			}
			out.terms = append(out.terms, t)
			out.tfs = append(out.tfs, tf)
			out.otfs = append(out.otfs, 0)
			out.tid = append(out.tid, id)
		}
		ad.xn = len(out.terms) - ad.xoff
		ad.dl += h.dl(p.ownDL)
		ad.pred = predEarlier
	}
}

// parallelMin is the batch size from which a batch is analysed on several
// cores.
const parallelMin = 256

// Analyzed is the text analysis of a batch made by Analyze before the
// batch's ids are known: the engine analyses while the log makes the batch
// durable, then adds it with AddAnalyzed.
type Analyzed struct {
	x   *Index
	n   int
	bts []*batchTerms
	// orig is bts as analysed (withContextSlow replaces a chunk's batch in
	// bts; workers read orig's views); all are released with bts.
	orig  []*batchTerms
	ready []chan struct{} // ready[c] is closed once bts[c] is analysed; nil when analysed inline
	own   []chan struct{} // own[c] is closed once orig[c].view is published; nil when analysed inline
	wg    sync.WaitGroup  // the analysing goroutines
}

// Analyze starts the analysis of docs' texts, the costly part of Add,
// without touching the index, and returns at once; docs' ids are not read,
// and no other field of docs may change until the analysis is handed to
// AddAnalyzed with the same documents, or to Release (both wait for it).
// AddAnalyzed inserts each chunk as soon as it is analysed (profile: a lone
// writer waited for the whole batch's analysis after its log sync, then
// inserted on one core while the other idled).
func (x *Index) Analyze(docs []*Doc) *Analyzed { return x.startAnalysis(docs, false) }

// startAnalysis is the one analysis worker pool, behind both Analyze and
// Add: docs are cut into chunks of addChunk documents that workers (up to
// GOMAXPROCS, one below parallelMin documents) analyse in any order while
// the caller consumes them in order through wait. With inline set, a batch
// that would get a single worker is analysed on the caller's goroutine
// before startAnalysis returns: a one-record Add starts no goroutine.
func (x *Index) startAnalysis(docs []*Doc, inline bool) *Analyzed {
	a := &Analyzed{x: x, n: len(docs)}
	nChunks := (len(docs) + addChunk - 1) / addChunk
	a.bts = make([]*batchTerms, nChunks)
	for i := range a.bts {
		a.bts[i] = x.getBatch()
	}
	a.orig = slices.Clone(a.bts)
	workers := min(runtime.GOMAXPROCS(0), nChunks)
	if len(docs) < parallelMin {
		workers = min(1, nChunks)
	}
	if inline && workers <= 1 {
		for c := range nChunks {
			x.analyze(chunkOf(docs, c), a.bts[c], a, c)
		}
		return a
	}
	a.ready = make([]chan struct{}, nChunks)
	a.own = make([]chan struct{}, nChunks)
	for i := range a.ready {
		a.ready[i] = make(chan struct{})
		a.own[i] = make(chan struct{})
	}
	next := new(atomic.Int64)
	for range workers {
		a.wg.Go(func() {
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				x.analyze(chunkOf(docs, c), a.bts[c], a, c)
				close(a.ready[c])
			}
		})
	}
	return a
}

// chunkOf returns chunk c of a batch: docs[c*addChunk : (c+1)*addChunk].
func chunkOf(docs []*Doc, c int) []*Doc {
	return docs[c*addChunk : min((c+1)*addChunk, len(docs))]
}

// wait blocks until chunk c is analysed.
func (a *Analyzed) wait(c int) {
	if a.ready != nil {
		<-a.ready[c]
	}
}

// waitOwn blocks until chunk c's view is published.
func (a *Analyzed) waitOwn(c int) {
	if a.own != nil {
		<-a.own[c]
	}
}

// Release returns an analysis that will not be added, once its goroutines
// are done.
func (a *Analyzed) Release() {
	if a == nil {
		return
	}
	a.wg.Wait()
	for c, bt := range a.bts {
		if bt != a.orig[c] {
			a.x.putBatch(bt)
		}
	}
	for _, bt := range a.orig {
		a.x.putBatch(bt)
	}
	a.bts, a.orig = nil, nil
}

// addChunk is the number of documents analysed and inserted as one unit.
const addChunk = 128

func (x *Index) getBatch() *batchTerms {
	if bt, ok := x.batchPool.Get().(*batchTerms); ok {
		bt.reset()
		return bt
	}
	return &batchTerms{}
}

func (x *Index) putBatch(bt *batchTerms) {
	clear(bt.terms) // do not pin document text
	clear(bt.uterms)
	clear(bt.viewDocs)
	bt.view = ownView{}
	x.batchPool.Put(bt)
}
