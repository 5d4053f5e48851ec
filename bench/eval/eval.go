package eval

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/engine/embed/use"
)

// question is one evaluated question with its evidence as a dia_id set.
type question struct {
	conv     int
	text     string
	category int
	evidence map[string]bool
}

// Run evaluates cfg: see the package documentation.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	convs, err := locomo.Load(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	qs := questions(convs, cfg.Categories)
	if len(qs) == 0 {
		return nil, fmt.Errorf("%w: %s (categories %v)", ErrNoQuestions, cfg.DataDir, cfg.Categories)
	}
	emb := cfg.Embed
	if emb == nil {
		emb, err = newEmbedder(cfg.Embedder, convs)
		if err != nil {
			return nil, err
		}
	}
	ks := slices.Clone(cfg.Ks)
	slices.Sort(ks)
	rep := &Report{Conversations: len(convs), Ks: ks}
	for _, mode := range cfg.Modes {
		run, err := runMode(ctx, &cfg, mode, emb, convs, qs, ks)
		if err != nil {
			return nil, fmt.Errorf("lazymem: eval: mode %s: %w", mode, err)
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep, nil
}

// questions lists the questions of the given categories that have at least
// one evidence turn.
func questions(convs []*locomo.Conversation, cats []int) []question {
	var qs []question
	for ci, c := range convs {
		for _, qa := range c.QA {
			if !slices.Contains(cats, qa.Category) || len(qa.Evidence) == 0 {
				continue
			}
			ev := make(map[string]bool, len(qa.Evidence))
			for _, id := range qa.Evidence {
				ev[id] = true
			}
			qs = append(qs, question{conv: ci, text: qa.Question, category: qa.Category, evidence: ev})
		}
	}
	return qs
}

// newEmbedder builds the embedder a spec names.
func newEmbedder(spec string, convs []*locomo.Conversation) (embed.Embedder, error) {
	kind, arg, err := parseEmbedder(spec)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "replay":
		r, err := LoadLoCoMoReplay(arg, LoCoMoReplayOptions{})
		if err != nil {
			return nil, fmt.Errorf("lazymem: eval: embedder %s: %w", spec, err)
		}
		return &questionReplay{Replay: r}, nil
	case "use":
		u, err := use.New(use.ModelDir(arg), use.Options{})
		if err != nil {
			return nil, fmt.Errorf("lazymem: eval: embedder %s: %w", spec, err)
		}
		return u, nil
	default:
		return embed.NewHash(embed.HashOptions{})
	}
}

// questionReplay serves the replay vectors and, for a text the replay has
// no vector for that is the question being asked with some of its words
// removed, the vector of the question as written. The engine embeds the
// question trimmed and without the speakers' names (Query.SpeakerBoost),
// texts the questions file has no vector for; the replay rows thus embed
// the names (as USE-lite computed them), and two questions that differ by
// a name only share the vector of the first asked (the engine caches the
// query by its text). Measure the dense side without names with the
// in-process "use" embedder. It keeps the Replay's Name: it only restores
// the text a replayed vector was computed for.
type questionReplay struct {
	*Replay
	mu       sync.Mutex
	question string // the question being asked, as written
}

// ask sets the question the next recalls are for.
func (a *questionReplay) ask(q string) {
	a.mu.Lock()
	a.question = q
	a.mu.Unlock()
}

func (a *questionReplay) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	a.mu.Lock()
	q := a.question
	a.mu.Unlock()
	var mapped []string
	for i, t := range texts {
		if _, ok := a.Lookup(t); ok || q == "" || !wordsOf(t, q) {
			continue
		}
		if mapped == nil {
			mapped = slices.Clone(texts)
		}
		mapped[i] = q
	}
	if mapped == nil {
		mapped = texts
	}
	return a.Replay.Embed(ctx, mapped)
}

// wordsOf reports whether every space-separated field of t occurs in q, in
// order: t is q with some words (and spaces) removed.
func wordsOf(t, q string) bool {
	fs := strings.Fields(t)
	if len(fs) == 0 {
		return false
	}
	for _, f := range fs {
		i := strings.Index(q, f)
		if i < 0 {
			return false
		}
		q = q[i+len(f):]
	}
	return true
}

// runMode ingests every conversation into a fresh store and asks every
// question with one mode.
func runMode(ctx context.Context, cfg *Config, mode engine.Mode, emb embed.Embedder, convs []*locomo.Conversation, qs []question, ks []int) (*RunReport, error) {
	dir, err := os.MkdirTemp("", "lazymem-eval-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	opts := engine.Options{Embedder: emb, Construct: cfg.Construct, DisableSessionContext: cfg.DisableSessionContext}
	if opts.Construct == nil && !cfg.NoCaptions {
		opts.Construct = withoutCaptions(convs)
	}
	opts.Index.ContextSample, opts.Index.ContextWeight = cfg.ContextSample, cfg.ContextWeight
	if cfg.x.options != nil {
		cfg.x.options(&opts)
	}
	// One store for every conversation (each its own agent), or, in the
	// per-conversation experiment, one store each.
	dbs := make([]*engine.DB, len(convs))
	defer closeAll(dbs)
	run := &RunReport{Mode: mode, Embedder: cfg.Embedder, Model: emb.Name(), ByCategory: map[string]*CategoryReport{},
		PerQuestion: map[int][]float64{}}
	t0 := time.Now()
	for i, c := range convs {
		switch {
		case i == 0 || cfg.x.perConversation:
			if dbs[i], err = engine.Open(filepath.Join(dir, strconv.Itoa(i)), opts); err != nil {
				return nil, err
			}
		default:
			dbs[i] = dbs[0]
		}
		turns := c.Turns()
		recs := make([]engine.Record, 0, len(turns))
		for _, tr := range turns {
			recs = append(recs, engine.Record{
				Time:    tr.Time,
				Agent:   c.ID,
				Session: "session_" + strconv.Itoa(tr.Session),
				Role:    tr.Speaker,
				Text:    tr.Text,
				Meta:    map[string][]string{"dia_id": {tr.DiaID}},
			})
			if !cfg.NoCaptions {
				recs[len(recs)-1].Text = turnText(tr)
			}
			if cfg.x.record != nil {
				cfg.x.record(&recs[len(recs)-1])
			}
		}
		if cfg.x.records != nil {
			cfg.x.records(recs)
		}
		if _, err := dbs[i].AppendBatch(ctx, recs); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", c.ID, err)
		}
		run.Turns += len(recs)
	}
	run.Ingest = time.Since(t0)
	progress(cfg.Progress, "%s %s: ingested %d turns of %d conversations in %v\n", cfg.Embedder, mode, run.Turns, len(convs), run.Ingest.Round(time.Millisecond))

	infos := make([]Conversation, len(convs))
	for i, c := range convs {
		infos[i] = Conversation{ID: c.ID, Speakers: []string{c.SpeakerA, c.SpeakerB}}
	}
	maxK := ks[len(ks)-1]
	replay, _ := emb.(*questionReplay)
	sums := map[int]map[int]float64{} // category -> k -> sum
	counts := map[int]int{}
	t1 := time.Now()
	last := -1
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if q.conv != last && last >= 0 {
			progress(cfg.Progress, "%s %s: conversation %s done\n", cfg.Embedder, mode, convs[last].ID)
		}
		last = q.conv
		var eq engine.Query
		if cfg.Rewrite != nil {
			eq = cfg.Rewrite(infos[q.conv], q.text)
		} else {
			eq.Text = q.text
		}
		eq.Agent, eq.Agents = convs[q.conv].ID, nil
		eq.K, eq.Mode = maxK, mode
		if eq.Candidates == 0 {
			eq.Candidates = cfg.Candidates
		}
		if eq.Fusion == "" {
			eq.Fusion = cfg.Fusion
		}
		if eq.DenseWeight == 0 {
			eq.DenseWeight = cfg.DenseWeight
		}
		if replay != nil {
			replay.ask(q.text)
		}
		var res *engine.Result
		if cfg.x.recall != nil {
			res, err = cfg.x.recall(ctx, dbs[q.conv], infos[q.conv], q.text, eq)
		} else {
			res, err = dbs[q.conv].Recall(ctx, eq)
		}
		if err != nil {
			return nil, fmt.Errorf("conversation %s: question %q: %w", convs[q.conv].ID, q.text, err)
		}
		run.Recalls++
		run.Embedded += res.Stats.Embedded
		if sums[q.category] == nil {
			sums[q.category] = map[int]float64{}
		}
		counts[q.category]++
		for _, k := range ks {
			r := recallAt(res.Memories, q.evidence, k)
			sums[q.category][k] += r
			run.PerQuestion[k] = append(run.PerQuestion[k], r)
		}
	}
	if last >= 0 {
		progress(cfg.Progress, "%s %s: conversation %s done\n", cfg.Embedder, mode, convs[last].ID)
	}
	run.Query = time.Since(t1)

	run.Recall = Recall{}
	// Categories in increasing order: the float sums must not depend on map
	// iteration order, or two runs differ in the last bit.
	for _, cat := range slices.Sorted(maps.Keys(counts)) {
		n := counts[cat]
		cr := &CategoryReport{Name: categoryName(cat), Questions: n, Recall: Recall{}}
		for _, k := range ks {
			cr.Recall[k] = sums[cat][k] / float64(n)
			run.Recall[k] += sums[cat][k]
		}
		run.Questions += n
		run.ByCategory[strconv.Itoa(cat)] = cr
	}
	for _, k := range ks {
		run.Recall[k] /= float64(run.Questions)
	}
	progress(cfg.Progress, "%s %s: %d questions in %v, R@%d %.3f, %d embedded\n", cfg.Embedder, mode, run.Questions, run.Query.Round(time.Millisecond), ks[len(ks)/2], run.Recall[ks[len(ks)/2]], run.Embedded)
	return run, closeAll(dbs)
}

// recallAt is the fraction of the evidence dia_ids among the first k
// memories.
func recallAt(ms []engine.Memory, evidence map[string]bool, k int) float64 {
	hit := 0
	for i := 0; i < k && i < len(ms); i++ {
		for _, id := range ms[i].Meta["dia_id"] {
			if evidence[id] {
				hit++
			}
		}
	}
	return float64(hit) / float64(len(evidence))
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// closeAll closes each distinct store of dbs once and clears dbs, so a
// second call does nothing. It returns the first error.
func closeAll(dbs []*engine.DB) error {
	var first error
	for i, db := range dbs {
		if db != nil && !slices.Contains(dbs[:i], db) {
			if err := db.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	clear(dbs)
	return first
}

// captionMark starts the caption of a turn's shared image in the stored
// text (see the package doc).
const captionMark = " [shares an image: "

// turnText is the stored text of a turn: its text, then the caption of the
// image it shares, if any.
func turnText(tr locomo.Turn) string {
	if tr.BlipCaption == "" {
		return tr.Text
	}
	return tr.Text + captionMark + tr.BlipCaption + "]"
}

// withoutCaptions is the engine's Construct for conversations whose
// stored texts carry captions (turnText): a record is embedded as it would
// be without its caption, so the dense view is the same with or without
// captions and a replay of the dataset's turn vectors finds every turn.
// The engine hands Construct the text with pleasantries stripped, which
// may also have cut into the turn's own text: the turn's text is found
// again by the record's agent and dia_id.
func withoutCaptions(convs []*locomo.Conversation) func(r *engine.Record) string {
	own := map[[2]string]string{}
	for _, c := range convs {
		for _, tr := range c.Turns() {
			if tr.BlipCaption != "" {
				own[[2]string{c.ID, tr.DiaID}] = tr.Text
			}
		}
	}
	return func(r *engine.Record) string {
		if ids := r.Meta["dia_id"]; len(ids) == 1 && strings.Contains(r.Text, strings.TrimSpace(captionMark)) {
			if t, ok := own[[2]string{r.Agent, ids[0]}]; ok {
				c := *r
				c.Text = engine.StripPleasantries(t)
				return engine.DefaultConstruct(&c)
			}
		}
		return engine.DefaultConstruct(r)
	}
}
