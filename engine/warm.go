package engine

// warmTables parses the tables every recall consults and the package
// builds on first use: the lexicon, the category lexicon, the stop words,
// the query analyser, the feedback frame and the question forms. Parsed
// lazily, they cost a new process's first recall ~2.4 ms of its 9 ms
// (TestLazyInitDiag: lexicon 0.86 ms, categories 0.80, feedback frame
// 0.45, question forms 0.28; TestNewProcessRecallDiag: the 1M Zipf
// agent query's filter stage 1.6-3.8 ms in a new process against ~0.1 ms
// in one that has recalled before). Open calls it on a goroutine of its
// own, beside the log's and the index's loading: a second Open in the
// process finds them parsed.
func warmTables() {
	theLexicon().questionForm()
	theCategories()
	stopSet()
	queryAnalyzer()
	feedbackFrame()
}
