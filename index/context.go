package index

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// Session context (Options.SessionContext): a document is indexed with its
// own terms plus the terms of the previous live document of the same agent
// and session. Only BM25 sees them: the stored text is unchanged. In a
// conversation the answer to a question often repeats none of its words,
// while the turn it answers does ("Which agency did you pick?" / "The one
// in Denver."); with the previous turn's terms the answer matches.
//
// Inherited words may weigh less than a document's own
// (Options.ContextWeight), as in BM25F with two fields: own terms count
// contextEighths times in the term frequency and the length, inherited ones
// round(8*ContextWeight) times, and the search multiplies k1 by the own
// weight, so that the weighting changes a score only through what is
// inherited (and through the average length, which the inherited terms
// are part of). A weaker inheritance ranks a statement above a short reply
// that inherits its words ("OK, no problem."), which length normalisation
// would otherwise favour.
//
// With Options.ContextSample a document inherits a proportional sample of
// its predecessor no longer than its own text: with own length l and a
// predecessor of own length p, each inherited frequency is scaled by
// min(l, p)/p (rounded in sixteenths of an own occurrence; a term rounded
// to 0 is not inherited) and the document's length grows by min(l, p)
// instead of p. The inherited words then have the predecessor's own
// density, never more, and are never more than half of the document: a
// short reply does not score above the statement it follows on the
// statement's words, and a short statement after a long turn is not
// lengthened by all of it (measured in docs/benchmarks/context-field.md).
//
// The expansion is a pure function of the log: the predecessor is the live
// document with the greatest id below the document's own among those of its
// agent and session, so re-indexing the log (Open after a crash, a repaired
// index) indexes every document with the same terms it had, except where the
// predecessor was deleted in between: then the rebuilt document takes the
// live one before it, and the deleted text's terms leave the index.

// TextSource is a Source that also returns one document's text. Open keeps
// it to find a document's predecessor when the session's last document is
// not in memory (after a restart, or evicted); without it such documents are
// indexed without context.
type TextSource interface {
	Source
	Text(id uint64) (string, error)
}

// maxContextSessions bounds the sessions whose last document the index keeps
// analysed in memory; the others are looked up again when they continue.
const maxContextSessions = 1 << 14

// prevDoc is the analysed text of the last document of one agent+session.
type prevDoc struct {
	id    uint32
	dl    uint32
	terms []string
	tfs   []uint32
}

// contextState is what SessionContext keeps between batches. It is guarded
// by Index.addMu: batches are expanded in id order.
type contextState struct {
	last   map[ctxKey]*prevDoc // agent+session -> last document
	seen   map[string]int32
	errors atomic.Int64 // predecessors that could not be read
}

// ctxKey is a document's agent and session: its predecessor is the previous
// live document with the same key (a struct key: no string to build per
// lookup).
type ctxKey struct{ agent, session string }

func contextKey(d *Doc) ctxKey { return ctxKey{d.Agent, d.Session} }

// withContext completes the session context of a chunk that analyze
// expanded within its batch: the first document of each session in the
// batch takes the terms of its predecessor from an earlier batch (the last
// document remembered for its session, or one looked up in the index), as
// extra terms in bt. Callers hold x.addMu, and docs are in id order after
// everything indexed so far; analyze took predecessors from documents of
// the batch from id from on.
//
// A chunk re-indexed by a rebuild may hold deleted documents, and a
// document of the batch may have been deleted since it was analysed; a
// deleted document is never anyone's predecessor: withContextSlow redoes
// such a chunk one document at a time.
func (x *Index) withContext(docs []*Doc, bt *batchTerms, from uint64) *batchTerms {
	cw := x.contextWeights()
	cs := &x.ctx
	if cs.last == nil {
		cs.last = make(map[ctxKey]*prevDoc)
		cs.seen = make(map[string]int32)
	}
	x.mu.RLock()
	tombs := !x.tomb.IsEmpty() && x.tomb.IntersectsWithInterval(min(from, docs[0].ID), docs[len(docs)-1].ID+1)
	x.mu.RUnlock()
	if tombs {
		return x.withContextSlow(docs, bt)
	}
	for i, d := range docs {
		a := &bt.docs[i]
		if d.Session == "" || a.pred != noPred {
			continue
		}
		p := x.prevOf(d, docs[0].ID)
		if p == nil {
			continue
		}
		a.xoff, a.xh = len(bt.terms), len(bt.xhash)
		h := cw.share(a.ownDL, p.dl)
		addPrevChunk(bt, i, a.off, a.own, p, h)
		a.xn = len(bt.terms) - a.xoff
		a.dl += h.dl(p.dl)
	}
	clear(cs.seen)
	return bt
}

// addPrevChunk is addPrev for document i of a chunk that analyze made: its own
// terms are marked by chunk term id (stamp and at, free once the chunk is
// analysed), and p's terms are found in the chunk's table, with no map
// built per document (profile: addPrev's map was a tenth of the serial
// insert). p keeps no hashes: 8 bytes a term of every remembered session
// showed in the loaded store's heap.
func addPrevChunk(bt *batchTerms, i, off, n int, p *prevDoc, h inherit) {
	// analyze's marks are positive; each document has its own (not its
	// off: an empty document's is the next one's, which inheritEarlier
	// may have marked already)
	mark := -int32(i + 1)
	for e := off; e < off+n; e++ {
		id := bt.tid[e]
		bt.stamp[id], bt.at[id] = mark, int32(e)
	}
	for j, t := range p.terms {
		tf := h.tf(p.tfs[j])
		if tf == 0 {
			continue
		}
		th := termHash(t)
		if id := bt.ids.find(t, th, bt.uterms); id >= 0 && bt.stamp[id] == mark {
			bt.tfs[bt.at[id]] += tf
			continue
		}
		bt.xhash = append(bt.xhash, th)
		bt.terms = append(bt.terms, t)
		bt.tfs = append(bt.tfs, tf)
		bt.otfs = append(bt.otfs, 0)
		bt.tid = append(bt.tid, -1)
	}
}

// addPrev merges p's terms into the document whose own terms are
// bt.terms[off:off+n]: a term it has gains h's share of p's frequency, a
// new one is appended to bt (own frequency 0, no chunk term id).
func (cs *contextState) addPrev(bt *batchTerms, off, n int, p *prevDoc, h inherit) {
	clear(cs.seen)
	for e := off; e < off+n; e++ {
		cs.seen[bt.terms[e]] = int32(e)
	}
	for j, t := range p.terms {
		tf := h.tf(p.tfs[j])
		if tf == 0 {
			continue
		}
		if k, ok := cs.seen[t]; ok {
			bt.tfs[k] += tf
			continue
		}
		bt.terms = append(bt.terms, t)
		bt.tfs = append(bt.tfs, tf)
		bt.otfs = append(bt.otfs, 0)
		bt.tid = append(bt.tid, -1)
	}
}

// prevOf returns the predecessor of d, the first document of its session
// in the chunk starting at id lo: the session's remembered last document if
// it is still live, otherwise one looked up in the index.
func (x *Index) prevOf(d *Doc, lo uint64) *prevDoc {
	p := x.ctx.last[contextKey(d)]
	if p != nil && p.id < uint32(lo) && !x.isLive(p.id) {
		p = nil
	}
	if p == nil {
		p = x.lookupPrev(d)
	}
	return p
}

// rememberChunk makes the last document of each session in the chunk the
// session's remembered one, after withContext's fast path (which saw no
// deleted document in the chunk).
func (x *Index) rememberChunk(docs []*Doc, bt *batchTerms) {
	if bt.slow {
		return // withContextSlow remembered as it went
	}
	for i, d := range docs {
		a := &bt.docs[i]
		if d.Session == "" || a.succ {
			continue
		}
		x.remember(contextKey(d), uint32(d.ID), a.ownDL, bt.terms[a.off:a.off+a.own], bt.otfs[a.off:a.off+a.own])
	}
}

// withContextSlow returns bt's documents, each with its own terms and its
// predecessor's, in a batch from the pool (Analyzed.Release puts both
// back: workers of later chunks may still read bt's view). It skips
// deleted documents as predecessors, one document at a time: the chunk is
// being re-indexed with tombstones in it.
func (x *Index) withContextSlow(docs []*Doc, bt *batchTerms) *batchTerms {
	cs := &x.ctx
	out := x.getBatch()
	out.slow = true
	cw := x.contextWeights()
	w := cw.own
	for i, d := range docs {
		a := bt.docs[i]
		own, ownTF := bt.terms[a.off:a.off+a.own], bt.otfs[a.off:a.off+a.own]
		na := analyzed{off: len(out.terms), dl: w * a.ownDL, own: a.own, ownDL: a.ownDL, pred: noPred}
		out.terms = append(out.terms, own...)
		for _, tf := range ownTF {
			out.tfs = append(out.tfs, w*tf)
		}
		out.otfs = append(out.otfs, ownTF...)
		for range own {
			out.tid = append(out.tid, -1)
		}
		if d.Session != "" {
			// A predecessor from this chunk is not inserted yet, and not
			// deleted (deleted ones are never remembered).
			if p := x.prevOf(d, docs[0].ID); p != nil {
				h := cw.share(a.ownDL, p.dl)
				cs.addPrev(out, na.off, len(own), p, h)
				na.dl += h.dl(p.dl)
			}
			if !x.isDeleted(uint32(d.ID)) {
				x.remember(contextKey(d), uint32(d.ID), a.ownDL, own, ownTF)
			}
		}
		na.n = len(out.terms) - na.off
		out.docs = append(out.docs, na)
	}
	clear(cs.seen)
	return out
}

// remember makes id the last document of key.
func (x *Index) remember(key ctxKey, id, dl uint32, terms []string, tfs []uint32) {
	cs := &x.ctx
	p := cs.last[key]
	if p == nil {
		if len(cs.last) >= maxContextSessions {
			for k := range cs.last { // evict one session (any)
				delete(cs.last, k)
				break
			}
		}
		p = &prevDoc{}
		// The key outlives the batch: do not pin the caller's strings.
		cs.last[ctxKey{strings.Clone(key.agent), strings.Clone(key.session)}] = p
	}
	p.id, p.dl = id, dl
	p.terms = append(p.terms[:0], terms...)
	p.tfs = append(p.tfs[:0], tfs...)
}

func (x *Index) isDeleted(id uint32) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.tomb.Contains(id)
}

func (x *Index) isLive(id uint32) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live.Contains(id)
}

// lookupPrev finds d's predecessor among the indexed documents and analyses
// its text; nil when there is none or it cannot be read.
func (x *Index) lookupPrev(d *Doc) *prevDoc {
	ts, ok := x.src.(TextSource)
	if !ok || d.Agent == "" || d.ID == 0 {
		return nil
	}
	x.mu.RLock()
	sb, ab := x.fields[keySession][d.Session], x.fields[keyAgent][d.Agent]
	var prev uint32
	found := false
	if sb != nil && ab != nil {
		bm := sb.Clone()
		bm.And(ab)
		bm.And(x.live)
		if r := bm.Rank(uint32(d.ID - 1)); r > 0 {
			if v, err := bm.Select(uint32(r - 1)); err == nil {
				prev, found = v, true
			}
		}
	}
	x.mu.RUnlock()
	if !found {
		return nil
	}
	text, err := ts.Text(uint64(prev))
	if err != nil {
		x.ctx.errors.Add(1)
		return nil
	}
	terms := x.opts.Analyzer.Terms(nil, text)
	p := &prevDoc{id: prev, dl: uint32(len(terms))}
	at := map[string]int{}
	for _, t := range terms {
		if k, ok := at[t]; ok {
			p.tfs[k]++
			continue
		}
		at[t] = len(p.terms)
		p.terms = append(p.terms, t)
		p.tfs = append(p.tfs, 1)
	}
	return p
}

// contextEighths is the scale of Options.ContextWeight: a document's own
// terms count contextEighths times in its term frequencies and length, an
// inherited term round(8*ContextWeight) times (at least once). Integer
// weights keep the postings' frequencies integers.
const contextEighths = 8

// sampleScale is the weight of own terms with Options.ContextSample: an
// inherited frequency is rounded to a sixteenth of an own occurrence.
const sampleScale = 16

// ctxWeights is how a document's own and inherited terms enter its
// postings: own terms count own times in their frequencies and in the
// document's length, inherited ones inh times; with sample, only a share
// of the predecessor is inherited (share).
type ctxWeights struct {
	own, inh uint32
	sample   bool
}

// inherit is the part of one predecessor a document takes: each of the
// predecessor's own frequencies times inh*n/d, and inh*n words of length.
type inherit struct{ inh, n, d uint32 }

// share returns what a document of own length ownDL inherits from a
// predecessor of own length predDL: all of it, or with sample a share of
// min(ownDL, predDL)/predDL.
func (w ctxWeights) share(ownDL, predDL uint32) inherit {
	if !w.sample || ownDL >= predDL {
		return inherit{w.inh, 1, 1}
	}
	return inherit{w.inh, ownDL, predDL}
}

// tf is the indexed frequency of a term the predecessor holds tf times;
// 0 means the term is not inherited.
func (h inherit) tf(tf uint32) uint32 {
	if h.n == h.d {
		return h.inh * tf
	}
	return uint32((uint64(h.inh)*uint64(tf)*uint64(h.n) + uint64(h.d)/2) / uint64(h.d))
}

// dl is the length the predecessor adds, predDL its own length.
func (h inherit) dl(predDL uint32) uint32 {
	if h.n == h.d {
		return h.inh * predDL
	}
	return h.inh * h.n
}

// contextWeights returns the weights of own and inherited terms: 1 and 1
// without session context or with ContextWeight 1 and no sampling (the
// layout of an index without weighting).
func (x *Index) contextWeights() ctxWeights {
	if !x.opts.SessionContext {
		return ctxWeights{own: 1, inh: 1}
	}
	scale := uint32(contextEighths)
	if x.opts.ContextSample {
		scale = sampleScale
	}
	inh := uint32(math.Round(float64(scale) * x.opts.ContextWeight))
	if inh >= scale && !x.opts.ContextSample {
		return ctxWeights{own: 1, inh: 1}
	}
	return ctxWeights{own: scale, inh: max(min(inh, scale), 1), sample: x.opts.ContextSample}
}

// ownWeight is the weight of a document's own terms.
func (x *Index) ownWeight() uint32 {
	return x.contextWeights().own
}

// contextSignature is appended to the analyzer signature in the manifest:
// segments built with another setting are rebuilt from the log. "+ctx1":
// inherited terms weigh as much as own ones; "+ctx2-<own>/<inherited>":
// weighted; "+ctx3-<own>/<inherited>": a sample (ContextSample).
func contextSignature(on bool, w ctxWeights) string {
	switch {
	case !on:
		return ""
	case w.sample:
		return fmt.Sprintf("+ctx3-%d/%d", w.own, w.inh)
	case w.own == w.inh:
		return "+ctx1"
	}
	return fmt.Sprintf("+ctx2-%d/%d", w.own, w.inh)
}

// signature is what the manifest records of the rules the segments were
// built with: the analyzer's and the session-context setting.
func (x *Index) signature() string {
	return analyzerSignature(x.opts.Analyzer) + contextSignature(x.opts.SessionContext, x.contextWeights())
}
