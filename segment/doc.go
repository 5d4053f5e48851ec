// Package segment is lazymem's durable append-only log.
package segment
