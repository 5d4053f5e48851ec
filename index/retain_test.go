package index

import (
	"strings"
	"testing"
	"unsafe"
)

// TestFieldsDoNotRetainInput: the field postings keep their own copies of
// keys and values, never a slice of the caller's string, which may be a
// whole request body (lazymemd decodes every field of a batch out of one
// string).
func TestFieldsDoNotRetainInput(t *testing.T) {
	x, err := Open("", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	body := strings.Repeat("agent-a session-b tag-c ", 1000)
	in := func(s string) bool {
		p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(body)))
		return p >= b && p < b+uintptr(len(body))
	}
	doc := &Doc{ID: 1, Time: 1, Agent: body[0:7], Session: body[8:17], Text: body[:40],
		Meta: []Field{{Key: body[18:21], Values: []string{body[18:23]}}}}
	if !in(doc.Agent) || !in(doc.Meta[0].Key) {
		t.Fatal("test setup: the fields must be slices of body")
	}
	if err := x.Add([]*Doc{doc}); err != nil {
		t.Fatal(err)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for k, vals := range x.fields {
		for v := range vals {
			n++
			if in(k) || in(v) {
				t.Errorf("field %q=%q is a slice of the caller's string", k, v)
			}
		}
	}
	if n < 3 {
		t.Fatalf("only %d field postings: %v", n, x.fields)
	}
}
