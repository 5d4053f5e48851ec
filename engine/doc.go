// Package engine is lazymem's public surface: it joins the append-only log
// (package segment), the broad-retrieval indexes (package index) and the
// vector kernels (package vecmath) into one agent-memory store that retrieves
// broadly and constructs selectively.
//
// The pipeline lands in stages; see the issues and docs/ARCHITECTURE.md.
package engine
