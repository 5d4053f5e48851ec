// Package index holds lazymem's broad-retrieval structures: roaring bitmap
// postings for metadata and time, and a BM25 inverted index with top-k
// pruning that can be restricted to a filter bitmap.
//
// # Model
//
// Documents (records) carry a dense, increasing uint64 id assigned by the
// log; the index stores ids as uint32, so an index holds at most 2^32-1
// records (a documented limit; Add rejects larger ids with ErrIDRange).
//
// An Index is a list of immutable segments covering contiguous ascending id
// ranges, plus one mutable segment for fresh documents. Flush (or, every
// Options.FlushDocs documents, a background goroutine) seals the mutable
// segment into an immutable file; another background goroutine merges runs
// of MergeFactor neighbouring segments of the same size tier, dropping
// deleted documents, and once nothing has been written for
// Options.SettleAfter it settles the index: the newest sealed segments, up
// to Options.SettleMaxDocs documents, become one, so that an index at rest
// is searched as one segment. Close stops both without flushing: the next Open
// re-indexes the unflushed tail from the log. Field postings (agent, session, role, every metadata
// key/value), the time index and the live set are global in memory and
// rebuilt from the segments on Open; the tail the segments lack is re-indexed
// from the Source (the log). Open never claims an id above Source.LastID().
//
// Reindex indexes a few live documents again (with SessionContext, after a
// Delete, the documents that inherited a deleted one's words) into an
// amendment segment that every search reads beside the others, while their
// older postings stay void in their own segments (amend.go); the MANIFEST
// keeps their ids and Open analyses them again from the Source.
//
// # Search
//
// Search is BM25 (k1, b configurable; idf = ln(1 + (N-df+0.5)/(df+0.5)))
// with N, avgdl and df computed over live documents across all segments.
// Per segment it runs block-max MaxScore over the postings (postingsIter:
// Next/Seek/At/TF/Err, a concrete reusable iterator: no interface call per
// posting), or, when a filter bitmap holds few of the segment's documents
// compared with the query's postings (Options.FilterDrivenRatio), scores the
// filter's documents directly with block-max skipping. A MaxScore pass under
// a filter of comparable size first copies the filter's documents of the
// segment into a bitset (filter.go), so each candidate costs a bit test. A
// document's score is always summed in the same (sorted query term) order,
// so the pruned search and SearchExhaustive return bit-identical scores.
// Each query looks each term up once per segment, through the segment's
// in-memory hash of its term table (termdict.go).
// SearchWhere takes a Filter and builds it under the search's read lock,
// reading a one-value filter's bitmap in place instead of copying it. A
// clause listing every agent reads the union of all agents the index
// keeps in memory (rebuilt at Open, not stored) instead of computing it. A
// CJK query's characters that one of its bigrams covers are secondary
// terms (search_secondary.go): they count in every score, but a record
// holding nothing else of the query is ranked only when fewer than k
// records hold the rest; SearchExhaustive follows the same rule.
//
// # On-disk layout
//
// MANIFEST (replaced atomically: temp + fsync + rename + fsync dir):
//
//	+----------+---------+---------+-------+---------------------------+---------+------------+--------+----------+--------+
//	| LZMMAN01 | ver u32 | nextNum | nSegs | nSegs x {num u64, lo, hi} | tombLen | roaring    | sigLen | analyzer | crc32c |
//	| 8 bytes  | = 1     | u64     | u32   | ascending disjoint ranges | u32     | tombstones | u32    | signature| u32    |
//	+----------+---------+---------+-------+---------------------------+---------+------------+--------+----------+--------+
//
// Version 2 (written only when Reindex amended documents) has amendLen u32
// and the amended ids' roaring bitmap between the tombstones and sigLen.
//
// Segment file NNNNNN.lzi (read whole and used in place):
//
//	+--------------------------------------------------------------------+
//	| header 32B: "LZMIDX01" | ver u32=5 | flags u32 | lo | hi | nDocs | 0 |
//	| present   : roaring bitmap of the segment's ids                    |
//	| lens      : (hi-lo+1) x u32 doc length (0 = absent)                |
//	| times     : (hi-lo+1) x i64 unix nanos                             |
//	| fields    : nKeys u32 {key, nVals u32 {val, bmLen u32, roaring}}   |
//	| strings   : sorted term bytes                                      |
//	| term table: nTerms x 28B {strOff, df, last u32; bound 8B;          |
//	|             postOff u48; strLen u16 (0xffff: to the next strOff)}  |
//	|             bound: df <= 128: the block's corners aTF, aDL, bTF,   |
//	|             minDL u16; else maxTF, minDL u32                       |
//	| postings  : per term of df > 128: ceil(df/128) x 16B block metas   |
//	|             {last doc, data off u32; corners aTF, aDL, bTF, minDL  |
//	|             u16}; then per block (a term of df <= 128: its one     |
//	|             block, no meta):                                       |
//	|             first doc delta uvarint; width g u8, (n-1) x g bits    |
//	|             gap-1; width w u8, n x w bits tf-1 (no lengths: the    |
//	|             lens column holds them)                                |
//	| footer 72B: 7 section offsets u64 | sumLen u64 | crc32c | magic    |
//	+--------------------------------------------------------------------+
//
// Versions 1 (block metas {last, off, maxTF u32, minDL u32}), 2 (term
// entries {strOff, strLen, df, maxTF, minDL u32; postOff u64}, every term
// with block metas, uvarint tfs), 3 (blocks of uvarint doc deltas and
// packed tfs) and 4 (each block followed by its docs' lengths: base
// uvarint, width l u8, n x l bits length - base) are still read; flushes
// and merges write version 5, so older files go away at their first merge. Wire constants
// (never change) are marked in segment.go, postings.go and manifest.go;
// docs/format/index.md has the full drawing and the rules.
//
// # Files
//
// The code is split by role: index.go (types, Open, Close, Metrics),
// recover.go (reading the manifest and segments at Open, rebuilding the
// tail from the log), repair.go (the segments Open drops, reported in
// Metrics.Repairs), analyze.go (text analysis of a batch on a worker
// pool), add.go (validation and insertion into the mutable segment),
// flush.go (freezing and sealing the mutable segment, the manifest write),
// delete.go (tombstones), amend.go (Reindex), merge.go (the merge policy and merging),
// settle.go (the merge of an index left alone),
// segment.go and segment_build.go (a segment read and written),
// postings.go and postings_decode.go (a posting list's blocks written and
// read), unpack_amd64.go, unpack_tables_amd64.go and unpack_amd64.s (the
// AVX-512 kernels that unpack a block's doc gaps and tfs sixteen values at
// a time, the AVX2 ones eight, held by the tests to postings_decode.go's
// Go loops, which every other CPU runs), termdict.go (a sealed segment's
// term hash), search.go and heap.go (BM25 top-k),
// exhaustive.go (the unpruned reference search), manifest.go (the
// MANIFEST format and file helpers).
//
// # Time filters
//
// Ids are mostly time-ordered. The time index keeps per id the running
// maximum of document times (non-decreasing, so [Since, Until) becomes an
// id range by two binary searches) and the exact times of "late" documents
// (time below the running maximum on arrival), which are removed from the
// range and re-added when they match. No record is read.
package index
