package wire

import (
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// Unit is the JSON form of a unit of core memory (consolidate.Unit): a
// recalled core memory's "unit", an element of GET /v1/core and of a
// consolidation's report. Like records, it never holds null: lists are []
// and superseded_by is 0 while the unit is live.
type Unit struct {
	ID           uint64       `json:"id"`
	Type         string       `json:"type"` // decision, action_item, preference, outcome, fact
	Topic        string       `json:"topic"`
	Content      string       `json:"content"`
	ActionItems  []ActionItem `json:"action_items"`
	Participants []string     `json:"participants"`
	SourceIDs    []uint64     `json:"source_ids"`
	Time         time.Time    `json:"time"`
	Confidence   float64      `json:"confidence"`
	Supersedes   []uint64     `json:"supersedes"`
	SupersededBy uint64       `json:"superseded_by"`
	Agent        string       `json:"agent"`
}

// ActionItem is consolidate.ActionItem; Due is left out when none was
// said.
type ActionItem struct {
	Owner string     `json:"owner"`
	Task  string     `json:"task"`
	Due   *time.Time `json:"due,omitempty"`
}

// FromUnit converts u.
func FromUnit(u *consolidate.Unit) Unit {
	out := Unit{ID: u.ID, Type: u.Type.String(), Topic: u.Topic, Content: u.Content,
		ActionItems: make([]ActionItem, 0, len(u.ActionItems)), Participants: nonNil(u.Participants),
		SourceIDs: nonNilIDs(u.SourceIDs), Time: u.Time, Confidence: u.Confidence,
		Supersedes: nonNilIDs(u.Supersedes), SupersededBy: u.SupersededBy, Agent: u.Agent}
	for _, a := range u.ActionItems {
		ai := ActionItem{Owner: a.Owner, Task: a.Task}
		if !a.Due.IsZero() {
			due := a.Due
			ai.Due = &due
		}
		out.ActionItems = append(out.ActionItems, ai)
	}
	return out
}

// FromUnits converts us; never null in the JSON.
func FromUnits(us []consolidate.Unit) []Unit {
	out := make([]Unit, 0, len(us))
	for i := range us {
		out = append(out, FromUnit(&us[i]))
	}
	return out
}

// ConsolidateReport is the JSON form of an engine.ConsolidateReport (the
// reply of POST /v1/consolidate).
type ConsolidateReport struct {
	Labelled   int      `json:"labelled"`
	Selected   int      `json:"selected"`
	Units      []Unit   `json:"units"`
	Superseded []uint64 `json:"superseded"`
	Micros     int64    `json:"duration_us"` // engine Duration
}

// FromConsolidateReport converts rep.
func FromConsolidateReport(rep *engine.ConsolidateReport) ConsolidateReport {
	return ConsolidateReport{Labelled: rep.Labelled, Selected: rep.Selected, Units: FromUnits(rep.Units),
		Superseded: nonNilIDs(rep.Superseded), Micros: rep.Duration.Microseconds()}
}

func nonNilIDs(s []uint64) []uint64 {
	if s == nil {
		return []uint64{}
	}
	return s
}
