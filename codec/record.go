package codec

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Wire constants of the record encoding. NEVER CHANGE these values: records
// written with them live in segments on users' disks. A new layout gets a new
// version number and a new decoding branch; the old branch stays.
const (
	// recordVersion1 is the first byte of every version-1 record, the
	// version AppendRecord writes.
	recordVersion1 byte = 1
)

// Version 0 is deliberately not a record version, so that a zeroed region
// (a preallocated file, a torn write) never decodes as a record.

// Field is one metadata key with its values, in the caller's order.
type Field struct {
	Key    string
	Values []string
}

// Record is one raw interaction as stored in the log.
//
// Meta must be sorted by Key with unique, non-empty keys: the caller sorts
// (slices.SortFunc with strings.Compare on Key) and Validate checks. Sorting is
// the caller's job because the caller usually builds Meta from a map and sorts
// once; the codec never reorders silently, so what it stores is what it was
// given. The order of Values within a Field is kept as given.
type Record struct {
	Time    int64 // unix nanoseconds
	Agent   string
	Session string
	Role    string
	Text    string
	Meta    []Field // sorted by Key, unique non-empty keys
}

// Validate reports whether r can be encoded: Meta keys non-empty, sorted and
// unique. Strings may hold any bytes; the codec does not check UTF-8.
func (r *Record) Validate() error {
	prev := ""
	for i := range r.Meta {
		k := r.Meta[i].Key
		if k == "" {
			return fmt.Errorf("%w: meta key %d is empty", ErrInvalidRecord, i)
		}
		if i > 0 && k <= prev {
			return fmt.Errorf("%w: meta keys not sorted and unique: %q after %q at index %d",
				ErrInvalidRecord, k, prev, i)
		}
		prev = k
	}
	return nil
}

// RecordSize is the exact number of bytes AppendRecord appends for r.
func RecordSize(r *Record) int {
	body := recordBodySize(r)
	return 1 + UvarintLen(uint64(body)) + body
}

func strSize(s string) int { return UvarintLen(uint64(len(s))) + len(s) }

func recordBodySize(r *Record) int {
	n := 8 + strSize(r.Agent) + strSize(r.Session) + strSize(r.Role) +
		UvarintLen(uint64(len(r.Meta))) + strSize(r.Text)
	for i := range r.Meta {
		f := &r.Meta[i]
		n += strSize(f.Key) + UvarintLen(uint64(len(f.Values)))
		for _, v := range f.Values {
			n += strSize(v)
		}
	}
	return n
}

// AppendRecord appends the version-1 encoding of r to dst and returns the
// extended buffer; it grows dst at most once (RecordSize bytes).
//
// AppendRecord does not validate: r must satisfy Validate. A record whose
// Meta is unsorted or has duplicate or empty keys is encoded as is and
// DecodeRecord rejects it with ErrCorrupt, so a bad record is never read back
// as something different from what was written. Writers call Validate at
// their API boundary, once, rather than on every encode.
func AppendRecord(dst []byte, r *Record) []byte {
	body := recordBodySize(r)
	dst = slices.Grow(dst, 1+UvarintLen(uint64(body))+body)
	dst = append(dst, recordVersion1)
	dst = AppendUvarint(dst, uint64(body))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Time))
	dst = appendStr(dst, r.Agent)
	dst = appendStr(dst, r.Session)
	dst = appendStr(dst, r.Role)
	dst = AppendUvarint(dst, uint64(len(r.Meta)))
	for i := range r.Meta {
		f := &r.Meta[i]
		dst = appendStr(dst, f.Key)
		dst = AppendUvarint(dst, uint64(len(f.Values)))
		for _, v := range f.Values {
			dst = appendStr(dst, v)
		}
	}
	return appendStr(dst, r.Text)
}

func appendStr(dst []byte, s string) []byte {
	dst = AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// recordHeader reads the version byte and body length and returns the Decoder
// bounded to the body, plus the offset one past the record.
func recordHeader(src []byte) (d Decoder, end int, err error) {
	d = NewDecoder(src)
	d.Label("record version")
	switch v := d.Byte(); {
	case d.err != nil:
		return d, 0, d.err
	case v != recordVersion1:
		return d, 0, decodeErr(fmt.Sprintf("record version %d (this build reads %d)", v, recordVersion1), 0, ErrVersion)
	}
	d.Label("record length")
	n := d.Uvarint()
	if d.err != nil {
		return d, 0, d.err
	}
	if n > uint64(d.Len()) {
		return d, 0, decodeErr("record body", d.off, ErrTruncated)
	}
	end = d.off + int(n)
	d.b = d.b[:end] // fields may not run past the body
	return d, end, nil
}

// skipRecord returns the bytes after the record at the front of src, reading
// only its version and length: a scan that wants every n-th record, or only
// record boundaries, does not pay for decoding.
func skipRecord(src []byte) (tail []byte, err error) {
	_, end, err := recordHeader(src)
	if err != nil {
		return src, err
	}
	return src[end:], nil
}

// DecodeRecord decodes the record at the front of src into r and returns the
// bytes after it.
//
// It reuses r's memory: Meta and each Field's Values slice are resliced in
// place when their capacity allows, and a string field equal to the one
// already in r is kept rather than allocated again, so decoding a run of
// records from one agent and session into the same Record allocates about one
// string (the text) a record. Strings never alias src. Because slices are
// reused, a caller that keeps a decoded record must copy Meta before decoding
// again into the same r.
//
// Errors are *DecodeError values naming the field and its offset from the
// start of src: ErrTruncated when src ends before the record's announced
// length, ErrVersion for an unknown version byte, ErrCorrupt when the body is
// inconsistent with its length or its metadata keys are unsorted. On error r
// holds partial data and tail is src.
func DecodeRecord(src []byte, r *Record) (tail []byte, err error) {
	d, end, err := recordHeader(src)
	if err != nil {
		return src, err
	}
	d.Label("record time")
	r.Time = d.Int64()
	d.Label("record agent")
	r.Agent = d.stringReuse(r.Agent)
	d.Label("record session")
	r.Session = d.stringReuse(r.Session)
	d.Label("record role")
	r.Role = d.stringReuse(r.Role)

	d.Label("record meta count")
	// A field takes at least 3 bytes: key length, one key byte, value count.
	n := d.Count(3)
	ms := r.Meta[:cap(r.Meta)]
	if len(ms) < n {
		ms = append(ms, make([]Field, n-len(ms))...)
	}
	r.Meta = ms[:n]
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		f := &r.Meta[i]
		d.Label("record meta key")
		keyOff := d.off
		f.Key = d.stringReuse(f.Key)
		if d.err == nil && f.Key <= prev { // also rejects an empty first key
			d.Label("record meta key order (keys must be sorted, unique, non-empty)")
			d.failAt(keyOff, ErrCorrupt)
		}
		prev = f.Key
		d.Label("record meta value count")
		nv := d.Count(1)
		vs := f.Values[:cap(f.Values)]
		if len(vs) < nv {
			vs = append(vs, make([]string, nv-len(vs))...)
		}
		f.Values = vs[:nv]
		d.Label("record meta value")
		for j := 0; j < nv && d.err == nil; j++ {
			f.Values[j] = d.stringReuse(f.Values[j])
		}
	}
	d.Label("record text")
	r.Text = d.stringReuse(r.Text)
	if d.err == nil && d.off != end {
		d.Label("record body (trailing bytes)")
		d.Fail(ErrCorrupt)
	}
	if d.err != nil {
		// Inside the body, running short means the body contradicts its own
		// length: that is corruption, not a short read.
		if de, ok := d.err.(*DecodeError); ok && de.Err == ErrTruncated {
			de.Err = ErrCorrupt
		}
		return src, d.err
	}
	return src[end:], nil
}
