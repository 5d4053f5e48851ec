package main

import "errors"

// Sentinel errors of the daemon.
var (
	// errFlag is wrapped by every bad command line.
	errFlag = errors.New("lazymem: bad flag")
	// errKeys is wrapped by every problem of a --keys file; the message
	// names the key's field.
	errKeys = errors.New("lazymem: bad keys file")
	// errCloseTimeout: closing the store did not finish within
	// --shutdown-timeout. The log holds every acknowledged record; what
	// the index had not flushed is re-indexed from it on the next open.
	errCloseTimeout = errors.New("lazymem: closing the store did not finish within --shutdown-timeout (the next open re-indexes from the log what was not flushed)")
)
