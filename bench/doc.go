// Package bench holds lazymem's workloads as a library: seeded generators of
// realistic agent histories, dataset loaders and the eager-RAG baselines that
// the go test -bench comparisons and `lazymem bench` run against.
package bench
