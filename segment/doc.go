// Package segment is lazymem's durable append-only log of opaque records,
// built on Pebble (github.com/cockroachdb/pebble/v2).
//
// Records get dense, monotonic uint64 ids starting at 1. An append returns
// only once the record is in Pebble's WAL and the WAL is synced; concurrent
// appenders are group-committed: the first waiter leads, writes every
// pending batch in one Pebble batch with one sync, assigns ids in that
// order and hands leadership to the next waiter. Because ids follow WAL
// order, a crash can only lose a suffix of unacknowledged records: after
// recovery ids are still dense.
//
// Fresh records live in the tail, one Pebble key each. A background sealer
// packs the oldest tail records into a segment once the tail holds
// Options.SegmentRecords records or Options.SegmentBytes bytes, compresses
// it (zstd by default, s2 or none) and, in one atomic batch, writes the
// segment and its summary and deletes the tail keys it replaces. Reads look
// up the segment by binary search over the in-memory summaries and keep
// in one LRU cache decompressed segments (Get, Scan) and the single records
// GetMany read (a recall's candidates: one record of a segment each).
//
// # Keyspace
//
// Every key is one prefix byte and, for per-record and per-segment keys, a
// big-endian uint64 so keys sort by id. The prefixes and layouts are stored
// on disk: never change them.
//
//	key                     value
//	'r' id:8                state:1 (0 live, 1 deleted) | payload        tail record
//	's' first:8             segment value (below)                        sealed segment
//	'x' first:8             count | raw | stored | dead   (uvarints)     segment summary
//	'd' id:8                (empty)                                      tombstone of a sealed record
//	'y' id:8                zstd dictionary | crc32c                     the log's dictionary (dict.go)
//	'z' id:8                n | id deltas | crc32c                       the records whose text dictionary id holds (dictrebuild.go)
//	'n' id:8                name | crc32c                                agent, session, role or metadata string (names.go)
//	"mnext"                 next id:8 BE                                 written with every append group
//	"msealed"               sealed boundary:8 BE                         written with every seal
//
// # Segment value
//
//	+---------+--------+---------+----------+------------------------+----------+
//	| version | algo   | count   | body_len | compressed body        | crc32c   |
//	| 1 byte  | 1 byte | uvarint | uvarint  | (algo: 0 none, 1 zstd, | 4 bytes  |
//	| 1 or 2  |        |         |          |  2 s2)                 | LE       |
//	+---------+--------+---------+----------+------------------------+----------+
//	crc32c (Castagnoli) covers every byte before it.
//
//	version 1, rows (body_len bytes once decompressed):
//	+----------------------------------+-----------------------------------+
//	| slot * count (uvarint)           | payloads, concatenated in id order |
//	| 0 = deleted, else len(payload)+1 |                                   |
//	+----------------------------------+-----------------------------------+
//
// Record first+i of the segment is slot i. A deleted record keeps its slot
// so ids stay dense.
//
// Version 2, columns: when every live payload of the segment is an engine
// record (codec version 1, minimal lengths), its fields are stored column
// by column and rebuilt byte for byte when read (columns.go has the
// drawing); any other segment is version 1. Version 3, framed columns (what
// the sealer now writes in place of version 2): the version-2 body's
// head (every column but the texts) and its texts in 4 KiB frames, each
// compressed and checksummed on its own, with the log's zstd dictionary
// (frames.go, dict.go); GetMany decompresses only the head and the frames
// its records lie in, and a damaged frame loses only its records. Version
// 4: version 3 whose head refers to agents,
// sessions, roles and metadata strings by their id in the log's name table, each name
// stored once in the log (names.go); Compact deletes the names no segment
// uses any more. Version 5: version 4 whose text frames hold the text as
// word tokens, a word of the log's vocabulary as its id (words.go);
// Compact deletes the words no frame uses any more. Version 6 (what the
// sealer writes once its first 512 KiB of text is sampled): version 5
// whose head's times and text lengths start with a mode byte and may be
// bit-packed (packed.go has the drawing):
//
//	times, mode 1:     1 | varint t0 | uvarint g | varint lo | w:1 | bits
//	                   delta i = t_i - t_{i-1} = g * (lo + u_i)
//	text_lens, mode 1: 1 | uvarint lo | w:1 | bits; length i = lo + u_i
//	mode 0:            0 | versions 2-5's varints
//	bits:              the u_i, w bits each, least significant bit first
//
// Readers take all six versions.
//
// # Deletion and retention
//
// Delete marks tail records deleted in place and writes a tombstone for
// sealed ones; reads see the deletion at once. Compact rewrites the
// affected segments without the deleted bytes and makes Pebble flush and
// compact, so the bytes leave the files on disk. Pebble normally recycles
// obsolete WAL files (old bytes inside); the log turns that off and purges
// Pebble's archive of obsolete files itself. DropBefore removes whole
// segments for retention.
//
// # Size on disk
//
// Every record is in Pebble's WAL raw until its memtable is flushed: the
// memtable is small (Options.MemTableBytes, 4 MiB), Pebble cuts its
// sstables at key-prefix boundaries so that compactions do not rewrite
// older segments and compresses its blocks with zstd (the tail's records,
// the name table, the vocabulary), and Close flushes the memtable when the WAL is healthy
// (closeflush.go). The log on disk stays near its segments' size during a
// load and after Close, not only after the next Open.
//
// # Corruption
//
// A segment whose checksum, header or layout fails verification, or whose
// Pebble block fails Pebble's checksum, is reported as a *CorruptionError
// naming the segment's first id and the byte offset; it is never skipped
// silently. Other segments stay readable. Verify checks every segment.
// Pebble's own reports of damaged blocks are counted (Metrics) and never
// end the process: every Pebble store uses QuietLogger, whose doc lists
// what Pebble does after a fatal report (where going on would damage the
// store, Pebble's goroutine is parked and the log refuses writes until the
// process restarts). A parked goroutine holds Pebble's mutex and its flush
// or compaction for good: the calls that would wait for them (commits,
// Close, Flush, Compact, Metrics) go through a ParkGuard and return the
// parked report instead of hanging. An Open whose replayed WAL cannot be
// flushed (a MANIFEST write fails for good: Pebble would retry the flush
// without end, and its Open waits for it) returns an error wrapping
// ErrStopped instead of hanging (openstuck.go). The log's Pebble format writes WAL
// sync chunks, so a damaged record in the newest WAL fails Open with a
// *CorruptionError instead of ending the replay there as a torn tail
// would. Two limits remain (Pebble v2.1.7): replay confirms damage only
// from a later 32 KiB WAL block, so damage inside the WAL's last block
// still reads as a torn tail; and the WAL a new store's first Open creates
// predates the format, so it has no sync chunks.
//
// # Full disk
//
// A write that fails for want of space returns an error that is both
// ErrDiskFull and syscall.ENOSPC; reads go on. Pebble's WAL writer keeps
// its error, so the next append after space returns closes and reopens
// Pebble in place (acknowledged records are synced; the failed group's
// records are deleted again) and goes on. While Pebble's flushes fail for
// want of space, writes are refused rather than left to stall in Pebble.
// Open on a full disk opens Pebble read-only; writes then fail with
// ErrDiskFull until space returns. A space reserve (LAZYMEM-RESERVE,
// Options.ReserveBytes) is preallocated in the log's directory; see
// reserve.go for how it keeps a full disk away from the points where
// Pebble stops the process: commits are admitted only with the reserve
// held and room for them (ErrDiskFull otherwise, before Pebble sees
// them), a WAL or MANIFEST write that fails for want of space releases
// the reserve and is tried again, sstable writes never spend it. It is
// made again once the disk has room. Pebble's obsolete files are deleted
// at once (never archived), so failed flushes cannot pile up.
// TestDiskFullModel fills a modelled disk at every operation.
package segment
