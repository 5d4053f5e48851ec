// Package engine is lazymem's public surface: it joins the append-only log
// (package segment), the broad-retrieval index (package index) and the
// vector kernels (package vecmath) into one agent-memory store that
// retrieves broadly and constructs selectively.
//
//	db, err := engine.Open(dir, engine.Options{})          // hash embedder by default
//	id, err := db.Append(ctx, engine.Record{Agent: "a1", Session: "s1", Role: "user", Text: "..."})
//	res, err := db.Recall(ctx, engine.Query{Agent: "a1", Text: "what did we decide about the pool?"})
//	prompt := engine.FormatContext(res.Memories, 4000)
//
// # Store layout
//
//	dir/FORMAT  the store format version (see storeformat.go; absent: format 1; Open writes 2)
//	dir/log     segment.Log: the records (codec encoding), durable, the source of truth
//	dir/index   index.Index: postings and BM25, derived, rebuilt from the log's tail on Open
//	dir/cache   Pebble: embedding cache, derived, keyed by SHA-256/128 of the tenant + text, then embedder name
//	dir/LOCK    the store lock; dir/OWNER names its holder (lock.go)
//	dir/PINS    records exempt from retention (retention.go)
//	dir/FORGET  transient: a Forget in progress, finished by Open (forget_intent.go)
//	dir/core    Pebble: core memory units and their vectors, value signals, the consolidation bitmaps
//
// Every file goes through Options.FS (a Pebble vfs.FS, default the OS).
// docs/format/store.md lists what versions each structure.
//
// # Write path
//
// Append validates every field (errors name it: "lazymem: records[3].agent:
// missing"), encodes the record, appends it durably to the log, then adds it
// to the index. A batch is validated whole before anything is written. Nothing
// is embedded on the write path. Working memory (workmem.go) then embeds a
// live conversation's latest turns in the background, bounded (live turns
// only, the last 4 of an append call, 64 queued, 120 a minute), so that a question asked
// during a meeting finds them in the cache; an import of history embeds
// nothing (Options.WorkingMemory, Metrics.WorkingMemory).
//
// # Recall
//
//  1. Filter: agents, sessions, roles, metadata Where/Not and the time window
//     (optionally parsed from the query text: ParseTime) become one roaring
//     bitmap (index.Filter). A question naming the previous session or
//     meeting ("last time", "上次开会") narrows it to that session when the
//     session can answer (recall_previous.go).
//  2. Broad: BM25 top Candidates (default max(Options.Candidates, 5*K);
//     Options.Candidates is the embedder's recommendation, 50 for the
//     hash embedder) over the bitmap,
//     the records of a speaker the query asks about, a fallback pass over
//     the latest records of the window and session when BM25 found few,
//     plus the CurrentSession's latest SessionTurns (default 8) turns that
//     pass the filters. The BM25 query is the question without its time
//     expression and pleasantries, expanded by the built-in lexicon
//     (lexicon.txt), translated into the other script by the glossary
//     (glossary.txt: an English question searches the Chinese words of its
//     words, by their bigrams alone, and a Chinese question the English
//     ones), widened by the inflections the stemmer keeps apart (an
//     irregular verb's past forms after "did", irregular.txt; a word in
//     -ance/-ence and its -ed form; British and American -ise/-ize) and
//     optional synonyms.
//  3. Selective: a candidate's vector comes from the cache by record id
//     (ristretto in memory), else by the cache key the fact table holds
//     for it (Pebble on disk); fusion's inputs (time, question,
//     pleasantries) come from the fact table (facts.go), a per-process
//     cache of what earlier recalls read. Only the candidates left without
//     a vector or a fact are read from the log (GetMany, split over the
//     cores); each becomes a constructed memory text (Options.Construct,
//     default "Role: Text"), looked up by text, and the misses, with the
//     query, are embedded in one batched call. Concurrent recalls missing
//     the same text compute it once; that shared call runs detached from
//     the recall that started it (bounded by Options.EmbedTimeout), so one
//     client hanging up fails no other.
//     Dense scores are one vecmath.DotBatch of the unit-length query against
//     the unit-length candidates (cosine).
//  4. Fusion: a weighted sum of the normalized BM25 and cosine scores
//     (dense weight Options.DenseWeight: the embedder's recommendation,
//     embed.FusionAdvisor; 0.2 for the hash embedder, measured on LoCoMo;
//     DefaultDenseWeight, 0.5, for an embedder that recommends none),
//     or reciprocal-rank fusion (k = 60); records spoken by a speaker the
//     query names are boosted (x2; only the first named, the question's
//     subject, when it names several: recall_subject.go); in a when
//     question, records that state a time (x1.5, recall_when.go); a recency
//     prior (half-life 14 days, weight 0.2);
//     records made only of pleasantries rank below the others; when the
//     query asks about the current state, a turn that settles the
//     proposals just before it takes their place and a newer record
//     answering the same question passes an older one (recall_newer.go);
//     top K by vecmath.TopK.
//
// ModeSparse stops after step 2 (nothing embedded); ModeDense skips BM25
// and embeds and scores every filtered record (at most Query.MaxDenseScan,
// default DefaultMaxDenseScan, else ErrBudget): the eager-RAG reference the
// lazy mode is measured against.
//
// # Forgetting, retention, tenancy
//
// Forget (forget.go) removes records from the log, the index and the
// embedding cache atomically across a crash (an intent file, replayed by
// Open); records that inherited a forgotten turn's words through session
// context are indexed again. Compact (compact.go) purges the bytes from
// every file. Retention (retention.go) forgets records past their agent's
// window in the background, dropping whole log segments where it can;
// pinned records stay. Export and Backup are in export.go. An AgentDB
// (agent.go) is a handle scoped to one tenant, with quotas; it hides raw
// BM25 scores, which depend on every tenant's records.
//
// In the code a recall is a plan (recall.go) run through one stage per
// file: recall_parse.go (time expression, pleasantries, expansion,
// speakers; the lexicon in lexicon.go; holidays in recall_parse_holiday.go
// with the Chinese calendar's table lunar.txt; speakers named otherwise
// than exactly, by nickname, in pinyin (pinyin.txt), by transliteration
// (translit.txt), by one word or by the name the meetings address them
// with, in recall_nickname.go, recall_pinyin.go, recall_latin.go and
// recall_address.go over the role maps of recall_rolenames.go; the
// glossary in glossary.go),
// recall_filter.go, recall_source.go (the candidate sources, one type each:
// BM25, a speaker's records, the fallback pass, the session chain),
// recall_selective.go (facts, construct, embed through the cache, cosine;
// facts.go the fact table, recall_fetch.go the log reads),
// recall_fuse.go, recall_assemble.go, and recall_dense.go for ModeDense.
// The transcripts under testdata/planner print what each stage produced
// for small stores.
//
// # Value and core memory
//
// Recall counts what it touched and Feedback what a user judged, in memory;
// a background goroutine flushes both to dir/core (core.go, value.go,
// feedback.go). Records are scored and labelled by package consolidate's
// rules lazily (10-100 µs a record is too slow for the append path): when
// a consolidation covers them, or in an optional background pass. The
// triggers (value threshold, top k PromoteTopK times, positive feedback,
// EndSession, an idle timeout, Consolidate) queue records; a consolidation
// turns the queue into units, links supersession, embeds and stores them
// (consolidation.go). Recall searches the units through the records they
// cite and fuses them with raw records (recall_source_core.go); Query.Tier
// narrows it to one kind.
package engine
