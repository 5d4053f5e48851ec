package consolidate

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzLabel: any text labels without panicking; every tag has a known type,
// a non-empty content drawn from the text, and valid UTF-8 when the text is.
func FuzzLabel(f *testing.F) {
	f.Add("We decided to use Postgres. Alice will send the budget by Friday.")
	f.Add("孙丽，你来负责对接法务，月底前搞定。我更喜欢飞书。")
	f.Add("待办：李娜跟进供应商合同")
	f.Add("交给")
	f.Add("I'll")
	f.Fuzz(func(t *testing.T, text string) {
		for _, tag := range Label(text) {
			if !tag.Type.Valid() || tag.Content == "" {
				t.Fatalf("Label(%q): bad tag %+v", text, tag)
			}
			if utf8.ValidString(text) && (!utf8.ValidString(tag.Content) || !utf8.ValidString(tag.Owner)) {
				t.Fatalf("Label(%q): invalid UTF-8 in %+v", text, tag)
			}
			if tag.Type != TypeFact && !strings.Contains(text, tag.Content) && tag.Type != TypeActionItem {
				t.Fatalf("Label(%q): content %q not from the text", text, tag.Content)
			}
		}
		var o Options
		o.EnsureDefaults()
		if v := o.Value(text, "host"); v < 0 || v > 1 {
			t.Fatalf("Value(%q) = %v", text, v)
		}
	})
}

// FuzzResolveDate: any text resolves without panicking, to a time within a
// few years of the reference.
func FuzzResolveDate(f *testing.F) {
	for _, s := range []string{"下周一下午两点", "tomorrow at 3pm", "next Friday", "月底", "周五前", "十二月三十二号", "13月1日", "the 99th", "at 25:00", "99点"} {
		f.Add(s)
	}
	ref := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		d, ok := ResolveDate(text, ref)
		if !ok {
			return
		}
		if d.Time.Before(ref.AddDate(0, 0, -1)) || d.Time.After(ref.AddDate(2, 0, 0)) {
			t.Fatalf("ResolveDate(%q) = %v, far from %v", text, d.Time, ref)
		}
	})
}

// FuzzParseUnits: any model output either fails or gives units that are
// all valid and cite only the allowed ids.
func FuzzParseUnits(f *testing.F) {
	f.Add(goodOutput)
	f.Add(`{"units": []}`)
	f.Add(`{"units": [{"type": "fact", "topic": "", "content": "x", "action_items": [], "participants": [], "source_ids": [10], "time": "2026-12-01T00:00:00Z", "confidence": 0}]}`)
	allowed := map[uint64]bool{10: true, 20: true, 30: true, 31: true}
	f.Fuzz(func(t *testing.T, content string) {
		units, err := parseUnits(content, allowed, "a")
		if err != nil {
			if units != nil {
				t.Fatal("units returned with an error")
			}
			return
		}
		for _, u := range units {
			if err := u.Validate(); err != nil {
				t.Fatalf("invalid unit accepted: %v", err)
			}
			for _, id := range u.SourceIDs {
				if !allowed[id] {
					t.Fatalf("foreign source id %d accepted", id)
				}
			}
		}
	})
}

// FuzzRulesTwoTurns: any user turn and assistant reply consolidate without
// error into valid units, each citing only the two turns; an echo's
// restated turn keeps at least its own units.
func FuzzRulesTwoTurns(f *testing.F) {
	f.Add("Let's set the connection pool size to 32 for billing-api", "Noted: connection pool size 32 for billing-api.")
	f.Add("以后周报用表格", "记下了：周报用表格。")
	f.Add("We decided to ship Friday.", "OK, and Alice will send the budget.")
	f.Add("x", "noted:")
	f.Add("我建议把闲置的测试环境都关掉。", "同意。")
	f.Add("Let's ", "OK")
	f.Fuzz(func(t *testing.T, user, reply string) {
		if !utf8.ValidString(user) || !utf8.ValidString(reply) || strings.TrimSpace(user) == "" || strings.TrimSpace(reply) == "" {
			return
		}
		t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
		u := Turn{ID: 1, Time: t0, Speaker: "user", Text: user}
		r := Turn{ID: 2, Time: t0.Add(time.Minute), Speaker: "assistant", Text: reply}
		in := Input{Agent: "a", Records: []Selected{
			{Turn: u, After: []Turn{r}}, // the reply may accept a proposal
			{Turn: r, Before: []Turn{u}},
		}}
		c, _ := NewRules(Options{})
		units, err := c.Consolidate(context.Background(), in)
		if err != nil {
			t.Fatalf("Consolidate(%q, %q): %v", user, reply, err)
		}
		for _, un := range units {
			for _, id := range un.SourceIDs {
				if id != 1 && id != 2 {
					t.Fatalf("unit %+v cites %d", un, id)
				}
			}
		}
	})
}
