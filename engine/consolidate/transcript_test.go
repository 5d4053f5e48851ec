package consolidate

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestTranscripts runs testdata/transcripts: the rule consolidator and
// supersession as a reader would follow them, round after round.
//
//	consolidate            input: "id minute speaker role | text" a line;
//	                       a line starting with "> " is context before the
//	                       record that follows. Units get ids from 100 on
//	                       and are linked against the stored ones.
//	topic                  input: two topics a line separated by " | ":
//	                       prints both keys and SameTopic.
//	live                   prints the stored units that are live.
//
// Times are minutes after Tuesday 2026-12-01 14:00 in Beijing.
func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "transcripts"), func(t *testing.T, path string) {
		var stored []Unit
		nextID := uint64(100)
		c, err := NewRules(Options{})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 12, 1, 14, 0, 0, 0, time.FixedZone("CST", 8*3600))
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			var out strings.Builder
			switch td.Cmd {
			case "consolidate":
				in := Input{Agent: "meeting"}
				var ctxTurns []Turn
				for _, line := range strings.Split(td.Input, "\n") {
					context := strings.HasPrefix(line, "> ")
					head, text, ok := strings.Cut(strings.TrimPrefix(line, "> "), " | ")
					f := strings.Fields(head)
					if !ok || len(f) != 4 {
						td.Fatalf(t, "bad line %q", line)
					}
					id, _ := strconv.ParseUint(f[0], 10, 64)
					min, _ := strconv.Atoi(f[1])
					turn := Turn{ID: id, Time: t0.Add(time.Duration(min) * time.Minute), Speaker: f[2], Role: f[3], Text: text}
					if context {
						ctxTurns = append(ctxTurns, turn)
						continue
					}
					in.Records = append(in.Records, Selected{Turn: turn, Before: ctxTurns})
					ctxTurns = nil
				}
				units, err := c.Consolidate(context.Background(), in)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for i := range units {
					units[i].ID = nextID
					nextID++
				}
				rewrite, err := Link(stored, units)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, u := range units {
					fmt.Fprintf(&out, "%d %s topic=%q conf=%.2f src=%v\n  %s\n", u.ID, u.Type, u.Topic, u.Confidence, u.SourceIDs, u.Content)
					for _, a := range u.ActionItems {
						due := "-"
						if !a.Due.IsZero() {
							due = a.Due.Format("2006-01-02 15:04")
						}
						fmt.Fprintf(&out, "  task owner=%s due=%s: %s\n", a.Owner, due, a.Task)
					}
					if len(u.Supersedes) > 0 {
						fmt.Fprintf(&out, "  supersedes %v\n", u.Supersedes)
					}
				}
				if len(rewrite) > 0 {
					fmt.Fprintf(&out, "rewrite %v\n", rewrite)
				}
				stored = append(stored, units...)
			case "live":
				for _, u := range stored {
					if u.Live() {
						fmt.Fprintf(&out, "%d %s: %s\n", u.ID, u.Type, u.Content)
					}
				}
			case "topic":
				for _, line := range strings.Split(td.Input, "\n") {
					a, b, _ := strings.Cut(line, " | ")
					ka, err := TopicKey(a)
					if err != nil {
						td.Fatalf(t, "%v", err)
					}
					kb, _ := TopicKey(b)
					fmt.Fprintf(&out, "%v %v same=%v\n", ka, kb, SameTopic(ka, kb))
				}
			default:
				td.Fatalf(t, "unknown command %q", td.Cmd)
			}
			if out.Len() == 0 {
				return "(none)\n"
			}
			return out.String()
		})
	})
}
