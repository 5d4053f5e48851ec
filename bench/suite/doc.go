// Package suite runs the lazy-vs-eager comparison of issue 6: the same seeded
// workload (bench/workload) is written into lazymem (package engine, in a
// temporary directory) and into each eager-RAG baseline (package
// bench/eager), the same queries are asked of each, and one Report says per
// system what it cost and what it found. `lazymem bench` prints Run's
// Report; the go test -bench benchmarks of this package time the same
// systems at 10k records.
//
// # What is measured
//
//   - ingest: wall time to write every record in batches of Config.Batch
//     (lazymem: AppendBatch, durable, indexed, nothing embedded; eager: every
//     record's "Role: Text" embedded and inserted);
//   - embedding work: Embed calls, texts, and the requests a remote API taking
//     at most APIBatch (96) texts per request would have served;
//   - size: lazymem's directory on disk after Close; for the eager systems the
//     payload they hold in memory (vectors, text, ids, metadata; hnsw: its
//     exported graph); and for every system the Go heap in use after ingest
//     minus before (after a GC);
//   - recall latency p50/p99 over every query (labelled and keyword);
//   - quality on the labelled queries (planted, paraphrase, temporal), whose
//     relevant records are known by construction: R@k, the mean over queries
//     of |relevant in top k| / |relevant| (evidence recall, as in LoCoMo), and
//     Hit@k, the fraction of queries with at least one relevant record in the
//     top k;
//   - end to end: ingest plus every query, one after the other.
//
// # The remote-API latency model
//
// Sleeping through a remote embedder's latency at 1M records (10,417 requests
// of 96 texts at 150 ms: 26 minutes per eager system) would measure nothing but
// the sleep, so the model is analytical: modelled time = measured time (with
// the near-free hash embedder) + modelled requests x LatencyPerCall, requests
// sent one after the other (no concurrency on either side). The Report states
// the model and prints measured and modelled figures side by side. It also
// gives the break-even per-request latency above which lazymem's end-to-end
// time is lower, and the number of queries after which eager would win back
// its write-time embedding (the crossover).
package suite
