package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
)

// Record is one interaction of an agent: a user or assistant turn, a tool
// call, a transcript line.
type Record struct {
	// ID is assigned by Append (dense, increasing from 1); ignored on input.
	ID uint64
	// Time of the interaction. Zero: the DB's clock at Append. Otherwise it
	// must lie in [MinTime, MaxTime], the range of int64 nanoseconds since
	// 1970 that the log stores.
	Time time.Time
	// Agent is the tenant: required. A query sees only the agents it names.
	Agent string
	// Session groups the turns of one conversation. Optional.
	Session string
	// Role is the speaker: "user", "assistant", "tool", or a person's name.
	// Optional.
	Role string
	// Text is the content: required, valid UTF-8, at most
	// Options.MaxTextBytes.
	Text string
	// Meta holds metadata filters can select on (tags, entities, ...).
	// Keys and values must be non-empty; a key may not start with the NUL
	// byte (index.ReservedKeyPrefix), which the index keeps for its own
	// fields.
	Meta map[string][]string
}

// validateRecord checks r against the limits of o; field names are prefixed
// with where ("record" or "records[3]").
// MinTime and MaxTime bound the times a record or a query can carry: the
// log stores a time as int64 nanoseconds since 1970, which spans 1677-09-21
// to 2262-04-11. A time outside is rejected, never silently rewritten.
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// timeOK reports whether t is zero (meaning "now" where the field says so)
// or within [MinTime, MaxTime].
func timeOK(t time.Time) bool {
	return t.IsZero() || (!t.Before(MinTime) && !t.After(MaxTime))
}

// checkTime returns a FieldError naming field when t is outside
// [MinTime, MaxTime].
func checkTime(field string, t time.Time) error {
	if timeOK(t) {
		return nil
	}
	return fieldErr(field, ErrRange, fmt.Sprintf("%s is outside %s..%s",
		t.Format(time.RFC3339Nano), MinTime.Format(time.RFC3339Nano), MaxTime.Format(time.RFC3339Nano)))
}

func validateRecord(r *Record, o *Options, where string) error {
	if recordOK(r, o) {
		return nil
	}
	return recordError(r, o, where)
}

// recordOK reports whether r is valid without building the field names of
// errors (profile: naming the fields of every record of a batch, valid or
// not, was a tenth of the ingest's allocations). recordError says why not.
func recordOK(r *Record, o *Options) bool {
	return timeOK(r.Time) && r.Agent != "" && stringOK(r.Agent, o.MaxFieldBytes) &&
		stringOK(r.Session, o.MaxFieldBytes) && stringOK(r.Role, o.MaxFieldBytes) &&
		strings.TrimSpace(r.Text) != "" && stringOK(r.Text, o.MaxTextBytes) &&
		len(r.Meta) <= o.MaxMetaKeys && metaOK(r.Meta, o)
}

func stringOK(s string, limit int) bool { return len(s) <= limit && utf8.ValidString(s) }

// recordError is validateRecord's error for an invalid r (nil if r is
// valid).
func recordError(r *Record, o *Options, where string) error {
	if err := checkTime(where+".time", r.Time); err != nil {
		return err
	}
	if r.Agent == "" {
		return fieldErr(where+".agent", ErrMissing, "")
	}
	if err := checkString(where+".agent", r.Agent, o.MaxFieldBytes); err != nil {
		return err
	}
	if err := checkString(where+".session", r.Session, o.MaxFieldBytes); err != nil {
		return err
	}
	if err := checkString(where+".role", r.Role, o.MaxFieldBytes); err != nil {
		return err
	}
	if strings.TrimSpace(r.Text) == "" {
		return fieldErr(where+".text", ErrMissing, "")
	}
	if err := checkString(where+".text", r.Text, o.MaxTextBytes); err != nil {
		return err
	}
	return checkMeta(where+".meta", r.Meta, o)
}

func checkString(field, s string, limit int) error {
	if len(s) > limit {
		return fieldErr(field, ErrTooLong, fmt.Sprintf("%d bytes, limit %d", len(s), limit))
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, ErrUTF8, "")
	}
	return nil
}

// checkMeta validates a metadata map (records' Meta, queries' Where/Not).
// The common case, a valid map, is checked without allocating; an invalid
// one is walked again in sorted key order so that the error reported is
// always the same.
func checkMeta(field string, m map[string][]string, o *Options) error {
	if len(m) <= o.MaxMetaKeys && metaOK(m, o) {
		return nil
	}
	return metaError(field, m, o)
}

func metaOK(m map[string][]string, o *Options) bool {
	for k, vs := range m {
		if !index.MetaKeyOK(k) || len(k) > o.MaxFieldBytes || !utf8.ValidString(k) || len(vs) == 0 || len(vs) > o.MaxMetaValues {
			return false
		}
		for _, v := range vs {
			if v == "" || len(v) > o.MaxFieldBytes || !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

func metaError(field string, m map[string][]string, o *Options) error {
	if len(m) > o.MaxMetaKeys {
		return fieldErr(field, ErrTooMany, fmt.Sprintf("%d keys, limit %d", len(m), o.MaxMetaKeys))
	}
	// Sorted order so that the first error reported is deterministic.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kf := field + "[" + strconv.Quote(k) + "]"
		if k == "" {
			return fieldErr(field, ErrEmpty, "empty key")
		}
		if !index.MetaKeyOK(k) {
			return fieldErr(kf, ErrReserved, "a metadata key may not start with the NUL byte")
		}
		if err := checkString(kf, k, o.MaxFieldBytes); err != nil {
			return err
		}
		vs := m[k]
		if len(vs) == 0 {
			return fieldErr(kf, ErrEmpty, "no values")
		}
		if len(vs) > o.MaxMetaValues {
			return fieldErr(kf, ErrTooMany, fmt.Sprintf("%d values, limit %d", len(vs), o.MaxMetaValues))
		}
		for i, v := range vs {
			vf := kf + "[" + strconv.Itoa(i) + "]"
			if v == "" {
				return fieldErr(vf, ErrEmpty, "")
			}
			if err := checkString(vf, v, o.MaxFieldBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortedKeys returns m's keys sorted, in dst's storage. A record has a
// handful of keys: insertion sort, no allocation once dst has grown.
func sortedKeys(dst []string, m map[string][]string) []string {
	dst = dst[:0]
	for k := range m {
		i := len(dst)
		dst = append(dst, k)
		for i > 0 && dst[i-1] > k {
			dst[i] = dst[i-1]
			i--
		}
		dst[i] = k
	}
	return dst
}

func indexFields(m map[string][]string) []index.Field {
	if len(m) == 0 {
		return nil
	}
	fs := make([]index.Field, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fs = append(fs, index.Field{Key: k, Values: m[k]})
	}
	return fs
}

// fromCodec copies a decoded record (whose Meta slices may be reused by the
// decoder) into a Record the caller owns.
func fromCodec(id uint64, c *codec.Record) Record {
	r := Record{
		ID:      id,
		Time:    time.Unix(0, c.Time).UTC(),
		Agent:   c.Agent,
		Session: c.Session,
		Role:    c.Role,
		Text:    c.Text,
	}
	if len(c.Meta) > 0 {
		r.Meta = make(map[string][]string, len(c.Meta))
		for _, f := range c.Meta {
			r.Meta[f.Key] = slices.Clone(f.Values)
		}
	}
	return r
}

// codecToDoc converts a logged record for the index. A metadata key the
// index refuses (one that starts with NUL, which versions before the shared
// check let into the log) is left out of the index rather than failing the
// catch-up, so such a store opens; the record itself stays readable by Get.
func codecToDoc(id uint64, c *codec.Record, d *index.Doc) {
	*d = index.Doc{ID: id, Time: c.Time, Agent: c.Agent, Session: c.Session, Role: c.Role, Text: c.Text}
	if len(c.Meta) > 0 {
		d.Meta = make([]index.Field, 0, len(c.Meta))
		for _, f := range c.Meta {
			if !index.MetaKeyOK(f.Key) {
				continue
			}
			d.Meta = append(d.Meta, index.Field{Key: f.Key, Values: slices.Clone(f.Values)})
		}
	}
}
