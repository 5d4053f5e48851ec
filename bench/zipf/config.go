package zipf

import (
	"fmt"
	"time"
)

// Config is one corpus of the family. The zero value, after EnsureDefaults,
// is the corpus of the issue that introduced the package: 200,000 records,
// Zipf(1.1) over 50,000 words, 8-48 words a record, 100 agents, 90 days.
type Config struct {
	// Seed draws everything. Used as given (0 is a valid seed).
	Seed int64
	// Records is the number of records. Default 200000.
	Records int
	// Vocab is the vocabulary size of each script. Default 50000.
	Vocab int
	// Exponent is the Zipf exponent s of P(rank r) ∝ (r+1)^-s; it must be
	// above 1. Default 1.1.
	Exponent float64
	// MinWords and MaxWords bound a record's length in words, drawn
	// uniformly. Defaults 8 and 48.
	MinWords, MaxWords int
	// Agents is the number of agents; each record belongs to one, drawn
	// uniformly, so sessions of different agents interleave. Default 100.
	Agents int
	// SessionTurns is the mean number of records of a session; a session's
	// length is uniform in [1, 2*SessionTurns-1]. Default 20.
	SessionTurns int
	// Days is the span of the records' times. Default 90.
	Days int
	// CJKShare is the fraction of agents writing Chinese-script text, in
	// [0, 1]. Default 0.1; negative means none.
	CJKShare float64
	// Start is the time of the first record. Default 2026-01-01 UTC.
	Start time.Time
}

// EnsureDefaults fills zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.Records == 0 {
		c.Records = 200000
	}
	if c.Vocab == 0 {
		c.Vocab = 50000
	}
	if c.Exponent == 0 {
		c.Exponent = 1.1
	}
	if c.MinWords == 0 {
		c.MinWords = 8
	}
	if c.MaxWords == 0 {
		c.MaxWords = max(48, c.MinWords)
	}
	if c.Agents == 0 {
		c.Agents = 100
	}
	if c.SessionTurns == 0 {
		c.SessionTurns = 20
	}
	if c.Days == 0 {
		c.Days = 90
	}
	switch {
	case c.CJKShare == 0:
		c.CJKShare = 0.1
	case c.CJKShare < 0:
		c.CJKShare = 0
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
}

// Describe names the member of the family c is (its defaults filled), for
// a report's header: what another run needs to draw the same corpus.
func (c Config) Describe() string {
	c.EnsureDefaults()
	return fmt.Sprintf("Zipf(%g) over %d words a script, %d-%d words a record, %d agents (%g of them writing Chinese script), sessions of %d turns on average, %d days, seed %d",
		c.Exponent, c.Vocab, c.MinWords, c.MaxWords, c.Agents, c.CJKShare, c.SessionTurns, c.Days, c.Seed)
}

// Validate reports the first unusable field.
func (c *Config) Validate() error {
	switch {
	case c.Records < 1:
		return fmt.Errorf("%w: Records %d: must be at least 1", ErrConfig, c.Records)
	case c.Vocab < minVocab:
		return fmt.Errorf("%w: Vocab %d: must be at least %d (the rare query class draws ranks up to %d)", ErrConfig, c.Vocab, minVocab, minVocab)
	case c.Vocab > maxVocab:
		return fmt.Errorf("%w: Vocab %d: must be at most %d (CJK spelling)", ErrConfig, c.Vocab, maxVocab)
	case !(c.Exponent > 1):
		return fmt.Errorf("%w: Exponent %v: must be above 1", ErrConfig, c.Exponent)
	case c.MinWords < 1 || c.MaxWords < c.MinWords:
		return fmt.Errorf("%w: MinWords %d, MaxWords %d: need 1 <= MinWords <= MaxWords", ErrConfig, c.MinWords, c.MaxWords)
	case c.Agents < 1:
		return fmt.Errorf("%w: Agents %d: must be at least 1", ErrConfig, c.Agents)
	case c.SessionTurns < 1:
		return fmt.Errorf("%w: SessionTurns %d: must be at least 1", ErrConfig, c.SessionTurns)
	case c.Days < 8:
		return fmt.Errorf("%w: Days %d: must be at least 8 (queries use 7-day windows)", ErrConfig, c.Days)
	case c.CJKShare > 1:
		return fmt.Errorf("%w: CJKShare %v: must be in [0, 1]", ErrConfig, c.CJKShare)
	}
	return nil
}

// cjkAgents is the number of agents writing CJK text: the first ones.
func (c *Config) cjkAgents() int {
	n := int(float64(c.Agents)*c.CJKShare + 0.5)
	if c.CJKShare > 0 && n == 0 {
		n = 1
	}
	return n
}
