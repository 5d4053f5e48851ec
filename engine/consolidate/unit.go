package consolidate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Type is the kind of a consolidated unit.
type Type uint8

// Unit types. Their numeric values are part of the unit encoding: NEVER
// CHANGE them; a new type takes the next free number.
const (
	TypeDecision   Type = 1
	TypeActionItem Type = 2
	TypePreference Type = 3
	TypeOutcome    Type = 4
	TypeFact       Type = 5
)

// Version 0 and type 0 are deliberately invalid, so zeroed bytes never
// decode as a unit.

var typeNames = [...]string{
	TypeDecision:   "decision",
	TypeActionItem: "action_item",
	TypePreference: "preference",
	TypeOutcome:    "outcome",
	TypeFact:       "fact",
}

// Types lists every valid type in numeric order.
var Types = []Type{TypeDecision, TypeActionItem, TypePreference, TypeOutcome, TypeFact}

// Valid reports whether t is one of the defined types.
func (t Type) Valid() bool { return t >= TypeDecision && t <= TypeFact }

// String returns the snake_case name ("action_item"), or "type(N)".
func (t Type) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType is the inverse of String.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if typeNames[t] == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: type %q is not one of decision, action_item, preference, outcome, fact", ErrInvalidUnit, s)
}

// MarshalText renders the type by name, so JSON carries "decision".
func (t Type) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("%w: type %d", ErrInvalidUnit, uint8(t))
	}
	return []byte(typeNames[t]), nil
}

// UnmarshalText parses a type name.
func (t *Type) UnmarshalText(b []byte) error {
	v, err := ParseType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ActionItem is one task with its owner and, when one was said, its due
// time (resolved to an absolute instant against the utterance's time).
type ActionItem struct {
	Owner string    `json:"owner"`
	Task  string    `json:"task"`
	Due   time.Time `json:"due,omitzero"`
}

// Unit is one consolidated piece of core memory: a decision, an action item,
// a preference, an outcome or a fact, distilled from one or more raw records
// that it cites by id. Units are small and few; the raw records stay the
// evidence.
type Unit struct {
	// ID is the unit's own id, assigned by whoever stores it (0 = not yet).
	ID uint64 `json:"id"`
	// Type is the kind of unit.
	Type Type `json:"type"`
	// Topic is a short normalized phrase naming what the unit is about;
	// supersession compares topics (see TopicKey).
	Topic string `json:"topic"`
	// Content is the unit's statement in one or two sentences.
	Content string `json:"content"`
	// ActionItems are the tasks the unit assigns (action_item units carry
	// at least one; others may carry some).
	ActionItems []ActionItem `json:"action_items"`
	// Participants are the speakers involved, in first-seen order.
	Participants []string `json:"participants"`
	// SourceIDs are the ids of the records the unit was derived from,
	// sorted ascending, unique, non-zero. Retention never drops a record a
	// live unit cites.
	SourceIDs []uint64 `json:"source_ids"`
	// Time is when the content was said (the latest source's time).
	Time time.Time `json:"time"`
	// Confidence in [0, 1]: how sure the extractor is.
	Confidence float64 `json:"confidence"`
	// Supersedes lists ids of earlier units on the same topic this one
	// replaces, sorted ascending, unique.
	Supersedes []uint64 `json:"supersedes,omitempty"`
	// SupersededBy is the id of the later unit that replaced this one, or 0
	// while the unit is live.
	SupersededBy uint64 `json:"superseded_by,omitempty"`
	// Agent is the tenant the unit belongs to, as for records.
	Agent string `json:"agent"`
}

// Live reports whether no later unit supersedes u.
func (u *Unit) Live() bool { return u.SupersededBy == 0 }

// Limits on a unit, checked by Validate and by the decoder.
const (
	// MaxUnitText bounds Topic, Content, Agent, participant names and the
	// fields of an action item, in bytes.
	MaxUnitText = 64 << 10
)

// minTime and maxTime bound what the encoding's int64 nanoseconds hold.
var (
	minTime = time.Unix(0, math.MinInt64+1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// Validate reports the first field of u that cannot be encoded, naming it.
// Strings must be valid UTF-8 and at most MaxUnitText bytes; SourceIDs and
// Supersedes sorted, unique and non-zero (Normalize makes them so); at least
// one source id; Confidence finite in [0, 1]; times within int64 unix
// nanoseconds (the zero time means "unknown" and is allowed); a unit does
// not supersede itself.
func (u *Unit) Validate() error {
	if !u.Type.Valid() {
		return fmt.Errorf("%w: type %d is not a defined type", ErrInvalidUnit, uint8(u.Type))
	}
	if err := checkText("topic", u.Topic); err != nil {
		return err
	}
	if strings.TrimSpace(u.Content) == "" {
		return fmt.Errorf("%w: content is empty", ErrInvalidUnit)
	}
	if err := checkText("content", u.Content); err != nil {
		return err
	}
	if err := checkText("agent", u.Agent); err != nil {
		return err
	}
	for i, p := range u.Participants {
		if err := checkText(fmt.Sprintf("participants[%d]", i), p); err != nil {
			return err
		}
	}
	for i := range u.ActionItems {
		a := &u.ActionItems[i]
		if err := checkText(fmt.Sprintf("action_items[%d].owner", i), a.Owner); err != nil {
			return err
		}
		if strings.TrimSpace(a.Task) == "" {
			return fmt.Errorf("%w: action_items[%d].task is empty", ErrInvalidUnit, i)
		}
		if err := checkText(fmt.Sprintf("action_items[%d].task", i), a.Task); err != nil {
			return err
		}
		if err := checkTime(fmt.Sprintf("action_items[%d].due", i), a.Due); err != nil {
			return err
		}
	}
	if len(u.SourceIDs) == 0 {
		return fmt.Errorf("%w: source_ids is empty (a unit must cite its records)", ErrInvalidUnit)
	}
	if err := checkIDs("source_ids", u.SourceIDs); err != nil {
		return err
	}
	if err := checkIDs("supersedes", u.Supersedes); err != nil {
		return err
	}
	if u.ID != 0 && (u.SupersededBy == u.ID || slices.Contains(u.Supersedes, u.ID)) {
		return fmt.Errorf("%w: unit %d supersedes itself", ErrInvalidUnit, u.ID)
	}
	if math.IsNaN(u.Confidence) || u.Confidence < 0 || u.Confidence > 1 {
		return fmt.Errorf("%w: confidence %v is outside [0, 1]", ErrInvalidUnit, u.Confidence)
	}
	return checkTime("time", u.Time)
}

// Normalize sorts and deduplicates SourceIDs and Supersedes and drops zero
// ids from them, so a unit built by hand passes Validate's order checks.
func (u *Unit) Normalize() {
	u.SourceIDs = normIDs(u.SourceIDs)
	u.Supersedes = normIDs(u.Supersedes)
}

func normIDs(ids []uint64) []uint64 {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if ids[0] == 0 {
		ids = ids[1:]
	}
	if len(ids) == 0 {
		return nil
	}
	return ids
}

func checkText(field, s string) error {
	if len(s) > MaxUnitText {
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalidUnit, field, len(s), MaxUnitText)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidUnit, field)
	}
	return nil
}

func checkIDs(field string, ids []uint64) error {
	for i, id := range ids {
		if id == 0 {
			return fmt.Errorf("%w: %s[%d] is 0", ErrInvalidUnit, field, i)
		}
		if i > 0 && id <= ids[i-1] {
			return fmt.Errorf("%w: %s not sorted and unique: %d after %d at index %d", ErrInvalidUnit, field, id, ids[i-1], i)
		}
	}
	return nil
}

func checkTime(field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return fmt.Errorf("%w: %s %v is outside int64 unix nanoseconds", ErrInvalidUnit, field, t)
	}
	if t.UnixNano() == 0 {
		return fmt.Errorf("%w: %s is the unix epoch, which the encoding reserves for \"unknown\"", ErrInvalidUnit, field)
	}
	return nil
}
