package wire

import (
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// Memory is one recalled record with its scores: in JSON, the record's
// fields then "score", "sparse", "dense", "kind" ("raw" or "core"), for a
// core memory its "unit" (id, type, topic, content, action_items,
// participants, source_ids, time, confidence), and, when explained,
// "reasons".
type Memory struct {
	StoredRecord
	// Score and Dense are computed in float32: encoded as such, they print
	// as 0.8, not 0.800000011920929.
	Score   float32           `json:"score"`
	Sparse  float64           `json:"sparse"`
	Dense   float32           `json:"dense"`
	Kind    string            `json:"kind"`
	Unit    *consolidate.Unit `json:"unit,omitempty"`
	Reasons []string          `json:"reasons,omitempty"`
}

// Stats is what a recall did: the records that passed the filters, the
// candidates, the embeddings computed and served from the cache, and the
// time per stage in microseconds.
type Stats struct {
	Mode         string           `json:"mode"`
	Text         string           `json:"text"`
	TimeExpr     string           `json:"time_expr,omitempty"`
	Since        *time.Time       `json:"since,omitempty"`
	Until        *time.Time       `json:"until,omitempty"`
	Filtered     int              `json:"filtered"`
	Hits         int              `json:"bm25_hits"`
	SessionTurns int              `json:"session_turns"`
	Candidates   int              `json:"candidates"`
	Embedded     int              `json:"embedded"`
	CacheHits    int              `json:"cache_hits"`
	Micros       map[string]int64 `json:"stage_us"`
}

// Result is the JSON form of an engine.Result.
type Result struct {
	Memories []Memory `json:"memories"`
	// RecallID names the recall to feedback.
	RecallID uint64 `json:"recall_id"`
	Stats    Stats  `json:"stats"`
}

// FromResult converts res. Memories is never null in the JSON.
func FromResult(res *engine.Result) Result {
	out := Result{Memories: make([]Memory, 0, len(res.Memories)), RecallID: res.RecallID}
	for _, m := range res.Memories {
		out.Memories = append(out.Memories, Memory{StoredRecord: FromRecord(m.Record),
			Score: float32(m.Score), Sparse: m.Sparse, Dense: float32(m.Dense), Kind: m.Kind, Unit: m.Unit, Reasons: m.Reasons})
	}
	st := res.Stats
	d := st.Durations
	out.Stats = Stats{
		Mode: string(st.Mode), Text: st.Text, TimeExpr: st.TimeExpr,
		Filtered: st.Filtered, Hits: st.Hits, SessionTurns: st.SessionTurns, Candidates: st.Candidates,
		Embedded: st.Embedded, CacheHits: st.CacheHits,
		Micros: map[string]int64{
			"filter": d.Filter.Microseconds(), "broad": d.Broad.Microseconds(), "fetch": d.Fetch.Microseconds(),
			"embed": d.Embed.Microseconds(), "score": d.Score.Microseconds(), "total": d.Total.Microseconds(),
		},
	}
	if !st.Since.IsZero() {
		out.Stats.Since = &st.Since
	}
	if !st.Until.IsZero() {
		out.Stats.Until = &st.Until
	}
	return out
}

// StoredRecord is a record read back by id (GET /v1/records/{id}).
type StoredRecord struct {
	ID      uint64              `json:"id"`
	Time    time.Time           `json:"time"`
	Agent   string              `json:"agent"`
	Session string              `json:"session"`
	Role    string              `json:"role"`
	Text    string              `json:"text"`
	Meta    map[string][]string `json:"meta"`
}

// FromRecord converts a stored record (from engine.DB.Get, which sets ID).
func FromRecord(r engine.Record) StoredRecord {
	return StoredRecord{ID: r.ID, Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
}
