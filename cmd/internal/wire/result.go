package wire

import (
	"time"

	"github.com/lazymem/lazymem/engine"
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
	Score  float32 `json:"score"`
	Sparse float64 `json:"sparse"`
	Dense  float32 `json:"dense"`
	Kind   string  `json:"kind"`
	// Unit is left out of a raw memory: it applies to core ones only.
	Unit    *Unit    `json:"unit,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// Stats is what a recall did: every field of engine.RecallStats in snake
// case (TestStatsCoverEngine fails when the engine gains one the JSON does
// not carry). Like the records, it never holds null: strings are "", lists
// [], and only Since and Until are left out, when the window is open.
type Stats struct {
	Mode           string           `json:"mode"`
	Text           string           `json:"text"`
	DenseText      string           `json:"dense_text"`
	TimeExpr       string           `json:"time_expr"`
	Since          *time.Time       `json:"since,omitempty"`
	Until          *time.Time       `json:"until,omitempty"`
	Speakers       []string         `json:"speakers"`
	Expansion      string           `json:"expansion"`
	Notes          []string         `json:"notes"`
	Filtered       int              `json:"filtered"`
	Hits           int              `json:"bm25_hits"`
	SessionTurns   int              `json:"session_turns"`
	Fallback       int              `json:"fallback"`
	SpeakerRecords int              `json:"speaker_records"`
	Neighbours     int              `json:"neighbours"`
	Candidates     int              `json:"candidates"`
	Embedded       int              `json:"embedded"`
	CacheHits      int              `json:"cache_hits"`
	DiskHits       int              `json:"disk_hits"`
	Shared         int              `json:"shared"`
	Micros         map[string]int64 `json:"stage_us"` // engine Durations
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
		jm := Memory{StoredRecord: FromRecord(m.Record),
			Score: float32(m.Score), Sparse: m.Sparse, Dense: float32(m.Dense), Kind: m.Kind, Reasons: m.Reasons}
		if m.Unit != nil {
			u := FromUnit(m.Unit)
			jm.Unit = &u
		}
		out.Memories = append(out.Memories, jm)
	}
	st := res.Stats
	d := st.Durations
	out.Stats = Stats{
		Mode: string(st.Mode), Text: st.Text, DenseText: st.DenseText, TimeExpr: st.TimeExpr,
		Speakers: nonNil(st.Speakers), Expansion: st.Expansion, Notes: nonNil(st.Notes),
		Filtered: st.Filtered, Hits: st.Hits, SessionTurns: st.SessionTurns, Fallback: st.Fallback,
		SpeakerRecords: st.SpeakerRecords, Neighbours: st.Neighbours, Candidates: st.Candidates,
		Embedded: st.Embedded, CacheHits: st.CacheHits, DiskHits: st.DiskHits, Shared: st.Shared,
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

// StoredRecord is a record read back by id (GET /v1/records/{id}). Every
// field is always present: a record without a session or role has "",
// one without labels has "meta": {} (never null).
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
	meta := r.Meta
	if meta == nil {
		meta = map[string][]string{}
	}
	return StoredRecord{ID: r.ID, Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: meta}
}

// nonNil is s, or an empty list for nil: the JSON has [] where Go has nil.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
