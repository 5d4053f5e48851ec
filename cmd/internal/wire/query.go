package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// Query is the JSON form of an engine.Query (the body of POST /v1/recall).
// Field names are the engine's in snake case; absent or zero fields take
// the engine's defaults, except parse_time, which is on unless false (as in
// the CLI: an agent's question says "yesterday" and means it).
type Query struct {
	Text            string                     `json:"text"`
	Agent           string                     `json:"agent"`
	Agents          []string                   `json:"agents"`
	Sessions        []string                   `json:"sessions"`
	Roles           []string                   `json:"roles"`
	Since           *string                    `json:"since"` // RFC 3339
	Until           *string                    `json:"until"` // RFC 3339
	Where           map[string]json.RawMessage `json:"where"` // key: string or array of strings
	Not             map[string]json.RawMessage `json:"not"`
	K               int                        `json:"k"`
	Candidates      int                        `json:"candidates"`
	CurrentSession  string                     `json:"current_session"`
	SessionTurns    int                        `json:"session_turns"`
	Mode            string                     `json:"mode"`   // lazy, sparse, dense
	Fusion          string                     `json:"fusion"` // weighted, rrf
	DenseWeight     float64                    `json:"dense_weight"`
	SpeakerBoost    float64                    `json:"speaker_boost"`
	RecencyHalfLife string                     `json:"recency_half_life"` // Go duration ("72h") or "off"
	RecencyWeight   float64                    `json:"recency_weight"`
	Now             *string                    `json:"now"` // RFC 3339
	ParseTime       *bool                      `json:"parse_time"`
	Synonyms        map[string][]string        `json:"synonyms"`
	Explain         bool                       `json:"explain"`
	Tier            string                     `json:"tier"` // all, core, raw
	FallbackScan    int                        `json:"fallback_scan"`
	NoExpansion     bool                       `json:"no_expansion"`
	FeedbackDocs    int                        `json:"feedback_docs"`
	MaxDenseScan    int                        `json:"max_dense_scan"`
}

// ParseQuery decodes a query. Errors are *Error naming the field; the
// engine validates the values (K range, since < until, ...) when recalling.
func ParseQuery(data []byte) (engine.Query, error) {
	var jq Query
	if err := decodeStrict(data, &jq, "a query"); err != nil {
		return engine.Query{}, err
	}
	q := engine.Query{
		Text: jq.Text, Agent: jq.Agent, Agents: jq.Agents, Sessions: jq.Sessions, Roles: jq.Roles,
		K: jq.K, Candidates: jq.Candidates, CurrentSession: jq.CurrentSession, SessionTurns: jq.SessionTurns,
		Mode: engine.Mode(jq.Mode), Fusion: engine.Fusion(jq.Fusion), DenseWeight: jq.DenseWeight,
		SpeakerBoost: jq.SpeakerBoost, RecencyWeight: jq.RecencyWeight,
		ParseTime: jq.ParseTime == nil || *jq.ParseTime, Synonyms: jq.Synonyms, Explain: jq.Explain,
		Tier: engine.Tier(jq.Tier), FallbackScan: jq.FallbackScan, NoExpansion: jq.NoExpansion,
		FeedbackDocs: jq.FeedbackDocs, MaxDenseScan: jq.MaxDenseScan,
	}
	var err error
	for _, t := range []struct {
		field string
		in    *string
		out   *time.Time
	}{{"since", jq.Since, &q.Since}, {"until", jq.Until, &q.Until}, {"now", jq.Now, &q.Now}} {
		if t.in == nil {
			continue
		}
		if *t.out, err = parseTime(t.field, *t.in); err != nil {
			return q, err
		}
	}
	switch jq.RecencyHalfLife {
	case "":
	case "off":
		q.RecencyHalfLife = -1 // the engine's "no recency prior"
	default:
		d, err := time.ParseDuration(jq.RecencyHalfLife)
		if err != nil || d <= 0 {
			return q, fieldErr("recency_half_life", fmt.Sprintf("%q is not a positive duration (like 72h) or off", Truncate(jq.RecencyHalfLife, 40)))
		}
		q.RecencyHalfLife = d
	}
	if q.Where, err = parseMeta("where", jq.Where); err != nil {
		return q, err
	}
	if q.Not, err = parseMeta("not", jq.Not); err != nil {
		return q, err
	}
	return q, nil
}
