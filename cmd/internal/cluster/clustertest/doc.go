// Package clustertest starts NATS JetStream servers inside a test
// process, on loopback with random ports and temporary directories, for
// the tests of the cluster mode (no external binary needed).
package clustertest
