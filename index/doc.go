// Package index holds lazymem's broad-retrieval structures: roaring bitmap
// postings for metadata and time, and a BM25 inverted index with top-k
// pruning that can be restricted to a filter bitmap.
package index
