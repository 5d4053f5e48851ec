package codec_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/lazymem/lazymem/codec"
)

func ExampleAppendRecord() {
	r := codec.Record{
		Time: 1767225600_000000000, Agent: "agent-7", Session: "s1", Role: "user",
		Text: "let's cap the pool at 32",
		Meta: []codec.Field{{Key: "tags", Values: []string{"db"}}, {Key: "kind", Values: []string{"decision"}}},
	}
	// The caller sorts Meta by key; Validate checks before the record is stored.
	slices.SortFunc(r.Meta, func(a, b codec.Field) int { return strings.Compare(a.Key, b.Key) })
	if err := r.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	buf := codec.AppendRecord(nil, &r)
	buf = codec.AppendRecord(buf, &codec.Record{Time: 1767225601_000000000, Agent: "agent-7", Session: "s1", Role: "assistant", Text: "done"})
	fmt.Println(len(buf) == codec.RecordSize(&r)+codec.RecordSize(&codec.Record{Time: 1767225601_000000000, Agent: "agent-7", Session: "s1", Role: "assistant", Text: "done"}))

	var got codec.Record // reused across the scan
	for src := buf; len(src) > 0; {
		var err error
		if src, err = codec.DecodeRecord(src, &got); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(got.Role, got.Text, got.Meta)
	}
	_, err := codec.DecodeRecord(buf[:10], &got)
	fmt.Println(err)
	// Output:
	// true
	// user let's cap the pool at 32 [{kind [decision]} {tags [db]}]
	// assistant done []
	// lazymem: codec: truncated input: record body at byte 2
}

func ExampleNewFvecsReader() {
	var file bytes.Buffer
	w := codec.NewFvecsWriter(&file, codec.VecOptions{Dim: 3})
	_ = w.Write([]float32{1, 0, 0})
	_ = w.Write([]float32{0, 0.6, 0.8})
	_ = w.Flush()
	file.Write([]byte{3, 0, 0, 0, 1, 2}) // a third vector, cut short

	r := codec.NewFvecsReader(&file, codec.VecOptions{Dim: 3})
	for r.Next() {
		fmt.Println(r.Vec())
	}
	fmt.Println(r.Err())
	// Output:
	// [1 0 0]
	// [0 0.6 0.8]
	// lazymem: codec: truncated input: fvecs vector 2 values (dimension 3, 2 of 12 bytes present) at byte 32
}
