package workload

import (
	"fmt"
	"time"
)

// Defaults of Config. They are part of the workload's definition: changing
// one changes every generated corpus, so they move only with a note in
// docs/benchmarks/workload.md.
const (
	DefaultAgents   = 100
	DefaultSessions = 50
	DefaultSpan     = 90 * 24 * time.Hour
	DefaultFactRate = 0.01
	DefaultCJKRate  = 0.03
	DefaultToolRate = 0.25
	DefaultEchoRate = 0.3
	DefaultZipfS    = 1.1
	DefaultAskRate  = 0.005
	DefaultTalkRate = 0.03
)

// DefaultStart is the default Config.Start: 2026-01-01T00:00:00Z.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Config describes one synthetic workload. The zero value of every field but
// Records means "use the default"; Seed is used as given (0 is a valid seed).
type Config struct {
	// Seed drives every random choice. Same Config => same output, byte for
	// byte, on every platform.
	Seed int64
	// Records is the total number of records Next yields. Must be >= 0.
	Records int
	// Agents is the number of agents (tenants). Default 100.
	Agents int
	// Sessions is the number of sessions per agent. Default 50. Turns per
	// session follow from Records: the Records are split over the
	// Agents*Sessions sessions with log-normal weights, so sessions are bursts
	// of very different sizes (and with few records some are empty).
	Sessions int
	// Start is the first possible timestamp. Default 2026-01-01T00:00:00Z.
	Start time.Time
	// Span is the length of the history. Default 90 days. Timestamps are
	// non-decreasing over [Start, Start+Span).
	Span time.Duration
	// FactRate is the fraction of records that state a planted fact (default
	// 0.01; negative: none). Queries asks about these facts.
	FactRate float64
	// EchoRate is the probability that a planted fact is confirmed by the next
	// turn of the same session, which then is relevant too (default 0.3;
	// negative: never).
	EchoRate float64
	// CJKRate is the fraction of user/assistant records written in Chinese
	// (default 0.03; negative: none).
	CJKRate float64
	// ToolRate is the probability that an assistant turn is followed by a
	// tool turn (default 0.25; negative: never).
	ToolRate float64
	// AskRate is the probability that a user turn asks one of the planted-
	// fact questions itself ("What is Alice's badge number?") without the
	// answer: the hard negatives of real logs, where the question was asked
	// before it was answered (default 0.005; negative: never).
	AskRate float64
	// TalkRate is the probability that a user or assistant turn talks about
	// the topic of one of the agent's planted facts without stating it
	// ("The connection pool of billing-api is saturated again."): facts are
	// decided about things people discuss (default 0.03; negative: never).
	TalkRate float64
	// ZipfS is the exponent of the Zipf distributions over the vocabulary
	// (default 1.1; must be > 1).
	ZipfS float64
}

// EnsureDefaults fills the zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.Agents == 0 {
		c.Agents = DefaultAgents
	}
	if c.Sessions == 0 {
		c.Sessions = DefaultSessions
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Span == 0 {
		c.Span = DefaultSpan
	}
	if c.FactRate == 0 {
		c.FactRate = DefaultFactRate
	}
	if c.EchoRate == 0 {
		c.EchoRate = DefaultEchoRate
	}
	if c.CJKRate == 0 {
		c.CJKRate = DefaultCJKRate
	}
	if c.ToolRate == 0 {
		c.ToolRate = DefaultToolRate
	}
	if c.AskRate == 0 {
		c.AskRate = DefaultAskRate
	}
	if c.TalkRate == 0 {
		c.TalkRate = DefaultTalkRate
	}
	if c.ZipfS == 0 {
		c.ZipfS = DefaultZipfS
	}
}

// Validate reports a Config that cannot be generated. Call it after
// EnsureDefaults.
func (c *Config) Validate() error {
	switch {
	case c.Records < 0 || c.Records > 1<<31-1:
		return fmt.Errorf("%w: Records %d not in [0, 2^31)", ErrInvalidConfig, c.Records)
	case c.Agents < 1:
		return fmt.Errorf("%w: Agents %d < 1", ErrInvalidConfig, c.Agents)
	case c.Sessions < 1:
		return fmt.Errorf("%w: Sessions %d < 1", ErrInvalidConfig, c.Sessions)
	case c.Agents > 1<<20 || c.Sessions > 1<<20 || c.Agents*c.Sessions > 1<<24:
		return fmt.Errorf("%w: Agents*Sessions %d*%d too large (max 16M sessions)", ErrInvalidConfig, c.Agents, c.Sessions)
	case c.Span <= 0:
		return fmt.Errorf("%w: Span %v <= 0", ErrInvalidConfig, c.Span)
	case c.FactRate > 0.5:
		return fmt.Errorf("%w: FactRate %v > 0.5", ErrInvalidConfig, c.FactRate)
	case c.EchoRate > 1 || c.CJKRate > 1 || c.ToolRate > 1 || c.AskRate > 1 || c.TalkRate > 1:
		return fmt.Errorf("%w: a rate is > 1 (EchoRate %v, CJKRate %v, ToolRate %v, AskRate %v, TalkRate %v)",
			ErrInvalidConfig, c.EchoRate, c.CJKRate, c.ToolRate, c.AskRate, c.TalkRate)
	case !(c.ZipfS > 1):
		return fmt.Errorf("%w: ZipfS %v must be > 1", ErrInvalidConfig, c.ZipfS)
	}
	return nil
}
