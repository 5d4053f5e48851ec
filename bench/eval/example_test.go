package eval_test

import (
	"context"
	"fmt"
	"os"

	"github.com/lazymem/lazymem/bench/eval"
	"github.com/lazymem/lazymem/engine"
)

// Run the evaluation on a directory of LoCoMo-format files and print the
// JSON of each run (here: the sparse mode over the test fixture).
func ExampleRun() {
	rep, err := eval.Run(context.Background(), eval.Config{
		DataDir: "testdata/tiny",
		Modes:   []engine.Mode{engine.ModeSparse},
		Ks:      []int{1, 5},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rep.WriteJSON(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"questions":7,"recall":{"1":0.6428571428571429,"5":1},"by_category":{"1":{"name":"multi-hop","questions":1,"recall":{"1":0.5,"5":1}},"2":{"name":"temporal","questions":2,"recall":{"1":1,"5":1}},"3":{"name":"open-domain","questions":1,"recall":{"1":0,"5":1}},"4":{"name":"single-hop","questions":3,"recall":{"1":0.6666666666666666,"5":1}}},"embedded":0,"turns":8}
}
