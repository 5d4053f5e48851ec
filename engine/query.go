package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Mode selects the recall pipeline.
type Mode string

// Modes.
const (
	// ModeLazy (the default): BM25 and the session chain select candidates;
	// only they are embedded (through the cache), and sparse and dense
	// evidence are fused.
	ModeLazy Mode = "lazy"
	// ModeSparse: BM25 and the session chain only; nothing is embedded.
	ModeSparse Mode = "sparse"
	// ModeDense: embed (through the cache) and score every record that
	// passes the filters, ranking by cosine alone: the eager-RAG reference.
	ModeDense Mode = "dense"
)

// Fusion selects how sparse and dense evidence combine in ModeLazy.
type Fusion string

// Fusions.
const (
	// FusionRRF is reciprocal-rank fusion: sum over the two rankings of
	// weight/(DefaultRRFK + rank), weights 2*(1-DenseWeight) and
	// 2*DenseWeight. Rank-based, so the scales of BM25 and cosine do not
	// matter, but with 200 candidates it flattens: rank 1 and rank 10 differ
	// by 13%.
	FusionRRF Fusion = "rrf"
	// FusionWeighted (the default) is (1-DenseWeight)*sparse/max(sparse) +
	// DenseWeight*(dense-min)/(max-min) over the candidates. Measured on
	// LoCoMo (docs/benchmarks/locomo.md): with DenseWeight 0.2 and the
	// USE-lite embedder lazy is no worse than the better of sparse and
	// dense at k = 1, 5, 10, 25 (+0.013 R@10, significant); with the
	// lexical hash embedder (hash-v2) it is at or above sparse at every k
	// but within noise (+0.001 R@10, 95% interval [-0.007, +0.008]). RRF at
	// any dense weight >= 0.15 lost R@1 to sparse with USE-lite.
	FusionWeighted Fusion = "weighted"
)

// Query is one recall. Filters combine with AND; values within one filter
// (Agents, Sessions, Roles, one Where key) with OR.
type Query struct {
	// Text is the question, natural language. It may be empty: the latest
	// records passing the filters are then the candidates.
	Text string

	// Agent is the tenant searched; Agents adds more (a query never sees
	// an agent it does not name). At least one is required.
	Agent  string
	Agents []string
	// Sessions and Roles restrict to these sessions and speakers.
	Sessions []string
	Roles    []string
	// Since and Until restrict to [Since, Until); zero is unbounded.
	Since, Until time.Time
	// Where keeps records having, for every key, one of the values; Not
	// drops records having any of the given key/values.
	Where, Not map[string][]string

	// K is the number of memories returned. Default 10, at most MaxK.
	K int
	// Candidates is how many BM25 hits the broad stage hands to the
	// selective stage. Default max(Options.Candidates, CandidatesPerK*K)
	// (50 for K=10 with the hash embedder, whose recommendation
	// Options.Candidates takes), at most MaxCandidates.
	Candidates int
	// CurrentSession adds that session's latest SessionTurns turns (that
	// pass the filters) to the candidates: the thread the agent is in.
	CurrentSession string
	// SessionTurns: default 8; negative: none.
	SessionTurns int

	// Mode: ModeLazy (default), ModeSparse or ModeDense.
	Mode Mode
	// MaxDenseScan is the most records a ModeDense recall may embed and
	// score; a dense recall whose filters pass more fails with ErrBudget
	// before embedding anything. Default (0) DefaultMaxDenseScan.
	MaxDenseScan int
	// Fusion: FusionWeighted (default) or FusionRRF.
	Fusion Fusion
	// DenseWeight is the share of the dense evidence in the fusion, in
	// [0, 1]. Default Options.DenseWeight with FusionWeighted (the
	// embedder's recommendation: 0.2 for the hash embedder), 0.5 (equal
	// weights) with FusionRRF. Zero means the default; to fuse without
	// dense evidence use ModeSparse.
	DenseWeight float64

	// SpeakerBoost multiplies the score of records whose Role is a word of
	// the query ("what did Caroline research?" boosts Caroline's turns),
	// when some record of the searched agents has that role; such names are
	// also dropped from the BM25 text and from the embedded query (they
	// match the other speaker addressing them, not the answer; the boost
	// carries them). Default 2 (measured on LoCoMo: x1.5 -0.025, x3 +0.005
	// R@10 against x2; dropping the names from the embedded query lifts
	// LoCoMo dense R@10 0.463 -> 0.542 with USE-lite and 0.448 -> 0.554 with
	// the hash embedder). Negative or 1 disables it.
	SpeakerBoost float64

	// RecencyHalfLife multiplies each fused score by (1 - RecencyWeight) +
	// RecencyWeight * 0.5^(age/RecencyHalfLife), age measured from Now: a
	// prior, never a window (an old record that matches still ranks).
	// Default (0) DefaultRecencyHalfLife; negative: no recency prior.
	RecencyHalfLife time.Duration
	// RecencyWeight in [0, 1]; default DefaultRecencyWeight.
	RecencyWeight float64

	// FallbackScan bounds the fallback pass: when BM25 finds fewer than K/2
	// records, the latest records of the current session and of the
	// filter, at most FallbackScan, become candidates (ranked by the
	// embedder in ModeLazy), so that records passing the filters always
	// give an answer. With a semantic embedder (any but the lexical hash
	// one) in ModeLazy the pass also fills whatever BM25 left of the
	// Candidates budget, at most FallbackScan records. Default (0)
	// DefaultFallbackScan; negative: no fallback pass. An empty Text
	// always takes the latest Candidates records.
	FallbackScan int
	// NoExpansion turns off the built-in lexicon's query expansion
	// (engine/lexicon.txt: concepts of agent work and everyday life in
	// English and Chinese, "budget" also searching "funding", "cost"; "预算"
	// also "经费", "资金"). Expansion terms in the query's own script weigh
	// half as much as the query's own words, those in the other script (a
	// Chinese record for an English query) a quarter; twice that when the
	// query's own word of that concept matches no record. It also turns
	// off the category lexicon (engine/categories.txt): a question that
	// asks for a category's members ("what pets", "什么爱好") searches its
	// instances ("dog", "钓鱼") at a quarter of its own words' weight.
	// Default false.
	NoExpansion bool
	// FeedbackDocs turns on pseudo-relevance feedback (RM3-style with
	// rarity): the terms of the top FeedbackDocs BM25 hits (at most
	// DefaultFeedbackTerms, weighted by their frequency in each hit and
	// their idf; not in the query, not stopwords or question-frame words,
	// not CJK character n-grams) are added to the query at 1/16 of the
	// weight of its own words and BM25 runs again. It runs on two hits or
	// more, and only hits holding at least half of the question's content
	// words give terms, so that poor first hits do not drift the query.
	// Default 0: off. Measured (lazy, hash; LoCoMo R@1/5/10/25): off
	// .446/.689/.744/.796, 2 documents .447/.691/.749/.807; Chinese set
	// and scenarios unchanged. Off by default: R@10 stays under 0.75 and
	// it changes the planner transcripts and the upgrade goldens (see
	// docs/benchmarks/locomo.md).
	FeedbackDocs int

	// Now is the reference time for ParseTime and the recency prior.
	// Default: the DB's clock.
	Now time.Time
	// ParseTime finds a time expression in Text ("yesterday", "last week",
	// "in the last 10 minutes", "最近三天", "上周三", "10月20日"; see the
	// function ParseTime for the calendar and rolling semantics), removes it
	// from the searched text and intersects its window with [Since, Until).
	// A window that holds no record the other filters pass is dropped and
	// the expression searched as words when a record they pass says it
	// ("谁说一月中旬有寒潮？" asks what was said, not when); Stats.Notes says
	// so. Default false.
	ParseTime bool
	// Synonyms expands the query: when a key (a word or phrase, matched
	// case-insensitively on word boundaries) occurs in Text, its values are
	// added to the BM25 query. Dense scoring uses the unexpanded text.
	Synonyms map[string][]string

	// Explain fills Memory.Reasons.
	Explain bool

	// Tier: TierAll (default), TierCore or TierRaw.
	Tier Tier
}

// Defaults of the query-understanding fields of Query (they are Query
// fields so that one recall can differ; the DB-wide default belongs in
// Options).
const (
	// DefaultRecencyHalfLife and DefaultRecencyWeight are the default
	// recency prior: a record a half-life old keeps 90% of its score
	// at weight 0.2, a very old one 80%.
	DefaultRecencyHalfLife = 14 * 24 * time.Hour
	DefaultRecencyWeight   = 0.2
	// DefaultFallbackScan is the default Query.FallbackScan: the records
	// a recall with few BM25 hits ranks densely beyond them.
	DefaultFallbackScan = 64
	// DefaultFeedbackTerms is the number of terms pseudo-relevance
	// feedback adds (Query.FeedbackDocs).
	DefaultFeedbackTerms = 20
	// MaxFeedbackDocs bounds Query.FeedbackDocs.
	MaxFeedbackDocs = 50
)

// maxSynonyms bounds a query's synonym table.
const maxSynonyms = 10000

// prepare validates q and fills its defaults.
func (q *Query) prepare(o *Options, hasEmbedder bool) error {
	if q.Agent == "" && len(q.Agents) == 0 {
		return fieldErr("query.agent", ErrMissing, "")
	}
	if err := checkString("query.agent", q.Agent, o.MaxFieldBytes); err != nil {
		return err
	}
	if err := checkList("query.agents", q.Agents, o); err != nil {
		return err
	}
	if err := checkList("query.sessions", q.Sessions, o); err != nil {
		return err
	}
	if err := checkList("query.roles", q.Roles, o); err != nil {
		return err
	}
	if err := checkString("query.text", q.Text, o.MaxTextBytes); err != nil {
		return err
	}
	if err := checkString("query.current_session", q.CurrentSession, o.MaxFieldBytes); err != nil {
		return err
	}
	if err := checkMeta("query.where", q.Where, o); err != nil {
		return err
	}
	if err := checkMeta("query.not", q.Not, o); err != nil {
		return err
	}
	if err := checkTime("query.since", q.Since); err != nil {
		return err
	}
	if err := checkTime("query.until", q.Until); err != nil {
		return err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Since.After(q.Until) {
		return fieldErr("query.since", ErrRange, fmt.Sprintf("since %s is after until %s",
			q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339)))
	}
	switch {
	case q.K == 0:
		q.K = DefaultK
	case q.K < 0 || q.K > MaxK:
		return fieldErr("query.k", ErrRange, fmt.Sprintf("%d, want 1..%d", q.K, MaxK))
	}
	switch {
	case q.Candidates == 0:
		q.Candidates = min(max(o.Candidates, CandidatesPerK*q.K), MaxCandidates)
	case q.Candidates < 0 || q.Candidates > MaxCandidates:
		return fieldErr("query.candidates", ErrRange, fmt.Sprintf("%d, want 1..%d", q.Candidates, MaxCandidates))
	}
	switch {
	case q.SessionTurns == 0:
		q.SessionTurns = DefaultSessionTurns
	case q.SessionTurns < 0:
		q.SessionTurns = 0
	case q.SessionTurns > MaxSessionTurns:
		return fieldErr("query.session_turns", ErrRange, fmt.Sprintf("%d, want at most %d", q.SessionTurns, MaxSessionTurns))
	}
	switch q.Mode {
	case "":
		q.Mode = ModeLazy
	case ModeLazy, ModeSparse, ModeDense:
	default:
		return fieldErr("query.mode", ErrUnknown, fmt.Sprintf("%q, want lazy, sparse or dense", string(q.Mode)))
	}
	switch {
	case q.MaxDenseScan == 0:
		q.MaxDenseScan = DefaultMaxDenseScan
	case q.MaxDenseScan < 0:
		return fieldErr("query.max_dense_scan", ErrRange, fmt.Sprintf("%d, want a positive limit (0: default %d)", q.MaxDenseScan, DefaultMaxDenseScan))
	}
	switch q.Fusion {
	case "":
		q.Fusion = FusionWeighted
	case FusionRRF, FusionWeighted:
	default:
		return fieldErr("query.fusion", ErrUnknown, fmt.Sprintf("%q, want rrf or weighted", string(q.Fusion)))
	}
	switch {
	case q.DenseWeight == 0 && q.Fusion == FusionRRF:
		q.DenseWeight = 0.5
	case q.DenseWeight == 0:
		q.DenseWeight = o.DenseWeight
	case q.DenseWeight < 0 || q.DenseWeight > 1 || q.DenseWeight != q.DenseWeight:
		return fieldErr("query.dense_weight", ErrRange, fmt.Sprintf("%g, want [0, 1]", q.DenseWeight))
	}
	switch {
	case q.SpeakerBoost == 0:
		q.SpeakerBoost = 2
	case q.SpeakerBoost < 0:
		q.SpeakerBoost = 1
	case q.SpeakerBoost != q.SpeakerBoost || q.SpeakerBoost > 1000:
		return fieldErr("query.speaker_boost", ErrRange, fmt.Sprintf("%g, want at most 1000", q.SpeakerBoost))
	}
	switch {
	case q.RecencyHalfLife == 0:
		q.RecencyHalfLife = DefaultRecencyHalfLife
	case q.RecencyHalfLife < 0:
		q.RecencyHalfLife = 0
	}
	switch {
	case q.FallbackScan == 0:
		q.FallbackScan = DefaultFallbackScan
	case q.FallbackScan < 0:
		q.FallbackScan = 0
	case q.FallbackScan > MaxCandidates:
		return fieldErr("query.fallback_scan", ErrRange, fmt.Sprintf("%d, want at most %d", q.FallbackScan, MaxCandidates))
	}
	if q.FeedbackDocs < 0 || q.FeedbackDocs > MaxFeedbackDocs {
		return fieldErr("query.feedback_docs", ErrRange, fmt.Sprintf("%d, want 0..%d", q.FeedbackDocs, MaxFeedbackDocs))
	}
	switch {
	case q.RecencyWeight == 0 && q.RecencyHalfLife > 0:
		q.RecencyWeight = DefaultRecencyWeight
	case q.RecencyWeight < 0 || q.RecencyWeight > 1 || q.RecencyWeight != q.RecencyWeight:
		return fieldErr("query.recency_weight", ErrRange, fmt.Sprintf("%g, want [0, 1]", q.RecencyWeight))
	}
	if len(q.Synonyms) > maxSynonyms {
		return fieldErr("query.synonyms", ErrTooMany, fmt.Sprintf("%d keys, limit %d", len(q.Synonyms), maxSynonyms))
	}
	for _, k := range slices.Sorted(maps.Keys(q.Synonyms)) {
		kf := "query.synonyms[" + strconv.Quote(k) + "]"
		if strings.TrimSpace(k) == "" {
			return fieldErr("query.synonyms", ErrEmpty, "empty key")
		}
		if err := checkString(kf, k, o.MaxFieldBytes); err != nil {
			return err
		}
		for i, v := range q.Synonyms[k] {
			vf := kf + "[" + strconv.Itoa(i) + "]"
			if strings.TrimSpace(v) == "" {
				return fieldErr(vf, ErrEmpty, "")
			}
			if err := checkString(vf, v, o.MaxFieldBytes); err != nil {
				return err
			}
		}
	}
	if err := q.prepareTier(); err != nil {
		return err
	}
	if q.Mode != ModeSparse && !hasEmbedder {
		return fmt.Errorf("%w: mode %s needs one (use mode sparse)", ErrNoEmbedder, q.Mode)
	}
	return nil
}

func checkList(field string, list []string, o *Options) error {
	for i, s := range list {
		f := field + "[" + strconv.Itoa(i) + "]"
		if s == "" {
			return fieldErr(f, ErrEmpty, "")
		}
		if err := checkString(f, s, o.MaxFieldBytes); err != nil {
			return err
		}
	}
	return nil
}
