package locomo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Category names, indexed by QA.Category.
var Categories = [...]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// Turn is one utterance.
type Turn struct {
	Speaker     string
	DiaID       string // "D3:7": session 3, turn 7
	Text        string
	BlipCaption string   // caption of the shared image, if any
	ImgURL      []string // shared image URLs, if any
	Session     int      // session number, 1-based
	Time        time.Time
}

// Session is one dated conversation session.
type Session struct {
	N           int
	DateTime    time.Time
	RawDateTime string
	Turns       []Turn
}

// QA is one question with its evidence turns.
type QA struct {
	Question          string
	Answer            string // empty when the file has none (category 5)
	AdversarialAnswer string
	Evidence          []string // dia_ids, trimmed, each matching a turn
	Dropped           []string // evidence entries that matched no turn
	Category          int
}

// Conversation is one LoCoMo sample.
type Conversation struct {
	ID                 string // file name without .json, or sample_id
	SpeakerA, SpeakerB string
	Sessions           []Session
	QA                 []QA
}

// Turns returns all turns in file order: session 1, 2, ... and turn order
// within a session (the order of the .fvecs files beside the JSON).
func (c *Conversation) Turns() []Turn {
	n := 0
	for _, s := range c.Sessions {
		n += len(s.Turns)
	}
	out := make([]Turn, 0, n)
	for _, s := range c.Sessions {
		out = append(out, s.Turns...)
	}
	return out
}

// TurnIndex maps each dia_id to its position in Turns().
func (c *Conversation) TurnIndex() map[string]int {
	m := make(map[string]int)
	i := 0
	for _, s := range c.Sessions {
		for _, t := range s.Turns {
			m[t.DiaID] = i
			i++
		}
	}
	return m
}

// EvidenceTurns returns the positions in Turns() of q's evidence, in the
// order of q.Evidence. Every kept evidence id matches a turn, so the result
// has len(q.Evidence) entries.
func (c *Conversation) EvidenceTurns(q QA) []int {
	idx := c.TurnIndex()
	out := make([]int, 0, len(q.Evidence))
	for _, e := range q.Evidence {
		if i, ok := idx[e]; ok {
			out = append(out, i)
		}
	}
	return out
}

// dateLayout is LoCoMo's session date format: "1:56 pm on 8 May, 2023".
const dateLayout = "3:04 pm on 2 January, 2006"

// ParseDateTime parses a LoCoMo session date_time as UTC.
func ParseDateTime(s string) (time.Time, error) {
	s = strings.Join(strings.Fields(s), " ")
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		// Some releases capitalise AM/PM.
		t, err = time.Parse(strings.Replace(dateLayout, "pm", "PM", 1), s)
	}
	return t, err
}

type rawTurn struct {
	Speaker     string          `json:"speaker"`
	DiaID       string          `json:"dia_id"`
	Text        string          `json:"text"`
	BlipCaption string          `json:"blip_caption"`
	ImgURL      json.RawMessage `json:"img_url"`
}

type rawQA struct {
	Question          string          `json:"question"`
	Answer            json.RawMessage `json:"answer"`
	AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
	Evidence          []string        `json:"evidence"`
	Category          int             `json:"category"`
}

// Parse decodes one file's bytes. id names the conversation when the data
// carries no sample_id. A file holding several samples (the combined
// release) yields several conversations, with ids from sample_id or
// id#index.
func Parse(data []byte, id string) ([]*Conversation, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var samples []json.RawMessage
		if err := json.Unmarshal(data, &samples); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFormat, id, err)
		}
		out := make([]*Conversation, 0, len(samples))
		for i, s := range samples {
			c, err := parseOne(s, id+"#"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	c, err := parseOne(data, id)
	if err != nil {
		return nil, err
	}
	return []*Conversation{c}, nil
}

func parseOne(data []byte, id string) (*Conversation, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, id, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%w: %s: not a JSON object", ErrFormat, id)
	}
	conv := top
	if raw, ok := top["conversation"]; ok {
		// Combined-release shape: {"sample_id", "conversation": {...}, "qa"}.
		if err := json.Unmarshal(raw, &conv); err != nil || conv == nil {
			return nil, fmt.Errorf("%w: %s: field conversation: not an object", ErrFormat, id)
		}
		if raw, ok := top["sample_id"]; ok {
			var sid any
			if json.Unmarshal(raw, &sid) == nil {
				switch v := sid.(type) {
				case string:
					if v != "" {
						id = v
					}
				case float64:
					id = strconv.FormatFloat(v, 'f', -1, 64)
				}
			}
		}
	}
	c := &Conversation{ID: id}
	if err := str(conv, "speaker_a", &c.SpeakerA, id); err != nil {
		return nil, err
	}
	if err := str(conv, "speaker_b", &c.SpeakerB, id); err != nil {
		return nil, err
	}

	for key, raw := range conv {
		n, ok := sessionNumber(key)
		if !ok {
			continue
		}
		var turns []rawTurn
		if err := json.Unmarshal(raw, &turns); err != nil {
			return nil, fmt.Errorf("%w: %s: field %s: %v", ErrFormat, id, key, err)
		}
		if len(turns) == 0 {
			continue
		}
		field := key + "_date_time"
		var rawDT string
		if err := str(conv, field, &rawDT, id); err != nil {
			return nil, err
		}
		if rawDT == "" {
			return nil, fmt.Errorf("%w: %s: field %s missing for a session with turns", ErrFormat, id, field)
		}
		dt, err := ParseDateTime(rawDT)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: field %s: value %q: %v", ErrFormat, id, field, rawDT, err)
		}
		s := Session{N: n, DateTime: dt, RawDateTime: rawDT, Turns: make([]Turn, 0, len(turns))}
		for i, t := range turns {
			if t.DiaID == "" {
				return nil, fmt.Errorf("%w: %s: field %s[%d].dia_id empty", ErrFormat, id, key, i)
			}
			urls, err := stringList(t.ImgURL)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: field %s[%d].img_url: %v", ErrFormat, id, key, i, err)
			}
			s.Turns = append(s.Turns, Turn{
				Speaker: t.Speaker, DiaID: strings.TrimSpace(t.DiaID), Text: t.Text,
				BlipCaption: t.BlipCaption, ImgURL: urls, Session: n, Time: dt,
			})
		}
		c.Sessions = append(c.Sessions, s)
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return a.N - b.N })

	ids := c.TurnIndex()
	if raw, ok := top["qa"]; ok {
		var qas []rawQA
		if err := json.Unmarshal(raw, &qas); err != nil {
			return nil, fmt.Errorf("%w: %s: field qa: %v", ErrFormat, id, err)
		}
		c.QA = make([]QA, 0, len(qas))
		for i, q := range qas {
			a, err := scalar(q.Answer)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: field qa[%d].answer: %v", ErrFormat, id, i, err)
			}
			adv, err := scalar(q.AdversarialAnswer)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: field qa[%d].adversarial_answer: %v", ErrFormat, id, i, err)
			}
			if q.Category < 1 || q.Category >= len(Categories) {
				return nil, fmt.Errorf("%w: %s: field qa[%d].category: value %d not in 1..%d", ErrFormat, id, i, q.Category, len(Categories)-1)
			}
			out := QA{Question: q.Question, Answer: a, AdversarialAnswer: adv, Category: q.Category}
			for _, e := range q.Evidence {
				for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' }) {
					part = strings.TrimSpace(part)
					if part == "" {
						continue
					}
					if _, ok := ids[part]; ok {
						if !slices.Contains(out.Evidence, part) {
							out.Evidence = append(out.Evidence, part)
						}
					} else {
						out.Dropped = append(out.Dropped, part)
					}
				}
			}
			c.QA = append(c.QA, out)
		}
	}
	return c, nil
}

// sessionNumber recognises "session_12" (and not "session_12_date_time").
func sessionNumber(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, "session_")
	if !ok || rest == "" {
		return 0, false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

func str(m map[string]json.RawMessage, field string, dst *string, id string) error {
	raw, ok := m[field]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %s: field %s: %v", ErrFormat, id, field, err)
	}
	return nil
}

// scalar renders a string, number, bool or null answer as text.
func scalar(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	default:
		return "", fmt.Errorf("value %s is not a string or number", truncate(raw))
	}
}

func stringList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("value %s is not a string or a list of strings", truncate(raw))
	}
	return list, nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// LoadFile reads one LoCoMo JSON file; the conversation id is the file name
// without ".json" unless the data carries a sample_id.
func LoadFile(path string) ([]*Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, strings.TrimSuffix(filepath.Base(path), ".json"))
}

// Load reads every *.json file of dir, ordered by file name with numeric
// names in numeric order (26 before 100). Files of other types (the .fvecs
// beside them) are ignored.
func Load(dir string) ([]*Conversation, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w in %s", ErrNoFiles, dir)
	}
	slices.SortFunc(paths, func(a, b string) int {
		na, ea := strconv.Atoi(strings.TrimSuffix(filepath.Base(a), ".json"))
		nb, eb := strconv.Atoi(strings.TrimSuffix(filepath.Base(b), ".json"))
		switch {
		case ea == nil && eb == nil:
			return na - nb
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []*Conversation
	for _, p := range paths {
		cs, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}
