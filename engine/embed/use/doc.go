// Package use runs Universal Sentence Encoder Lite in process, in pure Go.
package use
