// Package zhmem is a Chinese long-term memory evaluation in the spirit of
// MemoryBank (Zhong et al., 2023): thirty days of hand-written chats between
// a user and her assistant, and probing questions whose answers sit in
// specific turns (testdata/README.md describes the data). A second set,
// testdata/second (other people and topics, written before it was first
// measured), checks whether ranking rules chosen on the first generalise;
// a third, testdata/third (written the same way once the second was
// in-sample too), checks the rules chosen on both, with questions that
// name people by the names the chat defines and questions about an
// earlier state (docs/benchmarks/zh-sets.md); a fourth, testdata/fourth
// (an assistant chat mixed with a family and a work group chat, questions
// of ten kinds: who said, when, facts, preferences, plans, changes,
// paraphrases sharing no word), is the out-of-sample check of the
// query-understanding changes measured after it was written.
//
// Load reads a directory holding
//
//	chats.jsonl      {"agent", "session", "role", "time", "text", "meta": {"key": ["d07-03"]}}
//	questions.jsonl  {"id", "text", "kind", "evidence": ["d07-03", ...], "note"}
//
// and checks it: every record has one key, no key repeats, every question
// has evidence and every evidence key names a record.
//
// Evaluate opens a fresh store, appends every record, asks every question
// of the set's agent with K = max(Ks), and reports evidence recall: R@k of
// a question is the share of its evidence records among the top k
// memories, averaged over the questions, overall and per kind. Questions
// carry no time expression, so no time parsing is involved; the query's
// Now is the day after the last record.
//
// Embedders: the default hash embedder is lexical and works on Chinese
// through character n-grams. USE-lite (engine/embed/use) is an English
// model: its SentencePiece vocabulary has almost no Chinese pieces, so on
// this set its dense evidence is close to noise; it is measured because it
// is the project's semantic embedder, not because it should help here. A
// multilingual model runs through an OpenAI-compatible endpoint ("lazymem
// evalzh --embedder openai:MODEL@URL"); none runs in process. The gloss
// embedder (engine/embed/gloss: CC-CEDICT glosses embedded by USE-lite)
// is Chinese-capable in process; TestGlossSet measures it beside the hash
// embedder. Config's
// DenseWeight and Candidates matter for such a model: TestOracleCeiling
// measures the set with a perfect dense embedder, which the engine's
// defaults hold to R@1 0.59 (docs/benchmarks/zh-embedders.md).
package zhmem
