package locomo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const dataDir = "../../../shared/data/locomo"

func loadReal(t *testing.T) []*Conversation {
	t.Helper()
	if _, err := os.Stat(dataDir); err != nil {
		t.Skipf("LoCoMo data not found at %s (%v): skipping the real-file tests", dataDir, err)
	}
	cs, err := Load(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestRealCounts(t *testing.T) {
	cs := loadReal(t)
	// Counted independently from the JSON files (python json module).
	want := map[string]struct {
		turns, sessions int
		cats            [6]int
		dropped         int
	}{
		"26": {419, 19, [6]int{0, 32, 37, 13, 70, 47}, 0},
		"30": {369, 19, [6]int{0, 11, 26, 0, 44, 24}, 0},
		"41": {663, 32, [6]int{0, 31, 27, 8, 86, 41}, 0},
		"42": {629, 29, [6]int{0, 37, 40, 11, 111, 61}, 2},
		"43": {680, 29, [6]int{0, 31, 26, 14, 107, 64}, 1},
		"44": {675, 28, [6]int{0, 30, 24, 7, 62, 35}, 0},
	}
	if len(cs) != len(want) {
		t.Fatalf("loaded %d conversations, want %d", len(cs), len(want))
	}
	order := []string{"26", "30", "41", "42", "43", "44"}
	for i, c := range cs {
		if c.ID != order[i] {
			t.Errorf("conversation %d is %s, want %s", i, c.ID, order[i])
		}
		w := want[c.ID]
		if n := len(c.Turns()); n != w.turns {
			t.Errorf("%s: %d turns, want %d", c.ID, n, w.turns)
		}
		if len(c.Sessions) != w.sessions {
			t.Errorf("%s: %d sessions, want %d", c.ID, len(c.Sessions), w.sessions)
		}
		var cats [6]int
		dropped := 0
		idx := c.TurnIndex()
		for _, q := range c.QA {
			cats[q.Category]++
			dropped += len(q.Dropped)
			for _, e := range q.Evidence {
				if _, ok := idx[e]; !ok || e != strings.TrimSpace(e) {
					t.Errorf("%s: evidence %q kept but matches no turn", c.ID, e)
				}
			}
			if q.Category != 5 && q.Answer == "" {
				t.Errorf("%s: question %q (category %d) has no answer", c.ID, q.Question, q.Category)
			}
			if q.Category == 5 && q.AdversarialAnswer == "" {
				t.Errorf("%s: adversarial question %q has no adversarial_answer", c.ID, q.Question)
			}
		}
		if cats != w.cats {
			t.Errorf("%s: qa per category %v, want %v", c.ID, cats[1:], w.cats[1:])
		}
		if dropped != w.dropped {
			t.Errorf("%s: %d evidence ids dropped, want %d", c.ID, dropped, w.dropped)
		}
		if c.SpeakerA == "" || c.SpeakerB == "" {
			t.Errorf("%s: speakers %q, %q", c.ID, c.SpeakerA, c.SpeakerB)
		}
		for j := 1; j < len(c.Sessions); j++ {
			if c.Sessions[j].N <= c.Sessions[j-1].N {
				t.Errorf("%s: sessions out of order", c.ID)
			}
		}
		for _, tr := range c.Turns() {
			if !strings.HasPrefix(tr.DiaID, "D") || tr.Speaker != c.SpeakerA && tr.Speaker != c.SpeakerB {
				t.Errorf("%s: odd turn %+v", c.ID, tr)
				break
			}
		}
	}

	c := cs[0]
	if got, want := c.Sessions[0].DateTime, time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("26 session 1 at %v, want %v", got, want)
	}
	if tr := c.Turns()[2]; tr.DiaID != "D1:3" || tr.Text != "I went to a LGBTQ support group yesterday and it was so powerful." || tr.Speaker != "Caroline" {
		t.Errorf("26 turn 3: %+v", tr)
	}
	if tr := c.Turns()[4]; len(tr.ImgURL) != 1 || tr.BlipCaption == "" {
		t.Errorf("26 D1:5 lacks its image: %+v", tr)
	}
	// "D8:6; D9:17" is two evidence ids.
	found := false
	for _, q := range c.QA {
		if len(q.Evidence) == 2 && q.Evidence[0] == "D8:6" && q.Evidence[1] == "D9:17" {
			found = true
		}
	}
	if !found {
		t.Error(`26: evidence "D8:6; D9:17" not split into two ids`)
	}
	// Evidence positions point at the named turns.
	turns := c.Turns()
	for _, q := range c.QA {
		pos := c.EvidenceTurns(q)
		if len(pos) != len(q.Evidence) {
			t.Fatalf("26: %q: %d positions for %d evidence ids", q.Question, len(pos), len(q.Evidence))
		}
		for i, p := range pos {
			if turns[p].DiaID != q.Evidence[i] {
				t.Fatalf("26: evidence %s at position %d is turn %s", q.Evidence[i], p, turns[p].DiaID)
			}
		}
	}
	// Numeric answers become text.
	if q := c.QA[1]; q.Answer != "2022" {
		t.Errorf("26 qa[1] answer %q, want 2022", q.Answer)
	}
}

func TestParseDateTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1:56 pm on 8 May, 2023":        time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC),
		"12:48 am on 1 February, 2023":  time.Date(2023, 2, 1, 0, 48, 0, 0, time.UTC),
		"11:01 am on 17 December, 2022": time.Date(2022, 12, 17, 11, 1, 0, 0, time.UTC),
		"12:05 pm on 3 June, 2023":      time.Date(2023, 6, 3, 12, 5, 0, 0, time.UTC),
		" 7:31  PM on 21 January, 2022": time.Date(2022, 1, 21, 19, 31, 0, 0, time.UTC),
	} {
		got, err := ParseDateTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, json, want string }{
		{"bad json", `{"speaker_a":`, "bad format"},
		{"not object", `42`, "bad format"},
		{"bad date", `{"session_1_date_time":"yesterday","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]}`, `session_1_date_time: value "yesterday"`},
		{"missing date", `{"session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]}`, "session_1_date_time missing"},
		{"session not list", `{"session_1":{}}`, "field session_1"},
		{"bad category", `{"qa":[{"question":"q","answer":"a","evidence":[],"category":9}]}`, "qa[0].category: value 9"},
		{"object answer", `{"qa":[{"question":"q","answer":{"x":1},"evidence":[],"category":1}]}`, "qa[0].answer"},
		{"empty dia_id", `{"session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","text":"hi"}]}`, "dia_id empty"},
		{"bad img_url", `{"session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi","img_url":3}]}`, "img_url"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.json), "x")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrFormat mentioning %q", c.name, err, c.want)
		}
	}
}

func TestParseShapes(t *testing.T) {
	conv := `{"speaker_a":"A","speaker_b":"B",
		"session_2_date_time":"2:00 pm on 9 May, 2023","session_2":[{"speaker":"B","dia_id":"D2:1","text":"later"}],
		"session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi","img_url":"http://x"}],
		"session_3_date_time":"3:00 pm on 10 May, 2023"}`
	qa := `[{"question":"q","answer":7,"evidence":[" D1:1 ","D9:9","D2:1, D1:1"],"category":2}]`
	single := `{` + conv[1:len(conv)-1] + `,"qa":` + qa + `}`
	combined := `[{"sample_id":"conv-7","conversation":` + conv + `,"qa":` + qa + `}]`
	for name, in := range map[string]string{"single": single, "combined": combined} {
		cs, err := Parse([]byte(in), "f")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cs) != 1 {
			t.Fatalf("%s: %d conversations", name, len(cs))
		}
		c := cs[0]
		if len(c.Sessions) != 2 || c.Sessions[0].N != 1 || c.Turns()[1].DiaID != "D2:1" {
			t.Errorf("%s: sessions %+v", name, c.Sessions)
		}
		q := c.QA[0]
		if q.Answer != "7" || strings.Join(q.Evidence, "|") != "D1:1|D2:1" || strings.Join(q.Dropped, "|") != "D9:9" {
			t.Errorf("%s: qa %+v", name, q)
		}
		if c.Turns()[0].ImgURL[0] != "http://x" {
			t.Errorf("%s: img_url %v", name, c.Turns()[0].ImgURL)
		}
		wantID := map[string]string{"single": "f", "combined": "conv-7"}[name]
		if c.ID != wantID {
			t.Errorf("%s: id %q, want %q", name, c.ID, wantID)
		}
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, ErrNoFiles) {
		t.Fatalf("empty dir: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("missing dir: no error")
	}
	doc := `{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]}`
	for _, n := range []string{"100", "9", "abc"} {
		if err := os.WriteFile(filepath.Join(dir, n+".json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "9.turns.fvecs"), []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, ","); got != "9,100,abc" {
		t.Fatalf("order %s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("bad file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}],"qa":[{"question":"q","answer":1,"evidence":["D1:1; D2:2"],"category":1}]}`))
	f.Add([]byte(`[{"sample_id":1,"conversation":{"speaker_a":"A"},"qa":[]}]`))
	f.Add([]byte(`{"session_0":[],"session_x":1}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`null`))
	if data, err := os.ReadFile(filepath.Join(dataDir, "30.json")); err == nil && len(data) < 1<<20 {
		f.Add(data[:min(len(data), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Parse(data, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, c := range cs {
			idx := c.TurnIndex()
			for _, q := range c.QA {
				for _, e := range q.Evidence {
					if _, ok := idx[e]; !ok {
						t.Fatalf("evidence %q matches no turn", e)
					}
				}
			}
		}
	})
}

func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"1:56 pm on 8 May, 2023", "12:48 am on 1 February, 2023", "", "25:00 pm on 40 Smarch, 0", "1:56 PM on 8 May, 2023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseDateTime(s)
		if err != nil {
			return
		}
		// A parsed time formats back to a string that parses to the same time.
		again, err := ParseDateTime(tm.Format(dateLayout))
		if err != nil || !again.Equal(tm) {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, tm, tm.Format(dateLayout), again, err)
		}
	})
}
