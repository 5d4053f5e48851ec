package zipf

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode"
)

func small() Config {
	return Config{Seed: 5, Records: 20000, Agents: 10, CJKShare: 0.2}
}

func TestWordsDistinctAndPlain(t *testing.T) {
	seen := map[string]int{}
	cjk := map[string]int{}
	for r := 0; r < maxVocab; r += 7 {
		w := Word(r)
		if prev, ok := seen[w]; ok {
			t.Fatalf("ranks %d and %d both spell %q", prev, r, w)
		}
		seen[w] = r
		if len(w) < 4 || strings.Trim(w, consonants+vowels) != "" || !strings.ContainsAny(w[len(w)-1:], finalVowels) {
			t.Fatalf("rank %d: %q is not a plain consonant-vowel word ending in a, o or u", r, w)
		}
		c := CJKWord(r)
		if prev, ok := cjk[c]; ok {
			t.Fatalf("CJK ranks %d and %d both spell %q", prev, r, c)
		}
		cjk[c] = r
		for _, ch := range c {
			if !unicode.Is(unicode.Han, ch) {
				t.Fatalf("CJK rank %d: %q has a non-Han rune %U", r, c, ch)
			}
		}
	}
}

func TestShape(t *testing.T) {
	cfg := small()
	recs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.EnsureDefaults()
	if len(recs) != cfg.Records {
		t.Fatalf("%d records, want %d", len(recs), cfg.Records)
	}
	rank := map[string]int{}
	for r := 0; r < cfg.Vocab; r++ {
		rank[Word(r)] = r
	}
	freq := make([]int, cfg.Vocab)
	agents := map[string]bool{}
	sessionAgent := map[string]string{}
	cjkAgents := map[string]bool{}
	lastSession := map[string]string{}
	switches := 0 // consecutive records of different sessions
	for i := range recs {
		rec := &recs[i]
		if i > 0 && !rec.Time.After(recs[i-1].Time) {
			t.Fatalf("record %d at %v not after record %d at %v", i, rec.Time, i-1, recs[i-1].Time)
		}
		agents[rec.Agent] = true
		if a, ok := sessionAgent[rec.Session]; ok && a != rec.Agent {
			t.Fatalf("session %s belongs to %s and %s", rec.Session, a, rec.Agent)
		}
		sessionAgent[rec.Session] = rec.Agent
		if i > 0 && recs[i-1].Session != rec.Session {
			switches++
		}
		lastSession[rec.Agent] = rec.Session
		if rec.CJK {
			cjkAgents[rec.Agent] = true
			continue
		}
		words := strings.Fields(strings.TrimSuffix(rec.Text, "."))
		if len(words) < cfg.MinWords || len(words) > cfg.MaxWords {
			t.Fatalf("record %d has %d words, want [%d, %d]", i, len(words), cfg.MinWords, cfg.MaxWords)
		}
		for _, w := range words {
			r, ok := rank[w]
			if !ok {
				t.Fatalf("record %d: %q is not in the vocabulary", i, w)
			}
			freq[r]++
		}
	}
	if len(agents) != cfg.Agents {
		t.Fatalf("%d agents wrote, want %d", len(agents), cfg.Agents)
	}
	if len(cjkAgents) != 2 {
		t.Fatalf("%d CJK agents, want 2 (0.2 of 10)", len(cjkAgents))
	}
	// Interleaving: with 10 agents drawn uniformly, about 9 in 10 neighbours
	// belong to different sessions.
	if f := float64(switches) / float64(len(recs)); f < 0.8 {
		t.Fatalf("only %.2f of neighbouring records switch session: sessions do not interleave", f)
	}
	if n := len(sessionAgent); n < cfg.Records/(2*cfg.SessionTurns) || n > 2*cfg.Records/cfg.SessionTurns {
		t.Fatalf("%d sessions for %d records of mean session length %d", n, cfg.Records, cfg.SessionTurns)
	}
	// Zipf: log f(r) against log(r+1) has slope -Exponent over the head.
	var sx, sy, sxx, sxy float64
	const head = 50
	for r := 0; r < head; r++ {
		x, y := math.Log(float64(r+1)), math.Log(float64(freq[r]))
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (head*sxy - sx*sy) / (head*sxx - sx*sx)
	if math.Abs(slope+cfg.Exponent) > 0.1 {
		t.Fatalf("rank-frequency slope over the top %d words %.3f, want %.3f", head, slope, -cfg.Exponent)
	}
}

func TestDeterministic(t *testing.T) {
	a, err := Generate(small())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(small())
	c2 := small()
	c2.Seed++
	c, _ := Generate(c2)
	same := func(x, y []Record) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("the same config gave different records")
	}
	if same(a, c) {
		t.Fatal("another seed gave the same records")
	}
	qa, _ := Queries(small(), a, 3, 1)
	qb, _ := Queries(small(), b, 3, 1)
	for i := range qa {
		if qa[i] != qb[i] {
			t.Fatalf("query %d differs between two draws with the same seed", i)
		}
	}
}

func TestQueries(t *testing.T) {
	cfg := small()
	recs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const per = 20
	qs, err := Queries(cfg, recs, per, 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != per*len(Classes)*len(Filters) {
		t.Fatalf("%d queries, want %d", len(qs), per*len(Classes)*len(Filters))
	}
	rank := map[string]int{}
	for r := 0; r < 50000; r++ {
		rank[Word(r)] = r
		rank[CJKWord(r)] = r
	}
	var script [2]int // latin, cjk records
	for j := range recs {
		if recs[j].CJK {
			script[1]++
		} else {
			script[0]++
		}
	}
	cells := map[[2]string]int{}
	for i, q := range qs {
		cells[[2]string{string(q.Class), string(q.Filter)}]++
		words := strings.Fields(q.Text)
		lo, hi, nlo, nhi := 10, 3010, 2, 4
		switch q.Class {
		case Rare:
			lo, hi = 3010, 30000
		case Common:
			lo, hi = 0, 100
		case Long:
			lo, hi, nlo, nhi = 0, 50000, 8, 12
		}
		if len(words) < nlo || len(words) > nhi {
			t.Fatalf("query %d (%s): %d words, want [%d, %d]", i, q.Class, len(words), nlo, nhi)
		}
		for _, w := range words {
			r, ok := rank[w]
			if !ok || r < lo || r >= hi {
				t.Fatalf("query %d (%s): word %q rank %d (known %v), want [%d, %d)", i, q.Class, w, r, ok, lo, hi)
			}
			if (q.Class == CJK) != !strings.ContainsAny(w, consonants) {
				t.Fatalf("query %d (%s): word %q in the wrong script", i, q.Class, w)
			}
		}
		// Every filter selects records of the query's script.
		match := 0
		for j := range recs {
			rec := &recs[j]
			if (q.Agent != "" && rec.Agent != q.Agent) || (q.Session != "" && rec.Session != q.Session) ||
				(!q.Since.IsZero() && rec.Time.Before(q.Since)) || (!q.Until.IsZero() && !rec.Time.Before(q.Until)) {
				continue
			}
			if rec.CJK == (q.Class == CJK) {
				match++
			}
		}
		if match == 0 {
			t.Fatalf("query %d (%s/%s) selects no record of its script", i, q.Class, q.Filter)
		}
		switch q.Filter {
		case None:
			if want := script[0]; (q.Class == CJK && match != script[1]) || (q.Class != CJK && match != want) {
				t.Fatalf("query %d: no filter but %d records of its script", i, match)
			}
		case Window:
			if q.Until.Sub(q.Since) != WindowLength || q.Agent != "" {
				t.Fatalf("query %d: window %v..%v agent %q", i, q.Since, q.Until, q.Agent)
			}
		case Session:
			if q.Session == "" || !strings.HasPrefix(q.Session, q.Agent) {
				t.Fatalf("query %d: session %q of agent %q", i, q.Session, q.Agent)
			}
		}
	}
	for _, c := range Classes {
		for _, f := range Filters {
			if n := cells[[2]string{string(c), string(f)}]; n != per {
				t.Fatalf("cell %s/%s has %d queries, want %d", c, f, n, per)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		mut   func(*Config)
	}{
		{"Records", func(c *Config) { c.Records = -1 }},
		{"Vocab", func(c *Config) { c.Vocab = 100 }},
		{"Exponent", func(c *Config) { c.Exponent = 0.9 }},
		{"MinWords", func(c *Config) { c.MinWords, c.MaxWords = 10, 5 }},
		{"Days", func(c *Config) { c.Days = 3 }},
		{"CJKShare", func(c *Config) { c.CJKShare = 2 }},
	} {
		c := Config{}
		tc.mut(&c)
		_, err := Generate(c)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want ErrConfig naming the field", tc.field, err)
		}
	}
}
