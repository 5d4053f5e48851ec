// Package logbuf holds Buffer, a bytes.Buffer safe for a logger's
// concurrent writes while a test reads what was logged so far. Tests of
// the daemon and of the cluster node share it; library code never imports
// it.
package logbuf
