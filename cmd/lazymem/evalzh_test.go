package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/zhmem"
)

func TestEvalZh(t *testing.T) {
	data := filepath.Join("..", "..", "bench", "zhmem", "testdata")
	var out, errb bytes.Buffer
	if err := cmdEvalZh(context.Background(), []string{"--data", data, "--mode", "sparse,lazy", "--k", "1,5"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"| R@1 | R@5 |", "| sparse | - | ", "| lazy | hash-", "419 records, 145 questions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := cmdEvalZh(context.Background(), []string{"--data", data, "--mode", "sparse", "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var reps []zhmem.Report
	if err := json.Unmarshal(out.Bytes(), &reps); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if len(reps) != 1 || reps[0].Questions != 145 || len(reps[0].Recall) != 3 || reps[0].Embedded != 0 {
		t.Errorf("--json: %+v", reps)
	}

	for _, args := range [][]string{
		{"--data", data, "--k", "x"},
		{"--data", data, "--k", "0"},
		{"--data", data, "--mode", "eager"},
		{"--data", data, "extra"},
		{"--data", data, "--embedder", "nope:"},
	} {
		err := cmdEvalZh(context.Background(), args, &out, &errb)
		if !errors.As(err, new(usageError)) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	if err := cmdEvalZh(context.Background(), []string{"--data", t.TempDir()}, &out, &errb); !errors.Is(err, zhmem.ErrFormat) {
		t.Errorf("empty data dir: err = %v, want ErrFormat", err)
	}
}
