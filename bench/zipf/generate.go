package zipf

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Record is one generated record.
type Record struct {
	Time    time.Time
	Agent   string
	Session string
	Role    string // "user" or "assistant", alternating within a session
	Channel string // metadata: chat, email, tool or note
	CJK     bool   // written in the CJK vocabulary
	Text    string
}

// Channels are the values of Record.Channel.
var Channels = []string{"chat", "email", "tool", "note"}

type agentState struct {
	session int // sessions started so far
	left    int // records left in the current session
	turn    int
}

// Generate returns cfg.Records records in time order. Record i's time is
// Start + i*span/Records plus a jitter below one step, so times strictly
// follow the order.
func Generate(cfg Config) ([]Record, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7a697066))
	z := rand.NewZipf(r, cfg.Exponent, 1, uint64(cfg.Vocab-1))
	latin := make([]string, cfg.Vocab)
	for i := range latin {
		latin[i] = Word(i)
	}
	agents := make([]agentState, cfg.Agents)
	ncjk := cfg.cjkAgents()
	span := time.Duration(cfg.Days) * 24 * time.Hour
	step := span / time.Duration(cfg.Records)
	recs := make([]Record, cfg.Records)
	var sb strings.Builder
	for i := range recs {
		a := r.IntN(cfg.Agents)
		st := &agents[a]
		if st.left == 0 {
			st.session++
			st.left = 1 + r.IntN(2*cfg.SessionTurns-1)
			st.turn = 0
		}
		st.left--
		role := "user"
		if st.turn%2 == 1 {
			role = "assistant"
		}
		st.turn++
		cjk := a < ncjk
		n := cfg.MinWords + r.IntN(cfg.MaxWords-cfg.MinWords+1)
		sb.Reset()
		for w := 0; w < n; w++ {
			rank := int(z.Uint64())
			switch {
			case !cjk:
				if w > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(latin[rank])
			default:
				if w > 0 && w%6 == 0 {
					sb.WriteString("，")
				}
				sb.WriteString(CJKWord(rank))
			}
		}
		if cjk {
			sb.WriteString("。")
		} else {
			sb.WriteByte('.')
		}
		var jitter time.Duration
		if step > 1 {
			jitter = time.Duration(r.Int64N(int64(step)))
		}
		recs[i] = Record{
			Time:    cfg.Start.Add(time.Duration(i)*step + jitter),
			Agent:   agentName(a),
			Session: fmt.Sprintf("%s-s%05d", agentName(a), st.session),
			Role:    role,
			Channel: Channels[r.IntN(len(Channels))],
			CJK:     cjk,
			Text:    sb.String(),
		}
	}
	return recs, nil
}

func agentName(a int) string { return fmt.Sprintf("agent-%03d", a) }
