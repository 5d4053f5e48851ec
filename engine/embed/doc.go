// Package embed defines the Embedder interface of lazymem and its
// implementations. The engine embeds only the candidates a query touches,
// through a cache keyed by Embedder.Name and a hash of the text, so Name
// must change whenever the vectors for a text could change.
//
// # hash (the default)
//
// NewHash: a zero-dependency, deterministic, lexical embedder. A text is
// NFKC-normalized (only when it is not already: ASCII and most text skip
// this), lowercased per rune and split into words: runs of letters, digits
// and combining marks; every Han ideograph, hiragana and katakana is a word
// of its own, so Chinese and Japanese need no segmenter. Features:
//
//	word unigram        weight 1.0   "pool"; an English word (ASCII
//	                                 letters) by its Porter2 stem, as in
//	                                 the BM25 index: "painting" -> "paint"
//	word bigram         weight 0.7   "connection pool" (of the unigrams
//	                                 above, so CJK character bigrams too)
//	character n-gram    weight 0.6   "^po", "poo", "ool", "ol$" (n = 3, per
//	                                 non-CJK word, with boundary markers)
//	stopword unigram    weight 0.1   "what", "did", "the" (the 127-word
//	                                 NLTK/Snowball English list, frozen in
//	                                 hash-v1); Chinese function characters
//	                                 "的", "了", "我", "什", "么" (82, since
//	                                 hash-v3); stopwords get no n-grams
//	                                 and are not stemmed
//	bigram with a stopword  0.2      "did you", "the pool"
//
// The weights were chosen on LoCoMo dense-only evidence recall (see
// docs/benchmarks/embed.md): the stopword down-weighting moved R@10 from
// 0.33 to 0.43 at d=384; character n-grams are worth about 0.08 of R@10.
//
// Each feature is hashed with 64-bit FNV-1a over its runes, seeded by its
// kind and finished with the murmur3 fmix64 mixer; the high 32 bits pick one
// of Dim buckets (multiply-shift) and bit 2 the sign, so colliding features
// cancel in expectation instead of piling up. A feature seen tf times in
// the text adds weight * (1 + ln tf) (sublinear tf). The vector is then
// L2-normalized. A text without any word (empty, only spaces or
// punctuation) is the zero vector: its cosine with anything is 0, never NaN.
//
// Name: "hash-v3-d<Dim>", plus "-c<n>" when the n-gram length is not 3
// ("-c0": no character n-grams). The version fixes the tokenization, hash
// function, weights and tf formula above; changing any of them takes a new
// one. v2 added the stemming of word features (character n-grams still see
// the surface form): on LoCoMo it lifted dense-only R@1/5/10/25 from
// .287/.468/.554/.642 to .290/.489/.566/.648 (docs/benchmarks/locomo.md).
// v3 down-weights Chinese function characters (pronouns, particles,
// auxiliaries, question words: every CJK character is a word here, so they
// weighed as much as "虾" or "过敏" and dominated short Chinese turns): on
// the Chinese set of bench/zhmem dense-only R@1/5/10 went from
// .300/.482/.593 to .328/.541/.616; English vectors are unchanged.
// A store's vectors cached under an older version are recomputed on demand.
//
// Embed makes one allocation for the batch's vectors; AppendVector embeds
// one text into a caller's buffer with no allocation.
//
// # openai
//
// NewOpenAI: any OpenAI-compatible POST {BaseURL}/embeddings endpoint
// (OpenAI, Ollama, vLLM, llama.cpp server, TEI, LocalAI). Request body
// {"model", "input": [...], "encoding_format": "float"}; response
// {"data": [{"index", "embedding"}]}, placed by "index"; an embedding sent
// as base64 little-endian float32 is accepted too, and asked for with
// EncodingFormat "base64" (4x smaller responses). Number arrays are parsed
// by a small dedicated parser, about 4x faster than encoding/json (see
// BenchmarkDecodeResponse), fuzzed against encoding/json. An Embed call is split
// into batches of BatchSize run with at most Concurrency in flight; each
// HTTP attempt has its own Timeout; 429, 5xx and network errors are retried
// up to MaxRetries times with exponential backoff and jitter, or after the
// server's Retry-After / retry-after-ms; other 4xx fail at once. Errors wrap
// ErrUnavailable (the endpoint cannot be reached: names the URL), ErrHTTP
// (status plus the server's {"error": {"message", "type", "code"}} or
// {"error": "..."}), ErrResponse (malformed JSON, wrong count, bad index) or
// ErrDim (names expected and got). The dimension is configured (Dim) or
// learned from the first response (Probe makes one on purpose), then
// enforced. The API key comes from APIKey or
// the environment variable APIKeyEnv (default OPENAI_API_KEY) and never
// appears in an error.
//
// Name: "openai:<model>" unless OpenAIOptions.Name overrides it (do so when
// two servers serve different weights under one model name).
package embed
