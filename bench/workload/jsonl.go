package workload

import (
	"slices"
	"time"
	"unicode/utf8"
)

// AppendJSON appends r as one line of the JSONL format `lazymem ingest`
// reads, without the newline:
//
//	{"time":"2026-01-01T00:17:49.123Z","agent":"agent-020","session":"agent-020-s000",
//	 "role":"user","text":"...","meta":{"entities":["Bella"],"intent":["question"],...}}
//
// Keys are in a fixed order and meta keys sorted, so equal records encode
// to equal bytes. Times are UTC, RFC 3339 with nanoseconds.
func AppendJSON(dst []byte, r *Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = r.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","agent":`...)
	dst = appendJSONString(dst, r.Agent)
	dst = append(dst, `,"session":`...)
	dst = appendJSONString(dst, r.Session)
	dst = append(dst, `,"role":`...)
	dst = appendJSONString(dst, r.Role)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, r.Text)
	if len(r.Meta) > 0 {
		keys := make([]string, 0, len(r.Meta))
		for k := range r.Meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, `,"meta":{`...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ":["...)
			for j, v := range r.Meta[k] {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, v)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does; U+2028 and U+2029 are escaped so the line
// is also valid JavaScript.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending, copied verbatim
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
