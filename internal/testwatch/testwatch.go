package testwatch

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"time"
)

// module is the import path prefix whose frames mark a goroutine as ours.
const module = "github.com/lazymem/lazymem/"

// Start arms the watchdog for a test binary: call it from TestMain before
// m.Run. It parses the test flags (flag.Parse) to read -test.timeout, and
// does nothing without one. The timer holds no goroutine until it fires,
// so goroutine-leak checks do not see it.
func Start() {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.timeout")
	if f == nil {
		return
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return
	}
	d, _ := g.Get().(time.Duration)
	if d <= 0 {
		return
	}
	time.AfterFunc(d-margin(d), func() { report(os.Stderr, stacks()); os.Exit(2) })
}

// margin is how long before the timeout the watchdog fires: a tenth of
// it, at most 20 s.
func margin(d time.Duration) time.Duration {
	return min(d/10, 20*time.Second)
}

// stacks returns every goroutine's stack.
func stacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

var testFunc = regexp.MustCompile(`github\.com/lazymem/lazymem/[\w/.-]*\.((?:Test|Fuzz|Benchmark)\w+)(?:\.func[\d.]+)?\(`)

// report writes the goroutines running this module's code, then a summary
// naming the test functions on their stacks.
func report(w *os.File, all []byte) {
	var ours [][]byte
	tests := map[string]string{}
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		if !bytes.Contains(g, []byte(module)) {
			continue
		}
		ours = append(ours, g)
		head, _, _ := bytes.Cut(g, []byte("\n"))
		for _, m := range testFunc.FindAllSubmatch(g, -1) {
			if string(m[1]) == "TestMain" {
				continue
			}
			if _, seen := tests[string(m[1])]; !seen {
				tests[string(m[1])] = string(head)
			}
		}
	}
	fmt.Fprintf(w, "\ntestwatch: the test binary is about to time out; the goroutines running lazymem code (%d):\n\n", len(ours))
	for _, g := range ours {
		fmt.Fprintf(w, "%s\n\n", g)
	}
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "testwatch: hung: %d test function(s) on those stacks:\n", len(names))
	for _, n := range names {
		fmt.Fprintf(w, "testwatch:   %s  (%s)\n", n, tests[n])
	}
}
