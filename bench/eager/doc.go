// Package eager holds the eager-RAG baselines lazymem is compared with
// (issue 6): systems that EMBED EVERY RECORD AT WRITE TIME and answer a query
// by vector search alone. They use the same embedder as lazymem and embed the
// same constructed text, "Role: Text" (engine.DefaultConstruct), so the only
// difference measured is when, and how much, embedding happens.
//
// Three implementations of Baseline:
//
//	chromem  github.com/philippgille/chromem-go v0.7: one in-memory
//	         collection, vectors computed by our embedder in batches and
//	         added with AddConcurrently; the agent scope is chromem's own
//	         metadata filter (where agent=...); exhaustive cosine search.
//	hnsw     an HNSW graph as the paper draws it (hnswGraph: layers, the
//	         neighbour heuristic, a layer's search stopping when its nearest
//	         unexpanded candidate is farther than the worst kept), one graph
//	         per agent (so the agent scope holds exactly), distance 1 - dot
//	         (vectors are unit length). It replaced coder/hnsw v0.6, whose
//	         search stopped at the first step that found no closer node.
//	flat     exact search with vecmath.DotBatch over each agent's vectors,
//	         stored contiguously in time order, then vecmath.TopK.
//
// A time window [Since, Until) is applied exactly by flat (records of an agent
// are in time order, so the window is a row range found by binary search).
// chromem's metadata filter only tests equality, and HNSW cannot filter while
// it walks the graph, so both post-filter: they ask for k*Oversample
// neighbours, or 2k/s when the window holds a share s of the agent's records
// (counted from the record times), drop those outside the window, and double
// the request until k survive or the agent's records are exhausted. For chromem (exhaustive) this
// converges to the exact answer; for HNSW it is as exact as the graph search.
//
// Embedding cost is counted by Meter, which wraps any embed.Embedder and counts
// Embed calls, texts, and the requests a remote API limited to APIBatch texts
// per request would have received (ceil(texts/APIBatch) per call). The suite
// turns those counts into time with a stated per-request latency model.
//
// Baselines are not safe for concurrent use by several goroutines unless stated;
// the suite drives them from one goroutine.
package eager
