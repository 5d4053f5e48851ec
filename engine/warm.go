package engine

import "runtime"

// warmTables parses the tables every recall consults and the package
// builds on first use: the lexicon, the category lexicon, the stop words,
// the query analyser, the feedback frame and the question forms. Parsed
// lazily, they cost a new process's first recall ~2.4 ms of its 9 ms
// (TestLazyInitDiag: lexicon 0.86 ms, categories 0.80, feedback frame
// 0.45, question forms 0.28; TestNewProcessRecallDiag: the 1M Zipf
// agent query's filter stage 1.6-3.8 ms in a new process against ~0.1 ms
// in one that has recalled before). Open calls it on a goroutine of its
// own, beside the log's and the index's loading: a second Open in the
// process finds them parsed. The name tables the speaker rules added
// later cost the same kind of first recall (a scratch timing after the
// others: pinyin readings 0.59-0.71 ms, transliterations 0.14-0.24 ms,
// the lunar calendar 0.03-0.10 ms; in a page-fault profile of six new
// processes' first recalls on the 1M Zipf store, 33 of their 454 faults).
func warmTables() {
	theLexicon().questionForm()
	theCategories()
	stopSet()
	queryAnalyzer()
	feedbackFrame()
	theGlossary()
	thePinyin()
	theTranslit()
	theLunar()
	theIrregular()
}

// collectOpenGarbage runs a garbage collection at the end of Open, unless
// Options.KeepOpenGarbage is set or the store holds no record.
//
// A new process's first recall allocates a few megabytes of buffers and
// small objects. Right after Open the heap's free memory is what it has
// never touched, since Open's garbage (the index's and the log's loading
// buffers) is not yet swept: every page the recall allocates from is then
// a first touch, a page fault. Collected at Open, that garbage is free
// memory the recall reuses. On the 1M Zipf store
// (TestNewProcessRecallDiag, 25 processes a variant, two rounds
// alternated): Zipf agent first recall p50 9.90 and 9.77 ms without, 6.39
// and 6.09 ms with, minor page faults 544 and 535 -> 187 and 180; Open's
// own time within its noise (692-694 -> 687-710 ms); BenchmarkRecallZipf's
// cache=new-process, alternated twice, 60 recalls a cell: agent p50 9.83
// and 9.52 -> 8.06 and 6.66 ms, session 5.80 and 5.62 -> 3.89 and 3.79 ms
// (a machine whose page fault costs ~10 µs). Running the recall's code
// once at Open as well (a BM25 search, a segment read, two texts embedded)
// gained 0.3 ms without the collection and nothing with it, and was not
// kept. The collection blocks only Open's caller, for one cycle over the
// process's live heap (~100-130 MB at 1M records in a process holding only
// the store; more where the caller holds more): callers that open stores
// while latency-critical work runs beside them, or open many small ones,
// can set KeepOpenGarbage.
func (db *DB) collectOpenGarbage() {
	if !db.opts.KeepOpenGarbage && db.log.Next() > 1 {
		runtime.GC()
	}
}
