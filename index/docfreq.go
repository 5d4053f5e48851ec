package index

// DocFreq returns the number of live documents and, for each of terms (as
// the analyzer emits them: not analysed again), how many live documents
// hold it, own or inherited through session context: the statistics BM25's
// idf reads. dst, when large enough, is reused. A caller weighting terms by
// rarity (pseudo-relevance feedback) reads them in one call under one lock.
func (x *Index) DocFreq(terms []string, dst []uint64) (n uint64, df []uint64, err error) {
	df = append(dst[:0], make([]uint64, len(terms))...)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return 0, df, ErrClosed
	}
	var ti termInfo
	var it postingsIter
	segs := x.searchSegs()
	for i, t := range terms {
		for _, seg := range segs {
			if seg.term(t, &ti) {
				df[i] += uint64(ti.df) - uint64(seg.deletedDF(t, &ti, x.tombOf(seg), &it))
			}
		}
	}
	return x.nLive, df, nil
}
