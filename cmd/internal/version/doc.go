// Package version says which build of lazymem is running: the --version
// output of the lazymem and lazymemd commands.
package version
