// Package vecmath holds float32 vector kernels and top-k selection.
package vecmath
