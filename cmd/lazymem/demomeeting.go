package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lazymem/lazymem/bench/eager"
	"github.com/lazymem/lazymem/bench/meeting"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

const demoMeetingSynopsis = `demo [meeting] [--utterances N] [--seed S] [--k K] [--db DIR] [--embedder E] [--working-memory=false]

The meeting assistant. A generated product-launch review (about 5,000
utterances over 90 minutes, Chinese and English, seven speakers) streams in
utterance by utterance, as speech-to-text would deliver it; the questions a
participant asks during the meeting are answered live, the meeting's
recent utterances embedded in the background by the working memory (on the
meeting's clock, within its budget); when the meeting
ends it is consolidated into core memory (decisions, action items with
owners and due dates, preferences; a revised decision supersedes the first
one), and the follow-up questions are answered from core memory first.
Then the same meeting goes through eager RAG (every utterance embedded at
write time, vector search) and the two are compared: write cost, cost per
question, storage, and answer quality (evidence hit@k).

"demo synthetic" runs the 100k-record multi-agent history instead.`

const meetingAgent, meetingSession = "meeting-assistant", "launch-review"

func cmdDemoMeeting(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlags("demo meeting", demoMeetingSynopsis, stderr)
	n := fset.Int("utterances", meeting.DefaultUtterances, "utterances in the meeting (at least 200: the key moments take about 70)")
	seed := fset.Uint64("seed", 1, "generator seed (same seed, same meeting)")
	k := fset.Int("k", 5, "`N` memories per answer (hit@k counts an answer found in them)")
	dir := fset.String("db", "", "keep the store in `DIR` (must not exist yet)")
	embedder := fset.String("embedder", "hash", embedderUsage)
	workMem := fset.Bool("working-memory", true, "embed the meeting's live utterances in the background (false: every vector is computed by the question that needs it)")
	pos, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("demo meeting: unexpected argument %q", pos[0])
	case *n < 200 || *n > 1000000:
		return usagef("demo meeting: --utterances must be in [200, 1000000], got %d", *n)
	case *k < 1 || *k > 100:
		return usagef("demo meeting: --k must be in [1, 100], got %d", *k)
	}
	emb, err := openEmbedder(*embedder)
	if err != nil {
		return err
	}
	if emb == nil { // the engine's default, made here so both sides share it
		if emb, err = embed.NewHash(embed.HashOptions{}); err != nil {
			return err
		}
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "lazymem-meeting-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if _, err := os.Stat(*dir); err == nil {
		return usagef("demo meeting: --db %s already exists; the demo writes a fresh store", *dir)
	}
	m, err := meeting.Generate(meeting.Config{Seed: *seed, Utterances: *n})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lazymem meeting assistant: %d utterances, %s from %s (seed %d), store in %s\n\n",
		len(m.Utterances), m.Config.Duration, m.Config.Start.Format("2006-01-02 15:04 MST"), *seed, *dir)

	// Lazy: the engine, its embedder metered like the baseline's. The DB's
	// clock is the meeting's (the time of the utterance just said), so the
	// working memory sees the utterances as live and counts its budget in
	// the meeting's minutes: what it would embed in a real meeting, not in
	// this replay's few seconds. It is in the meeting's zone, so that
	// "下周一下午两点前" is due at 14:00 there and "刚才" counts in its day.
	meter := eager.NewMeter(emb, 0)
	var clock atomic.Int64
	clock.Store(m.Config.Start.UnixNano())
	loc := m.Config.Start.Location()
	db, err := engine.Open(*dir, engine.Options{Embedder: meter,
		Clock:         func() time.Time { return time.Unix(0, clock.Load()).In(loc) },
		WorkingMemory: engine.WorkingMemoryOptions{Disable: !*workMem}})
	if err != nil {
		return err
	}
	defer db.Close()
	lazy := &demoSide{name: "lazymem"}
	ids := make([]uint64, len(m.Utterances))
	live := map[int][]meeting.Question{}
	var post []meeting.Question
	for _, q := range m.Questions {
		if q.Live {
			live[q.AskAfter] = append(live[q.AskAfter], q)
		} else {
			post = append(post, q)
		}
	}
	evidence := func(q meeting.Question, upto int) []uint64 {
		var out []uint64
		for _, key := range q.Evidence {
			if i, ok := m.Keys[key]; ok && i <= upto {
				out = append(out, ids[i])
			}
		}
		return out
	}
	// must: the utterance a good answer must cite (the question's first
	// evidence key), 0 when it is not said yet.
	must := func(q meeting.Question, upto int) uint64 {
		if i, ok := m.Keys[q.Evidence[0]]; ok && i <= upto {
			return ids[i]
		}
		return 0
	}

	// 1. The meeting streams in; live questions are asked as it goes.
	fmt.Fprintf(stdout, "1. during the meeting: every utterance appended durably as it is said; nothing is embedded.\n\n")
	pr := newProgress(stderr, "meeting", int64(len(m.Utterances)))
	var writeTime time.Duration
	for i, u := range m.Utterances {
		clock.Store(u.Time.UnixNano())
		t := time.Now()
		id, err := db.Append(ctx, engine.Record{Time: u.Time, Agent: meetingAgent, Session: meetingSession, Role: u.Speaker, Text: u.Text,
			Meta: map[string][]string{engine.DefaultRoleMetaKey: {u.Role}}})
		if err != nil {
			return err
		}
		writeTime += time.Since(t)
		ids[i] = id
		pr.update(int64(i+1), int64(i+1))
		for _, q := range live[i] {
			pr.done()
			// Asked a moment after the utterance: the working memory has
			// caught up with the meeting (or spent its budget).
			db.SettleWorkingMemory()
			res, err := lazy.ask(ctx, db, q, evidence(q, i), must(q, i), engine.Query{
				Agent: meetingAgent, Text: q.Text, K: *k, CurrentSession: meetingSession, Now: u.Time, ParseTime: true,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "[%s] Q (live): %s\n", u.Time.Format("15:04:05"), q.Text)
			printAnswer(stdout, res, lazy.last, loc)
		}
	}
	pr.done()
	db.SettleWorkingMemory()
	lazy.write = writeTime
	// What the live questions embedded is their cost, what the working
	// memory embedded the background's; neither is the write's.
	wm := db.Metrics().WorkingMemory
	lazy.background = int64(wm.Embedded)
	lazy.writeEmbedded = meter.Usage().Texts - lazy.askEmbedded - lazy.background
	fmt.Fprintf(stdout, "%d utterances appended in %v (%.0f µs each, fsync included), %d texts embedded at write time.\n",
		len(m.Utterances), round(writeTime), float64(writeTime.Microseconds())/float64(len(m.Utterances)), lazy.writeEmbedded)
	if *workMem {
		fmt.Fprintf(stdout, "working memory: %d utterances queued, %d embedded in the background, %d found cached, %d skipped (pleasantries), %d dropped (queue full).\n",
			wm.Queued, wm.Embedded, wm.Cached, wm.Skipped, wm.Dropped)
	}
	fmt.Fprintln(stdout)

	// 2. The meeting ends: consolidate it into core memory.
	rep, err := db.EndSession(ctx, meetingAgent, meetingSession)
	if err != nil {
		return err
	}
	units, err := db.Core(ctx, meetingAgent, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "2. the meeting ends: %d utterances labelled, %d selected, %d units built (%d superseded) in %v; %d live units of core memory:\n\n",
		rep.Labelled, rep.Selected, len(rep.Units), len(rep.Superseded), round(rep.Duration), len(units))
	for i := range units { // in the meeting's time zone
		units[i].Time = units[i].Time.In(loc)
		for j := range units[i].ActionItems {
			if a := &units[i].ActionItems[j]; !a.Due.IsZero() {
				a.Due = a.Due.In(loc)
			}
		}
	}
	printUnits(stdout, units)
	fmt.Fprintln(stdout)

	// 3. Follow-up questions, core memory first.
	fmt.Fprintf(stdout, "3. after the meeting: answers from core memory first, raw utterances as evidence.\n\n")
	last := len(m.Utterances) - 1
	end := m.Utterances[last].Time.Add(time.Minute)
	for _, q := range post {
		res, err := lazy.ask(ctx, db, q, evidence(q, last), must(q, last), engine.Query{Agent: meetingAgent, Text: q.Text, K: *k, Now: end})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Q: %s\n", q.Text)
		printAnswer(stdout, res, lazy.last, loc)
	}
	lazy.apiCalls = meter.Usage().APICalls
	lazy.storage, err = dirSize(*dir)
	if err != nil {
		return err
	}

	// 4. Eager RAG on the same meeting, the same embedder.
	eg, err := runEagerMeeting(ctx, m, emb, *k)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "4. lazy against eager RAG (%s: every utterance embedded at write time, cosine search), same embedder (%s), k = %d:\n\n",
		eg.name, emb.Name(), *k)
	printComparison(stdout, lazy, eg, len(m.Utterances))
	return db.Close()
}

// demoSide is what one system did over the meeting.
type demoSide struct {
	name          string
	write         time.Duration
	writeEmbedded int64
	background    int64 // texts the working memory embedded
	asked         int
	askTime       time.Duration
	askEmbedded   int64
	hitsLive      [2]int // found, asked
	hitsPost      [2]int
	first         [2]int // questions whose first answer cites their must-cite utterance, asked
	storage       int64
	apiCalls      int64 // embedding requests to a remote API, all told
	last          bool  // the last question's evidence was in the top k
}

// ask runs one question on the engine and scores it: a hit when a memory
// in the top k is an evidence utterance or a unit citing one; first when
// the first memory is the must-cite utterance or a unit citing it.
func (s *demoSide) ask(ctx context.Context, db *engine.DB, mq meeting.Question, ev []uint64, must uint64, q engine.Query) (*engine.Result, error) {
	t := time.Now()
	res, err := db.Recall(ctx, q)
	if err != nil {
		return nil, err
	}
	s.askTime += time.Since(t)
	s.asked++
	s.askEmbedded += int64(res.Stats.Embedded)
	s.last = false
	for _, mem := range res.Memories {
		if slices.Contains(ev, mem.ID) || (mem.Unit != nil && slices.ContainsFunc(mem.Unit.SourceIDs, func(id uint64) bool { return slices.Contains(ev, id) })) {
			s.last = true
			break
		}
	}
	s.score(mq.Live, s.last)
	s.first[1]++
	if len(res.Memories) > 0 && must != 0 {
		mem := res.Memories[0]
		if mem.ID == must || mem.Unit != nil && slices.Contains(mem.Unit.SourceIDs, must) {
			s.first[0]++
		}
	}
	return res, nil
}

func (s *demoSide) score(live, hit bool) {
	h := &s.hitsPost
	if live {
		h = &s.hitsLive
	}
	h[1]++
	if hit {
		h[0]++
	}
}

func printAnswer(w io.Writer, res *engine.Result, hit bool, loc *time.Location) {
	mark := "evidence not in the top k"
	if hit {
		mark = "evidence in the top k"
	}
	for i, mem := range res.Memories {
		if i == 2 {
			break
		}
		if mem.Unit != nil {
			u := mem.Unit
			fmt.Fprintf(w, "   %d. core %s [%s] %s (cites %v)\n", i+1, u.Type, u.Topic, truncate(oneLine(mem.Text), 120), u.SourceIDs)
			continue
		}
		fmt.Fprintf(w, "   %d. [%s] %s: %s\n", i+1, mem.Time.In(loc).Format("15:04:05"), mem.Role, truncate(oneLine(mem.Text), 120))
	}
	fmt.Fprintf(w, "   (%s; %d candidates, %d embedded, %v)\n\n", mark, res.Stats.Candidates, res.Stats.Embedded, round(res.Stats.Durations.Total))
}

// runEagerMeeting ingests the meeting into the flat eager baseline (exact
// cosine search: the best answers eager RAG can give) and asks the same
// questions; live ones see only what was said before them.
func runEagerMeeting(ctx context.Context, m *meeting.Meeting, emb embed.Embedder, k int) (*demoSide, error) {
	b, err := eager.New("flat", eager.Options{Embedder: emb})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	s := &demoSide{name: b.Name()}
	recs := make([]workload.Record, len(m.Utterances))
	for i, u := range m.Utterances {
		recs[i] = workload.Record{Time: u.Time, Agent: meetingAgent, Session: meetingSession, Role: u.Speaker, Text: u.Text}
	}
	t := time.Now()
	// Streamed: one utterance at a time, as it is said.
	for i := range recs {
		if err := b.Ingest(ctx, recs[i:i+1]); err != nil {
			return nil, err
		}
	}
	s.write = time.Since(t)
	s.writeEmbedded = b.Usage().Texts
	end := m.Utterances[len(m.Utterances)-1].Time.Add(time.Minute)
	for _, q := range m.Questions {
		wq := workload.Query{Text: q.Text, Agent: meetingAgent}
		upto := len(m.Utterances) - 1
		if q.Live {
			upto = q.AskAfter
			wq.Until = m.Utterances[upto].Time.Add(time.Nanosecond)
		} else {
			wq.Until = end
		}
		before := b.Usage()
		t := time.Now()
		got, err := b.Query(ctx, wq, k)
		if err != nil {
			return nil, err
		}
		s.askTime += time.Since(t)
		s.asked++
		s.askEmbedded += b.Usage().Sub(before).Texts
		hit := false
		for _, ord := range got {
			for _, key := range q.Evidence {
				if i, ok := m.Keys[key]; ok && i == ord && i <= upto {
					hit = true
				}
			}
		}
		s.score(q.Live, hit)
		s.first[1]++
		if i, ok := m.Keys[q.Evidence[0]]; ok && i <= upto && len(got) > 0 && got[0] == i {
			s.first[0]++
		}
	}
	s.storage = b.Bytes()
	s.apiCalls = b.Usage().APICalls
	return s, nil
}

func printComparison(w io.Writer, l, e *demoSide, n int) {
	per := func(d time.Duration, k int) time.Duration {
		if k == 0 {
			return 0
		}
		return d / time.Duration(k)
	}
	rate := func(h [2]int) string {
		if h[1] == 0 {
			return "-"
		}
		return fmt.Sprintf("%d/%d (%.2f)", h[0], h[1], float64(h[0])/float64(h[1]))
	}
	fmt.Fprintf(w, "   %-34s %-22s %-22s\n", "", l.name+" (lazy)", e.name+" (eager)")
	row := func(what, a, b string) { fmt.Fprintf(w, "   %-34s %-22s %-22s\n", what, a, b) }
	row("write: texts embedded", fmt.Sprint(l.writeEmbedded), fmt.Sprint(e.writeEmbedded))
	row("background: texts embedded", fmt.Sprint(l.background), "-")
	row("write: time per utterance", round(per(l.write, n)).String(), round(per(e.write, n)).String())
	row("question: texts embedded (mean)", fmt.Sprintf("%.1f", float64(l.askEmbedded)/float64(max(l.asked, 1))), fmt.Sprintf("%.1f", float64(e.askEmbedded)/float64(max(e.asked, 1))))
	row("question: time (mean)", round(per(l.askTime, l.asked)).String(), round(per(e.askTime, e.asked)).String())
	row("embedding API requests, all told", fmt.Sprint(l.apiCalls), fmt.Sprint(e.apiCalls))
	row("storage", human(l.storage), human(e.storage))
	row("hit@k, live questions", rate(l.hitsLive), rate(e.hitsLive))
	row("hit@k, after the meeting", rate(l.hitsPost), rate(e.hitsPost))
	row("first answer cites the key moment", rate(l.first), rate(e.first))
	fmt.Fprintf(w, "\n   lazymem's write time includes an fsync per utterance and its storage the whole store (log, index,\n"+
		"   embedding cache, core memory) on disk; the eager baseline keeps vectors and text in memory without\n"+
		"   durability, and embeds with a local hash embedder: with a remote one each of its requests is a network\n"+
		"   round trip (requests counted at %d texts each). The meeting is a workload written for this demo: the\n"+
		"   figures show the trade, not a general claim.\n", eager.DefaultAPIBatch)
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}
