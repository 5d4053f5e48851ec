// Command lazymem is the command-line interface to a lazymem store.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "lazymem: no commands yet")
	os.Exit(2)
}
