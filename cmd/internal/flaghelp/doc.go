// Package flaghelp checks the help a command's flag set prints: every
// placeholder must read as a value.
//
// Go's flag package shows as a flag's placeholder the first back-quoted
// word of its usage string, else the name of its type ("value" for a
// flag.Value): "model files from `make use-model`" once printed
// "-embedder make use-model". The lazymem and lazymemd tests render their
// help and hand it to Check.
package flaghelp
