package engine

import "testing"

// TestWordBoundaries: synonym keys and speaker names match on the
// tokenizer's word boundaries (index/analysis), so the engine and the
// index agree on what a word is.
func TestWordBoundaries(t *testing.T) {
	for _, c := range []struct {
		s, w string
		want bool
	}{
		{"the pool size", "pool", true},
		{"the pools", "pool", false},
		{"carpool", "pool", false},
		{"pool-size", "pool", true}, // joiners ('-', '_', '.') are no word runes
		{"db_pool", "pool", true},
		{"pool2", "pool", false},
		{"pool²", "pool", false}, // a number (not a decimal digit) continues the word
		{"josé's", "jose", false},
		{"jose\u0301", "jose", false}, // a combining mark continues the word
		{"数据库连接池的配置", "连接池", true},    // CJK: anywhere
		{"서울에서", "서울", true},          // Hangul is CJK for the tokenizer
		{"コーヒー好き", "コーヒー", true},      // U+30FC is part of Katakana words
		{"", "pool", false},
		{"pool", "", false},
	} {
		if got := containsWord(c.s, c.w); got != c.want {
			t.Errorf("containsWord(%q, %q) = %v, want %v", c.s, c.w, got, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"what did Caroline research?", "what did  research?"},
		{"caroline, and CAROLINE's", ", and 's"},
		{"Caroline_x Carolines", "_x Carolines"},
		{"Jose\u0301 said", "Jose\u0301 said"}, // a longer word
	} {
		if got := stripWords(c.text, []string{"Caroline", "Jose"}); got != c.want {
			t.Errorf("stripWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
