package codec

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"
)

// Elem is an element type of a vector file: float32 (.fvecs), int32 (.ivecs)
// or uint8 (.bvecs).
type Elem interface{ float32 | int32 | uint8 }

// DefaultMaxDim is the default bound on the dimension a vector header may
// announce: large enough for any embedding, small enough that a corrupt
// header cannot make a reader allocate more than a few megabytes.
const DefaultMaxDim = 1 << 20

// DefaultVecBufferSize is the default I/O buffer of readers and writers.
const DefaultVecBufferSize = 64 << 10

// VecOptions configure vector readers and writers. The zero value is valid
// after EnsureDefaults.
type VecOptions struct {
	// Dim, when > 0, is the dimension every vector must have; another
	// dimension is ErrDimension (reading) or ErrInvalidVector (writing).
	// Default 0: no fixed dimension (see SameDim).
	Dim int
	// SameDim requires every vector to have the first vector's dimension.
	// Default false: the format lets each vector carry its own dimension,
	// and so do we unless asked. Ignored when Dim > 0.
	SameDim bool
	// MaxDim bounds the dimension of a vector; a header announcing more is
	// ErrDimension. Default DefaultMaxDim.
	MaxDim int
	// BufferSize is the size of the bufio buffer wrapped around the stream.
	// Default DefaultVecBufferSize.
	BufferSize int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *VecOptions) EnsureDefaults() {
	if o.MaxDim == 0 {
		o.MaxDim = DefaultMaxDim
	}
	if o.BufferSize == 0 {
		o.BufferSize = DefaultVecBufferSize
	}
}

// Validate reports out-of-range fields.
func (o *VecOptions) Validate() error {
	switch {
	case o.Dim < 0:
		return fmt.Errorf("%w: VecOptions.Dim %d is negative", ErrInvalidOptions, o.Dim)
	case o.MaxDim < 1 || o.MaxDim > math.MaxInt32:
		return fmt.Errorf("%w: VecOptions.MaxDim %d outside [1, 2^31-1]", ErrInvalidOptions, o.MaxDim)
	case o.Dim > o.MaxDim:
		return fmt.Errorf("%w: VecOptions.Dim %d exceeds MaxDim %d", ErrInvalidOptions, o.Dim, o.MaxDim)
	case o.BufferSize < 16:
		return fmt.Errorf("%w: VecOptions.BufferSize %d below 16", ErrInvalidOptions, o.BufferSize)
	}
	return nil
}

// nativeLittleEndian enables reading vector files straight into the
// vector's memory. portableVecDecode forces the byte-by-byte path (which
// big-endian machines use) so that tests cover it everywhere.
var (
	nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	portableVecDecode  = false
)

// vecFormat describes one of the three formats.
type vecFormat[T Elem] struct {
	name     string // "fvecs", used in errors
	elemSize int
	decode   func(dst []T, src []byte)
	append   func(dst []byte, v []T) []byte
}

var (
	fvecsFormat = vecFormat[float32]{"fvecs", 4, decodeF32, appendF32}
	ivecsFormat = vecFormat[int32]{"ivecs", 4, decodeI32, appendI32}
	bvecsFormat = vecFormat[uint8]{"bvecs", 1, decodeU8, appendU8}
)

func decodeF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeI32(dst []int32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = int32(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeU8(dst []uint8, src []byte) { copy(dst, src) }

func appendF32(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func appendI32(dst []byte, v []int32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(x))
	}
	return dst
}

func appendU8(dst []byte, v []uint8) []byte { return append(dst, v...) }

func appendVec[T Elem](dst []byte, f *vecFormat[T], v []T) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
	return f.append(dst, v)
}

// AppendFvec appends one .fvecs entry: int32 dimension len(v), then the
// float32 values, little-endian, bits preserved (NaN payloads included).
func AppendFvec(dst []byte, v []float32) []byte { return appendVec(dst, &fvecsFormat, v) }

// AppendIvec appends one .ivecs entry: int32 dimension, then int32 values.
func AppendIvec(dst []byte, v []int32) []byte { return appendVec(dst, &ivecsFormat, v) }

// AppendBvec appends one .bvecs entry: int32 dimension, then uint8 values.
func AppendBvec(dst []byte, v []uint8) []byte { return appendVec(dst, &bvecsFormat, v) }

// VecReader streams vectors from an .fvecs, .ivecs or .bvecs stream, one at a
// time, reusing its buffers: memory use is bounded by the largest vector, not
// the file.
//
//	r := codec.NewFvecsReader(f, codec.VecOptions{Dim: 512})
//	for r.Next() {
//		use(r.Vec()) // valid until the next call to Next
//	}
//	if err := r.Err(); err != nil { ... }
//
// A malformed stream (dimension <= 0 or above MaxDim, a dimension other than
// the fixed one, a vector cut short) stops the iteration with a *DecodeError
// naming the vector's index and the byte offset of its header. A stream that
// ends exactly between two vectors ends cleanly, with Err nil.
type VecReader[T Elem] struct {
	br    *bufio.Reader
	f     *vecFormat[T]
	opts  VecOptions
	hdr   [4]byte
	raw   []byte
	vec   []T
	off   int64 // bytes consumed
	cur   int64 // offset of the current vector's header
	n     int   // vectors read
	first int   // dimension of the first vector, for SameDim
	err   error
}

// NewFvecsReader returns a reader of float32 vectors. Invalid options make
// the first Next fail with ErrInvalidOptions.
func NewFvecsReader(r io.Reader, opts VecOptions) *VecReader[float32] {
	return newVecReader(r, &fvecsFormat, opts)
}

// NewIvecsReader returns a reader of int32 vectors (ground-truth neighbour ids).
func NewIvecsReader(r io.Reader, opts VecOptions) *VecReader[int32] {
	return newVecReader(r, &ivecsFormat, opts)
}

// NewBvecsReader returns a reader of uint8 vectors.
func NewBvecsReader(r io.Reader, opts VecOptions) *VecReader[uint8] {
	return newVecReader(r, &bvecsFormat, opts)
}

func newVecReader[T Elem](r io.Reader, f *vecFormat[T], opts VecOptions) *VecReader[T] {
	opts.EnsureDefaults()
	vr := &VecReader[T]{f: f, opts: opts}
	if err := opts.Validate(); err != nil {
		vr.err = err
		return vr
	}
	vr.br = bufio.NewReaderSize(r, opts.BufferSize)
	return vr
}

func (r *VecReader[T]) fail(what string, err error) bool {
	r.err = decodeErr(fmt.Sprintf("%s vector %d %s", r.f.name, r.n, what), int(r.cur), err)
	r.vec = r.vec[:0]
	return false
}

// Reset makes r read a new stream from its start, keeping its buffers and
// options: reading many files allocates no more than reading the largest.
// A reader created with invalid options stays failed.
func (r *VecReader[T]) Reset(src io.Reader) {
	if r.br == nil {
		return
	}
	r.br.Reset(src)
	r.vec, r.off, r.cur, r.n, r.first, r.err = r.vec[:0], 0, 0, 0, 0, nil
}

// Next reads the next vector and reports whether there is one.
func (r *VecReader[T]) Next() bool {
	if r.err != nil {
		return false
	}
	r.cur = r.off
	k, err := io.ReadFull(r.br, r.hdr[:])
	r.off += int64(k)
	switch {
	case err == io.EOF: // clean end: no byte of a new vector
		r.vec = r.vec[:0]
		return false
	case err == io.ErrUnexpectedEOF:
		return r.fail("header", ErrTruncated)
	case err != nil:
		return r.fail("header", err)
	}
	dim := int64(int32(binary.LittleEndian.Uint32(r.hdr[:])))
	switch {
	case dim <= 0 || dim > int64(r.opts.MaxDim):
		return r.fail(fmt.Sprintf("dimension %d (want 1..%d)", dim, r.opts.MaxDim), ErrDimension)
	case r.opts.Dim > 0 && int(dim) != r.opts.Dim:
		return r.fail(fmt.Sprintf("dimension %d (want %d)", dim, r.opts.Dim), ErrDimension)
	case r.opts.SameDim && r.n > 0 && int(dim) != r.first:
		return r.fail(fmt.Sprintf("dimension %d (first vector has %d)", dim, r.first), ErrDimension)
	}
	d := int(dim)
	size := d * r.f.elemSize
	if cap(r.vec) < d {
		r.vec = make([]T, d)
	}
	r.vec = r.vec[:d]
	// On little-endian machines the file's bytes are the vector's memory:
	// read straight into it, no staging buffer, no conversion loop.
	direct := nativeLittleEndian && !portableVecDecode
	var dst []byte
	if direct {
		dst = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r.vec))), size)
	} else {
		if cap(r.raw) < size {
			r.raw = make([]byte, size)
		}
		r.raw = r.raw[:size]
		dst = r.raw
	}
	k, err = io.ReadFull(r.br, dst)
	r.off += int64(k)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = ErrTruncated
		}
		return r.fail(fmt.Sprintf("values (dimension %d, %d of %d bytes present)", d, k, size), err)
	}
	if !direct {
		r.f.decode(r.vec, r.raw)
	}
	if r.n == 0 {
		r.first = d
	}
	r.n++
	return true
}

// Vec is the current vector. It is overwritten by the next call to Next:
// copy it to keep it.
func (r *VecReader[T]) Vec() []T { return r.vec }

// Dim is the current vector's dimension.
func (r *VecReader[T]) Dim() int { return len(r.vec) }

// Count is the number of vectors read so far.
func (r *VecReader[T]) Count() int { return r.n }

// Offset is the byte offset of the current vector's header in the stream;
// after a clean end it is the stream's length, after an error the offset of
// the bad vector's header.
func (r *VecReader[T]) Offset() int64 { return r.cur }

// Err is the error that stopped the iteration, or nil at a clean end.
func (r *VecReader[T]) Err() error { return r.err }

// ReadAll reads the rest of the stream into memory. The vectors share one
// backing array: one allocation for the values (amortised), one for the row
// headers.
func ReadAll[T Elem](r *VecReader[T]) ([][]T, error) {
	return readAll(r, 0)
}

func readAll[T Elem](r *VecReader[T], sizeHint int64) ([][]T, error) {
	var flat []T
	if hint := sizeHint / int64(r.f.elemSize); hint > 0 && hint < math.MaxInt32 {
		flat = make([]T, 0, hint) // upper bound: headers count as values
	}
	var dims []int
	for r.Next() {
		flat = append(flat, r.vec...)
		dims = append(dims, len(r.vec))
	}
	if r.err != nil {
		return nil, r.err
	}
	out := make([][]T, len(dims))
	off := 0
	for i, d := range dims {
		out[i] = flat[off : off+d : off+d]
		off += d
	}
	return out, nil
}

func readAllFile[T Elem](path string, f *vecFormat[T], opts VecOptions) ([][]T, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lazymem: codec: %w", err)
	}
	defer fh.Close()
	var hint int64
	if st, err := fh.Stat(); err == nil {
		hint = st.Size()
	}
	vs, err := readAll(newVecReader(fh, f, opts), hint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}

// ReadAllFvecs reads a whole .fvecs file with default VecOptions (any
// dimension per vector, up to DefaultMaxDim). Errors name the path and the byte
// offset of the bad vector. To fix the dimension, use NewFvecsReader with
// VecOptions.Dim or SameDim, then ReadAll.
func ReadAllFvecs(path string) ([][]float32, error) {
	return readAllFile(path, &fvecsFormat, VecOptions{})
}

// ReadAllIvecs reads a whole .ivecs file.
func ReadAllIvecs(path string) ([][]int32, error) {
	return readAllFile(path, &ivecsFormat, VecOptions{})
}

// ReadAllBvecs reads a whole .bvecs file.
func ReadAllBvecs(path string) ([][]uint8, error) {
	return readAllFile(path, &bvecsFormat, VecOptions{})
}

// VecWriter streams vectors to an .fvecs, .ivecs or .bvecs stream through a
// buffer. Call Flush at the end; the first error is sticky.
type VecWriter[T Elem] struct {
	bw   *bufio.Writer
	f    *vecFormat[T]
	opts VecOptions
	buf  []byte
	dim  int // dimension of the first vector, for SameDim
	n    int
	err  error
}

// NewFvecsWriter returns a writer of float32 vectors.
func NewFvecsWriter(w io.Writer, opts VecOptions) *VecWriter[float32] {
	return newVecWriter(w, &fvecsFormat, opts)
}

// NewIvecsWriter returns a writer of int32 vectors.
func NewIvecsWriter(w io.Writer, opts VecOptions) *VecWriter[int32] {
	return newVecWriter(w, &ivecsFormat, opts)
}

// NewBvecsWriter returns a writer of uint8 vectors.
func NewBvecsWriter(w io.Writer, opts VecOptions) *VecWriter[uint8] {
	return newVecWriter(w, &bvecsFormat, opts)
}

func newVecWriter[T Elem](w io.Writer, f *vecFormat[T], opts VecOptions) *VecWriter[T] {
	opts.EnsureDefaults()
	vw := &VecWriter[T]{f: f, opts: opts}
	if err := opts.Validate(); err != nil {
		vw.err = err
		return vw
	}
	vw.bw = bufio.NewWriterSize(w, opts.BufferSize)
	return vw
}

// Write appends one vector. An empty vector, one longer than MaxDim or one
// of the wrong dimension is ErrInvalidVector and is not written (the
// writer stays usable); an I/O error is sticky.
func (w *VecWriter[T]) Write(v []T) error {
	if w.err != nil {
		return w.err
	}
	d := len(v)
	switch {
	case d == 0 || d > w.opts.MaxDim:
		return fmt.Errorf("%w: %s vector %d has dimension %d (want 1..%d)", ErrInvalidVector, w.f.name, w.n, d, w.opts.MaxDim)
	case w.opts.Dim > 0 && d != w.opts.Dim:
		return fmt.Errorf("%w: %s vector %d has dimension %d (want %d)", ErrInvalidVector, w.f.name, w.n, d, w.opts.Dim)
	case w.opts.SameDim && w.n > 0 && d != w.dim:
		return fmt.Errorf("%w: %s vector %d has dimension %d (first vector has %d)", ErrInvalidVector, w.f.name, w.n, d, w.dim)
	}
	w.buf = appendVec(w.buf[:0], w.f, v)
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = fmt.Errorf("lazymem: codec: writing %s vector %d: %w", w.f.name, w.n, err)
		return w.err
	}
	if w.n == 0 {
		w.dim = d
	}
	w.n++
	return nil
}

// Count is the number of vectors written.
func (w *VecWriter[T]) Count() int { return w.n }

// Flush writes buffered data to the underlying writer.
func (w *VecWriter[T]) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("lazymem: codec: flushing %s: %w", w.f.name, err)
	}
	return w.err
}

func writeAllFile[T Elem](path string, f *vecFormat[T], vs [][]T, opts VecOptions) (err error) {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("lazymem: codec: %w", err)
	}
	defer func() {
		if cerr := fh.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("lazymem: codec: %w", cerr)
		}
	}()
	w := newVecWriter(fh, f, opts)
	for _, v := range vs {
		if err := w.Write(v); err != nil {
			return err
		}
	}
	return w.Flush()
}

// WriteAllFvecs writes vs to a new .fvecs file at path (truncating it).
func WriteAllFvecs(path string, vs [][]float32) error {
	return writeAllFile(path, &fvecsFormat, vs, VecOptions{})
}

// WriteAllIvecs writes vs to a new .ivecs file at path.
func WriteAllIvecs(path string, vs [][]int32) error {
	return writeAllFile(path, &ivecsFormat, vs, VecOptions{})
}

// WriteAllBvecs writes vs to a new .bvecs file at path.
func WriteAllBvecs(path string, vs [][]uint8) error {
	return writeAllFile(path, &bvecsFormat, vs, VecOptions{})
}
