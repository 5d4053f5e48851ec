// Package bench holds lazymem's workloads as a library: seeded generators of
// realistic agent histories (bench/workload), dataset loaders (bench/locomo),
// the peers lazymem is measured against, and the go test -bench comparisons
// and `lazymem bench` reports built on them.
//
// # Bleve side by side (issue 3, acceptance point 4)
//
// The root package builds, over the same generated corpus (Load), a Bleve v2
// index (BuildBleve: scorch, batches of 1000, text analysed by Bleve's "en"
// analyzer, agent/session/role and metadata as keyword fields, time as a
// datetime field, BM25 scoring) and a lazymem index.Index (BuildLazymem),
// then runs the same 2-4 term queries, each scoped to one agent and a 7-day
// window, on both (SideBySide.Run). It reports p50/p99 latency at top-10 and
// top-100, the Bleve/lazymem ratio, and the top-k overlap of Bleve with
// lazymem and of lazymem's pruned Search with its SearchExhaustive.
//
// Bleve is timed in two formulations of the same query on the same index:
// the restrictions as the non-scoring filter clause of a boolean query
// ("bleve"), and as zero-boost clauses of a conjunction ("bleve-conj"), which
// Bleve evaluates by leapfrogging. Both give the same scores; the faster one
// is the fair peer.
//
// Sizes come from LAZYMEM_BENCH_N (default 100000); the indexes are built
// once per test process and shared by the sub-benchmarks:
//
//	go test ./bench -run '^$' -bench 'Broad|Ingest' -count 3
//	LAZYMEM_BENCH_REPORT=1 LAZYMEM_BENCH_N=1000000 go test ./bench -run SideBySideReport -v -timeout 2h
//
// Overlap (|A ∩ B| / max(|A|, |B|) over the top k ids) below 1 between Bleve
// and lazymem is expected and explained in docs/benchmarks/bleve.md: the two
// analyzers split identifiers differently, and Bleve's "BM25" uses sqrt(tf),
// a squared idf through its query norm and a coordination factor.
package bench
