package segment

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Compression selects how sealed segments are compressed.
type Compression uint8

// Compression algorithms. Their numeric values are stored on disk: never change.
const (
	CompressionNone Compression = 0
	CompressionZstd Compression = 1
	CompressionS2   Compression = 2
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionZstd:
		return "zstd"
	case CompressionS2:
		return "s2"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// Options configures a Log. The zero value is valid: EnsureDefaults fills in
// every unset field.
type Options struct {
	// FS is the filesystem the log lives on. Default vfs.Default (the OS).
	// Tests pass vfs.NewCrashableMem() to simulate crashes.
	FS vfs.FS

	// SegmentRecords seals a segment once the unsealed tail holds this many
	// records. Default 512.
	SegmentRecords int
	// SegmentBytes seals a segment once the unsealed tail holds this many raw
	// payload bytes. Default 32 KiB: a cold read of one record decompresses
	// its whole segment, and at 64 KiB that was 45% of a cold 1M-record
	// recall's CPU (agent-only p50 5.5 ms, 3.7 ms at 32 KiB; zstd-3 stores
	// 0.348x of the records at 32 KiB against 0.323x at 64 KiB).
	SegmentBytes int

	// Compression of sealed segments. Default (the zero value)
	// CompressionZstd, measured against s2 on chat text: see
	// docs/BENCHMARKS.md. CompressionNone is the zero value of the type, so
	// raw segments are asked for with NoCompression.
	Compression Compression
	// NoCompression stores sealed segments uncompressed; Compression is
	// then ignored. Default false.
	NoCompression bool
	// DisableColumns stores every segment body as rows (segment version
	// 1): the payloads one after the other. Default false: a segment whose
	// payloads are all engine records is stored as columns (version 2,
	// columns.go), which compress to about a tenth less.
	DisableColumns bool
	// DisableDictionary compresses segments without the log's zstd
	// dictionary. Default false: the sealer builds one from the texts of
	// the first 512 KiB of text it seals and compresses every later
	// segment with it (dict.go), which keeps small text frames (segment
	// version 3, frames.go) near the ratio of whole segments.
	DisableDictionary bool
	// DisableWords stores the text frames as text (segment version 4).
	// Default false: once the sealer has seen its first 512 KiB of text
	// it codes the text frames as words of a log-wide vocabulary (version
	// 5, words.go), which zstd then compresses to about a fifth less.
	DisableWords bool
	// ZstdLevel is the zstd encoder level of the segments compressed
	// without the log's dictionary (those with it use the fastest level:
	// compress.go): 1 fastest, 2 default, 3 better compression, 4 best.
	// Default 2. (Until 2026-12-04 the value went through the C library's
	// 1-22 scale, where 1-2 meant fastest and 3-4 both meant default: the
	// old default 3 is the new default 2, byte for byte.)
	ZstdLevel int

	// CacheBytes bounds the cache of decompressed segments and of the
	// records GetMany read. Default 64 MiB.
	CacheBytes int64

	// MaxRecordBytes is the largest accepted payload. Default 1 MiB.
	MaxRecordBytes int

	// MemTableBytes is Pebble's memtable size, and so the WAL's: every
	// record is in the WAL raw until its memtable is flushed. Default 4
	// MiB: the log's every-moment size over the text, engine ingest of
	// Zipf 1M, peak during the load 0.52x against 0.88x at 64 MiB (the
	// WAL held 62 MB at the peak), 0.54x at 8 MiB, 0.57x at 16 MiB
	// (docs/benchmarks/log-size.md section 6). Smaller memtables flush
	// more often; the flushes' sstables are split by key prefix so that
	// new segments do not overlap old ones (openPebble).
	MemTableBytes uint64

	// DisableBackgroundSeal stops the sealing goroutine; segments are then
	// sealed only by explicit calls to Seal. Default false. Tests use it to
	// control exactly when segments form.
	DisableBackgroundSeal bool

	// ReserveBytes is the size of the space reserve preallocated under the
	// log's directory and deleted when the disk fills, so that Pebble's
	// flushes, compactions and Close can still complete. It is made again
	// once writes work again. Default 8 MiB; negative: no reserve.
	ReserveBytes int64

	// Logf receives Pebble's informational messages. Default: discarded.
	Logf func(format string, args ...any)
}

// EnsureDefaults fills unset fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SegmentRecords == 0 {
		o.SegmentRecords = 512
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 32 << 10
	}
	switch {
	case o.NoCompression:
		o.Compression = CompressionNone
	case o.Compression == CompressionNone:
		// Until this was here the zero value meant raw segments although
		// the field said zstd: the engine stored 1M records in 335 MB of
		// segments for 333 MB of payload.
		o.Compression = CompressionZstd
	}
	if o.ZstdLevel == 0 {
		o.ZstdLevel = 2
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = 1 << 20
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = 4 << 20
	}
	if o.ReserveBytes == 0 {
		o.ReserveBytes = 8 << 20
	}
	return o
}

// Validate reports the first invalid field, by name.
func (o *Options) Validate() error {
	switch {
	case o.SegmentRecords < 1 || o.SegmentRecords > 1<<20:
		return fmt.Errorf("lazymem: segment: Options.SegmentRecords = %d: must be in [1, 1048576]", o.SegmentRecords)
	case o.SegmentBytes < 1 || o.SegmentBytes > 64<<20:
		return fmt.Errorf("lazymem: segment: Options.SegmentBytes = %d: must be in [1, 64 MiB]", o.SegmentBytes)
	case o.Compression > CompressionS2:
		return fmt.Errorf("lazymem: segment: Options.Compression = %d: unknown algorithm", o.Compression)
	case o.ZstdLevel < 1 || o.ZstdLevel > 4:
		return fmt.Errorf("lazymem: segment: Options.ZstdLevel = %d: must be in [1, 4]", o.ZstdLevel)
	case o.CacheBytes < 0:
		return fmt.Errorf("lazymem: segment: Options.CacheBytes = %d: must not be negative", o.CacheBytes)
	case o.MaxRecordBytes < 1 || o.MaxRecordBytes > 64<<20:
		return fmt.Errorf("lazymem: segment: Options.MaxRecordBytes = %d: must be in [1, 64 MiB]", o.MaxRecordBytes)
	case o.ReserveBytes > 1<<30:
		return fmt.Errorf("lazymem: segment: Options.ReserveBytes = %d: must be at most 1 GiB", o.ReserveBytes)
	case o.MemTableBytes < 1<<20:
		return fmt.Errorf("lazymem: segment: Options.MemTableBytes = %d: must be at least 1 MiB", o.MemTableBytes)
	}
	return nil
}
