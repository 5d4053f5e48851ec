// Package analysis turns text into index terms and parses user query
// strings. The index analyzes records and queries with the same Analyzer,
// so a word matches whatever script, case or form it was typed in.
//
// # Analysis
//
// AppendTokens runs these steps:
//
//  1. Normalize: NFKC, so fullwidth "ＡＢＣ１２３" is "ABC123" and "ﬁle" is
//     "file". ASCII text, and text whose runes NFKC cannot change, skip it;
//     fullwidth ASCII (common in CJK chat) is mapped by hand; invalid UTF-8
//     bytes become spaces first.
//  2. Segment into words, a hand-rolled subset of UAX #29 tuned for chat and
//     code: a word is a run of letters, digits and combining marks. Single
//     joiners ". - @ : / & _" between two alphanumerics keep an identifier
//     whole (sess_abc123, v2.1, 192.168.0.1, user@example.com, long-term);
//     an apostrophe between two letters stays inside the word (don't,
//     O'Neil, HikariCP's). Everything else separates words: spaces,
//     punctuation, symbols, emoji, invalid UTF-8 bytes.
//  3. Split identifiers into parts at joiners and at camelCase boundaries
//     (camelCase, HikariCP -> hikari cp, HTTPServer -> http server; an
//     acronym's plural stays whole: IDs, PDFs). A word with several parts
//     is emitted whole, lowercased, at position p, then each part at p,
//     p+1, ... (the layout of Lucene's word-delimiter filter): "long-term
//     memory" matches the phrase "long term memory", and "hikari" finds
//     "HikariCP". Letters and digits are not split apart (abc123, utf8,
//     ipv4 stay one part).
//  4. CJK (Han, Hiragana, Katakana, Hangul) runs become overlapping
//     character bigrams at consecutive positions, and each character is
//     also emitted alone at the position of the bigram it starts
//     (Options.CJKUnigrams, on by default): "数据库连接池" -> 数 数据 据
//     据库 库 库连 连 连接 接 接池 池, so the query "连接池" finds it by
//     its bigrams (连接 接池) and "猫" finds "我的猫很可爱". Unigrams also
//     let a paraphrase that shares characters but no word score ("什么
//     不能吃" and "吃海鲜的时候要避开虾" share 吃); BM25's IDF keeps the
//     frequent function characters cheap, and bigram matches rank first.
//     They cost about twice the CJK postings. With CJKUnigrams off, a lone
//     CJK character is the only unigram.
//  5. Fold case: ASCII by table, the rest with Unicode full case folding
//     (Straße -> strasse, final sigma -> σ), then NFKC again if folding
//     broke it. U+2019 in a word becomes an ASCII apostrophe.
//  6. Drop stopwords (Options.Stopwords, the 127-word NLTK/Snowball English
//     list; it beat Lucene's 33 words by 5 points of R@10 on LoCoMo); the
//     stopword keeps its position.
//  7. Stem words made of ASCII letters and apostrophes with English Porter2
//     (github.com/kljensen/snowball's stems, computed on bytes by package
//     porter2), when Options.Stem. Identifiers with
//     digits or joiners, and other scripts, are not stemmed. A camelCase
//     word is letters only and is stemmed whole like any word
//     (camelCase -> camelcas), so the lowercase query "camelcase" matches
//     it; case is only used to find parts.
//  8. Drop terms longer than Options.MaxTokenLen bytes (a long identifier's
//     parts are still kept).
//
// Emoji are dropped: they are symbols, not words, the query side drops them
// too, and keeping them would put the most frequent "terms" of chat into the
// index for no recall. An emoji between two words separates them
// ("db🔥pool" -> db, pool).
//
// AppendTokens returns terms with positions (for phrase and proximity
// scoring); AppendTerms returns the terms alone. Both append to the
// caller's slice and, once the words are cached, do not allocate (text that
// NFKC changes beyond fullwidth ASCII costs one allocation inside x/text).
//
// Steps 5 to 7 depend only on the surface form of a word, so their result is
// memoized in a lock-free cache (Options.CacheSize): a cached word costs one
// hash and a probe or two, and no allocation, which also hides the stemmer's
// cost (about 1 µs and 20 allocations per word: see
// docs/benchmarks/analysis.md). Version and Analyzer.Signature name the
// rules so that an index built under other rules can be detected.
//
// # Query grammar
//
// ParseQuery reads a query string (at most MaxQueryLen bytes of valid
// UTF-8):
//
//	query   = { space } [ clause { space { space } clause } ] { space } .
//	clause  = [ "-" ] ( phrase | filter | word ) .
//	phrase  = '"' { char | '\"' | '\\' } '"' .        (not empty or blank)
//	filter  = key ":" ( value | phrase ) .
//	key     = letter { letter | digit | "_" | "." | "-" } .   (ASCII)
//	value   = nonspace-not-quote { nonspace-not-quote } .     (not starting with "/" or ":")
//	word    = nonspace-not-quote { nonspace-not-quote } .
//
// Semantics: words and phrases are scored (Query.Text); "-" before a word or
// phrase excludes records containing it (Query.Excluded); key:value is a
// metadata filter, several values of one key are ORed and different keys
// ANDed (Query.Where); -key:value excludes (Query.Not). Keys and values are
// returned as typed. Agent, session and role are filters like any other
// key (agent:a1 session:s2 role:user); the engine maps them.
//
// To keep natural-language queries working, these are words, not errors or
// filters: a trailing colon ("Note:"), a URL ("http://x"), a scope
// ("std::vector"), a word starting with a non-letter key ("12:30"), ":)", and
// a lone "-" surrounded by spaces. These are errors (*QueryError with a byte
// position, wrapping a sentinel): an unclosed quote (ErrUnclosedQuote), an
// empty or blank phrase (ErrEmptyPhrase), a filter without a key such as
// ":db" (ErrEmptyKey), an empty quoted value key:"" (ErrEmptyValue), invalid
// UTF-8 (ErrInvalidUTF8), a query over MaxQueryLen (ErrQueryTooLong).
package analysis
