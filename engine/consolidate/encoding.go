package consolidate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lazymem/lazymem/codec"
)

// Wire constants of the unit encoding. NEVER CHANGE these values: units
// written with them live in users' stores. A new layout gets a new version
// number and a new decoding branch; the old branch stays.
const (
	// UnitVersion1 is the first byte of every version-1 unit.
	UnitVersion1 byte = 1
	// UnitVersion is the version AppendUnit writes.
	UnitVersion = UnitVersion1
)

// UnitSize is the exact number of bytes AppendUnit appends for u.
func UnitSize(u *Unit) int {
	body := unitBodySize(u)
	return 1 + codec.UvarintLen(uint64(body)) + body
}

func strSize(s string) int { return codec.UvarintLen(uint64(len(s))) + len(s) }

func idsSize(ids []uint64) int {
	n := codec.UvarintLen(uint64(len(ids)))
	prev := uint64(0)
	for _, id := range ids {
		n += codec.UvarintLen(id - prev)
		prev = id
	}
	return n
}

func unitBodySize(u *Unit) int {
	n := codec.UvarintLen(u.ID) + 1 + 8 + 8 +
		strSize(u.Agent) + strSize(u.Topic) + strSize(u.Content) +
		codec.UvarintLen(uint64(len(u.Participants)))
	for _, p := range u.Participants {
		n += strSize(p)
	}
	n += idsSize(u.SourceIDs) + idsSize(u.Supersedes) + codec.UvarintLen(u.SupersededBy)
	n += codec.UvarintLen(uint64(len(u.ActionItems)))
	for i := range u.ActionItems {
		n += strSize(u.ActionItems[i].Owner) + strSize(u.ActionItems[i].Task) + 8
	}
	return n
}

// AppendUnit appends the version-1 encoding of u to dst and returns the
// extended buffer; it grows dst at most once (UnitSize bytes).
//
// AppendUnit does not validate: u must satisfy Validate (call Normalize
// first for ids built by hand). A unit that does not is encoded as is and
// DecodeUnit rejects it with codec.ErrCorrupt, so a bad unit is never read
// back as something different from what was written.
func AppendUnit(dst []byte, u *Unit) []byte {
	body := unitBodySize(u)
	dst = slices.Grow(dst, 1+codec.UvarintLen(uint64(body))+body)
	dst = append(dst, UnitVersion1)
	dst = codec.AppendUvarint(dst, uint64(body))
	dst = codec.AppendUvarint(dst, u.ID)
	dst = append(dst, byte(u.Type))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(timeNanos(u.Time)))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(u.Confidence))
	dst = appendStr(dst, u.Agent)
	dst = appendStr(dst, u.Topic)
	dst = appendStr(dst, u.Content)
	dst = codec.AppendUvarint(dst, uint64(len(u.Participants)))
	for _, p := range u.Participants {
		dst = appendStr(dst, p)
	}
	dst = appendIDs(dst, u.SourceIDs)
	dst = appendIDs(dst, u.Supersedes)
	dst = codec.AppendUvarint(dst, u.SupersededBy)
	dst = codec.AppendUvarint(dst, uint64(len(u.ActionItems)))
	for i := range u.ActionItems {
		a := &u.ActionItems[i]
		dst = appendStr(dst, a.Owner)
		dst = appendStr(dst, a.Task)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(timeNanos(a.Due)))
	}
	return dst
}

func appendStr(dst []byte, s string) []byte {
	dst = codec.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendIDs writes a count then the ids as deltas from the previous one
// (the first from 0); ids are sorted and unique, so every delta is >= 1.
func appendIDs(dst []byte, ids []uint64) []byte {
	dst = codec.AppendUvarint(dst, uint64(len(ids)))
	prev := uint64(0)
	for _, id := range ids {
		dst = codec.AppendUvarint(dst, id-prev)
		prev = id
	}
	return dst
}

// timeNanos maps the zero time to 0 ("unknown") and any other time to its
// unix nanoseconds.
func timeNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func nanosTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// DecodeUnit decodes the unit at the front of src and returns it with the
// bytes after it. Strings never alias src.
//
// Errors are *codec.DecodeError values naming the field and its offset from
// the start of src: codec.ErrTruncated when src ends before the unit's
// announced length, codec.ErrVersion for an unknown version byte,
// codec.ErrCorrupt when the body contradicts its length or decodes to a unit
// Validate refuses. The encoding is canonical: a unit that decodes
// re-encodes to the same bytes. On error tail is src.
func DecodeUnit(src []byte) (u Unit, tail []byte, err error) {
	d := codec.NewDecoder(src)
	d.Label("unit version")
	switch v := d.Byte(); {
	case d.Err() != nil:
		return Unit{}, src, d.Err()
	case v != UnitVersion1:
		return Unit{}, src, &codec.DecodeError{What: fmt.Sprintf("unit version %d (this build reads %d)", v, UnitVersion1), Offset: 0, Err: codec.ErrVersion}
	}
	d.Label("unit length")
	n := d.Uvarint()
	if d.Err() != nil {
		return Unit{}, src, d.Err()
	}
	if n > uint64(d.Len()) {
		return Unit{}, src, &codec.DecodeError{What: "unit body", Offset: d.Offset(), Err: codec.ErrTruncated}
	}
	bodyOff := d.Offset()
	end := bodyOff + int(n)
	// Fields may not run past the body: decode the body alone and add its
	// offset back into errors.
	u, err = decodeBody(src[bodyOff:end])
	if err != nil {
		var de *codec.DecodeError
		if errors.As(err, &de) {
			de.Offset += bodyOff
			// Inside the body, running short means the body contradicts
			// its own length: corruption, not a short read.
			if de.Err == codec.ErrTruncated {
				de.Err = codec.ErrCorrupt
			}
		}
		return Unit{}, src, err
	}
	return u, src[end:], nil
}

func decodeBody(b []byte) (Unit, error) {
	var u Unit
	d := codec.NewDecoder(b)
	d.Label("unit id")
	u.ID = d.Uvarint()
	d.Label("unit type")
	u.Type = Type(d.Byte())
	d.Label("unit time")
	u.Time = nanosTime(d.Int64())
	d.Label("unit confidence")
	u.Confidence = math.Float64frombits(d.Uint64())
	d.Label("unit agent")
	u.Agent = d.String()
	d.Label("unit topic")
	u.Topic = d.String()
	d.Label("unit content")
	u.Content = d.String()
	d.Label("unit participant count")
	if np := d.Count(1); np > 0 {
		u.Participants = make([]string, np)
		d.Label("unit participant")
		for i := 0; i < np && d.Err() == nil; i++ {
			u.Participants[i] = d.String()
		}
	}
	var err error
	if d.Err() == nil {
		if u.SourceIDs, err = decodeIDs(&d, "unit source ids"); err != nil {
			return Unit{}, err
		}
		if u.Supersedes, err = decodeIDs(&d, "unit supersedes"); err != nil {
			return Unit{}, err
		}
	}
	d.Label("unit superseded_by")
	u.SupersededBy = d.Uvarint()
	d.Label("unit action item count")
	// An action item takes at least 11 bytes: two lengths, one task byte,
	// the 8-byte due time.
	if na := d.Count(11); na > 0 {
		u.ActionItems = make([]ActionItem, na)
		for i := 0; i < na && d.Err() == nil; i++ {
			a := &u.ActionItems[i]
			d.Label("unit action item owner")
			a.Owner = d.String()
			d.Label("unit action item task")
			a.Task = d.String()
			d.Label("unit action item due")
			a.Due = nanosTime(d.Int64())
		}
	}
	if d.Err() != nil {
		return Unit{}, d.Err()
	}
	if d.Len() != 0 {
		return Unit{}, &codec.DecodeError{What: "unit body (trailing bytes)", Offset: d.Offset(), Err: codec.ErrCorrupt}
	}
	if err := u.Validate(); err != nil {
		return Unit{}, &codec.DecodeError{What: "unit fields (" + err.Error() + ")", Offset: 0, Err: codec.ErrCorrupt}
	}
	return u, nil
}

// decodeIDs reads a delta-coded id list; a zero delta (an unsorted or
// duplicate id, or a zero first id) or an overflowing sum is corrupt.
func decodeIDs(d *codec.Decoder, what string) ([]uint64, error) {
	d.Label(what + " count")
	n := d.Count(1)
	if n == 0 || d.Err() != nil {
		return nil, d.Err()
	}
	ids := make([]uint64, n)
	prev := uint64(0)
	d.Label(what)
	for i := 0; i < n; i++ {
		off := d.Offset()
		delta := d.Uvarint()
		if d.Err() != nil {
			return nil, d.Err()
		}
		if delta == 0 || prev+delta < prev {
			return nil, &codec.DecodeError{What: what + " (ids must be sorted, unique, non-zero)", Offset: off, Err: codec.ErrCorrupt}
		}
		prev += delta
		ids[i] = prev
	}
	return ids, nil
}
