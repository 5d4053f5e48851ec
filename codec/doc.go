// Package codec holds lazymem's binary encodings.
package codec
