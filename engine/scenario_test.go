package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// The scenario suite (testdata/scenarios, described in its README.md) asks
// a bilingual history the questions people actually ask a memory and grades
// hit@1 and hit@5 per class. It measures today's behaviour so later changes
// are judged against it. By default each class must stay at or above its
// floor (scenarioFloors: the value measured when the floor was set, rounded
// down to two decimals), so a change that loses answers fails. Tenancy is
// strict always: no question may return a record of another agent.
//
// The targets are every class at hit@5 >= 0.8 and every example
// question it quotes answered at rank 1; -scenario.strict asserts them
// instead of the floors. Questions marked "needs" (a multilingual embedder)
// are left out of the strict targets because the default hash embedder is
// lexical; their figures are still logged. Run:
//
//	go test -run TestScenarios -v ./engine/                  # the table
//	go test -run TestScenarios -v ./engine/ -scenario.strict # the targets
var (
	scenarioStrict  = flag.Bool("scenario.strict", false, "assert the issue's targets (hit@5 >= 0.8 per class, examples at rank 1) instead of today's floors")
	scenarioSummary = flag.String("scenario.summary", "", "also write the summary table (markdown) to this file")
)

// scenarioNow is the fixed reference time of the scenario history.
var scenarioNow = time.Date(2026, 12, 1, 11, 30, 0, 0, time.FixedZone("CST", 8*3600))

// scenarioFloors are today's figures (lazy mode, hash embedder, default
// options, ParseTime on) rounded down: a class falling below its floor is a
// regression. Raise a floor when a change lifts the class. Measured when
// the suite was written (79 questions): time 0.42/0.71, inherited
// 0.71/1.00, speaker 0.11/0.67, paraphrase 0.33/0.44, lowinfo 0.17/0.83,
// recency 0.43/1.00, crosslingual 0/0 (the hash embedder is lexical),
// tenancy 1/1, nonempty 0.80/0.80; issue examples 5 of 12 at rank 1, 7 in
// the top 5. Raised after the query-understanding work (time expressions,
// speaker questions, the fallback pass, the lexicon, pleasantries,
// recency and supersession, questions in the history weighed x0.85):
// time 0.67/0.96, speaker 0.78/1.00, paraphrase 0.44/0.89, lowinfo
// 0.33/1.00, recency 0.57/1.00, nonempty 1/1; examples 8 of 12 at rank 1,
// 11 in the top 5. Raised after CJK unigrams in the index and the
// lexicon's other-script terms: time 0.71/1.00, inherited 0.86/1.00,
// paraphrase 0.56/0.89, lowinfo 0.50/1.00, crosslingual 0.33/0.67.
// Raised after newest-first for time-only questions without BM25 hits,
// meeting closings as pleasantries and the mention rule: time 0.79/1.00;
// examples 11 of 12 at rank 1. Raised after status nouns out of the BM25
// text, "怎么样了" asking for the current state and budget split from cost
// in the lexicon: paraphrase 0.66/1.00; examples 12 of 12 at rank 1.
// Lowered when four time questions on plans and 上午 alone joined (83
// questions; two of them missed before the fix they came with, one ranks
// its answer second): time 0.78/1.00. The previous class ("last time",
// "上次开会", nine questions) joined with the previous-session rule at
// 0.88/1.00 (0.56/1.00 without it). Raised after the when-question rule
// (a record stating a time x1.5): recency 0.71/1.00, crosslingual
// 0.50/0.66. Raised when an agenda's "today" (今天主要定补丁的时间) stopped
// counting as a stated time: recency 0.85/1.00, previous 1.00/1.00; time
// 0.82 when the answer's type counted in questions about an earlier time.
var scenarioFloors = map[string][2]float64{ // class: {hit@1, hit@5}
	"time":         {0.85, 1.00},
	"inherited":    {1.00, 1.00},
	"speaker":      {0.77, 1.00},
	"paraphrase":   {0.55, 0.88},
	"lowinfo":      {0.50, 1.00},
	"recency":      {0.71, 1},
	"previous":     {1.00, 1.00},
	"crosslingual": {0.66, 0.83},
	"tenancy":      {1.00, 1.00},
	"nonempty":     {1.00, 1.00},
}

// The targets, asserted under -scenario.strict.
const (
	scenarioTargetHit5 = 0.8
)

type scenarioRecord struct {
	Agent   string              `json:"agent"`
	Session string              `json:"session"`
	Role    string              `json:"role"`
	Time    time.Time           `json:"time"`
	Text    string              `json:"text"`
	Meta    map[string][]string `json:"meta"`
}

type scenarioQuestion struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Agent   string   `json:"agent"`
	Session string   `json:"session"`
	Class   string   `json:"class"`
	Lang    string   `json:"lang"`
	Expect  []string `json:"expect"`
	K       int      `json:"k"`
	Example bool     `json:"example"`
	Needs   string   `json:"needs"`
	Note    string   `json:"note"`
	// now is the set's reference time (setNow), not a field of the file.
	now time.Time
}

// readJSONL decodes one value per non-empty line of path into a new T,
// rejecting unknown fields so a typo in the data is an error, not a silent
// zero.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scenario2Floors are the second set's floors (testdata/scenarios2). Its
// first measurement, out of sample (the set committed before any retrieval
// ran on it, at fcc110f), hit@1/hit@5: time 0.71/0.93, inherited 1/1,
// speaker 0.67/0.67, paraphrase 0.67/0.67, lowinfo 0.80/1.00, recency
// 0.40/1.00, previous 0.50/0.75, crosslingual 0.50/0.50 (needs a
// multilingual embedder), tenancy 1/1, nonempty 1/1. Set after the fixes
// its misses showed (a date range ending in a bare day, a Latin name
// glued to Chinese, which earlier meeting "the last meeting" names, three
// lexicon concepts). Recency raised 0.40 -> 0.60 when a money question
// ("每月预算多少") took a sum, not a count, as its slot's value; time
// 0.78 -> 0.85 and recency 0.60 -> 0.80 when an agenda's "today" stopped
// counting as a stated time.
// Crosslingual floor hit@1 lowered: "why was the patch delayed?" 1 -> 3 once the expansion's "delay" (the query's own stem) is no longer added (notOwn, 2026-12-07; the 36 sets' hit@1 / hit@5 1097.69 / 1366.75 -> 1097.34 / 1368.88).
var scenario2Floors = map[string][2]float64{
	"time": {0.85, 1.00}, "inherited": {1, 1}, "speaker": {0.83, 0.83}, "paraphrase": {0.66, 0.83}, "lowinfo": {0.80, 1.00},
	"recency": {0.80, 1.00}, "previous": {0.75, 1.00}, "crosslingual": {0.50, 0.75}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario3Floors are the third set's floors (testdata/scenarios3). Its
// first measurement, out of sample (committed at 3b251f4 before any
// retrieval ran on it, after the second set's fixes), hit@1/hit@5: time
// 0.83/1.00, inherited 0.60/1.00, speaker 0.60/0.80, paraphrase 0.60/0.80,
// lowinfo 1/1, recency 0.50/0.75, previous 0.33/0.33, crosslingual
// 0.67/1.00 (needs), tenancy 1/1, nonempty 1/1. Set after the fixes its
// misses showed (a name ending in 刚 is not "刚说", the last meeting chosen
// by the coverage of its best matches). Inherited raised 0.60 -> 0.80 with
// the money slot.
var scenario3Floors = map[string][2]float64{
	"time": {0.91, 1.00}, "inherited": {0.80, 1.00}, "speaker": {0.80, 1.00}, "paraphrase": {0.80, 1.00}, "lowinfo": {1, 1},
	"recency": {1, 1}, "previous": {1, 1}, "crosslingual": {1, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario4Floors are the fourth set's floors (testdata/scenarios4). Its
// first measurement, out of sample (committed at b7e99e9 before any
// retrieval ran on it, after the third set's fixes), hit@1/hit@5: time
// 0.92/1.00, inherited 1/1, speaker 0.60/0.80, paraphrase 0.60/0.80,
// lowinfo 1/1, recency 0.75/1.00, previous 0.67/0.67 (core 1/1),
// crosslingual 0/0.67 (needs), tenancy 1/1, nonempty 1/1. Set after the
// fixes its misses showed (the setting of a speaker question, "在组会上",
// "in the meeting", as frame words; mouse/小鼠/老鼠 in the lexicon).
var scenario4Floors = map[string][2]float64{
	"time": {0.91, 1.00}, "inherited": {1, 1}, "speaker": {0.80, 1.00}, "paraphrase": {0.40, 1}, "lowinfo": {1, 1},
	"recency": {0.50, 1}, "previous": {0.66, 1.00}, "crosslingual": {0, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario5Floors are the fifth set's floors (testdata/scenarios5). Its
// first measurement, out of sample (committed at 16e89dd before any
// retrieval ran on it, after the fourth set's fixes), core hit@1/hit@5
// 0.74/0.92 (lowinfo 0.75/0.75: "when is tonight's handoff?" at noon
// filtered to an evening still ahead; speaker 0.40/0.80: "在复盘会上"
// left as content). Set after those two fixes (a part of today not begun
// is a plan; a speaker question's setting is frame): core 0.77/0.97.
var scenario5Floors = map[string][2]float64{
	"time": {0.83, 0.91}, "inherited": {0.75, 1}, "speaker": {0.40, 1}, "paraphrase": {0.40, 1}, "lowinfo": {1, 1},
	"recency": {0.75, 1}, "previous": {1, 1}, "crosslingual": {0.66, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario6Floors are the sixth set's floors (testdata/scenarios6). Its
// first measurement, out of sample (committed before any retrieval ran on
// it, after the fifth set's fixes), core hit@1/hit@5 0.91/0.98 (previous
// 0.33/0.67: a family group chat over a weekend taken for "上次开会").
// Set after the fix (a meeting lasts at most meetingMaxSpan; a Chinese
// question that no meeting's words match still names the latest):
// core 0.93/1.00.
var scenario6Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {1, 1}, "lowinfo": {1, 1},
	"recency": {0.75, 1}, "previous": {0.66, 1}, "crosslingual": {1, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario7Floors are the seventh set's floors (testdata/scenarios7). Its
// first measurement, out of sample (committed before any retrieval ran on
// it, after the sixth set's fix), core hit@1/hit@5 0.82/0.97 (previous
// 0.50/0.50: "what did we decide last meeting?" about an English
// stand-up left unnarrowed). Set after the fix (the latest meeting is
// named when the question is in its language): core 0.82/1.00.
var scenario7Floors = map[string][2]float64{
	"time": {0.80, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.80, 1}, "lowinfo": {0.50, 1},
	"recency": {0.75, 1}, "previous": {0.66, 1}, "crosslingual": {0.66, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenarioClasses is the report order.
// scenario8Floors are the eighth set's floors (testdata/scenarios8), its
// first measurement, out of sample (committed at 3a30622 before any
// retrieval ran on it, after the two recency rules of 2026-12-03), hit@1 /
// hit@5: time 0.80/1.00, inherited 1/1, speaker 1/1, paraphrase
// 0.00/0.67 ("装修费用怎么样了": a turn naming the cost, 费用明细, and its
// successor inheriting it pass the new budget), lowinfo 1/1, recency
// 0.57/1.00, previous 0.50/1.00 (core 1/1), crosslingual 0.67/1.00,
// tenancy 1/1, nonempty 1/1. Main before those rules (5016d38) measured
// the same but one recency question at rank 5 instead of 4. Raised when
// the answer's type counted in questions about an earlier time (read off
// this set's "两周前的会上预算定了多少", so in sample here): time 1.00,
// recency 0.71. Raised when a revision of the asked value passes the plan
// it revises (revises, 2026-12-05; read off the tenth set): recency 0.85
// ("李家装修现在什么时候开工" rank 4 -> 1). Lowered when the words asking
// about an earlier state left the searched text (2026-12-06; gains in six
// other sets): recency 0.71 ("预算原来是多少" rank 1 -> 3: its answer,
// "预算按十二万来做", had matched the unigram 来 of 原来).
// scenario9Floors are the ninth set's floors (testdata/scenarios9). Its
// first measurement, out of sample (committed at 3f3cab5 before any
// retrieval ran on it), hit@1 / hit@5: time 0.50/1.00, inherited 1/1,
// speaker 1/1, paraphrase 0.50/0.50 ("住宿安排好了吗": the lexicon's travel
// concept added 机票 as strongly as 酒店; "can partners come along?": a
// plural did not trigger "partner"), lowinfo 0.50/0.50 ("好的，那最后去
// 哪里": "去哪里" named no concept), recency 0.43/1.00, previous
// 0.50/0.50 (core 1/1), crosslingual 0.67/0.67 (core 1/1), tenancy 1/1,
// nonempty 1/1; all 0.64/0.85. The floors are the figures after the
// changes read off those misses (in sample here): paraphrase 0.75/1.00,
// lowinfo 0.50/1.00, recency 0.43/0.86 ("年会旅行现在去哪里" fell from
// rank 5 to 6: the first plan inherits the trip's name from the turn
// before it, the revision does not say it).
var scenario9Floors = map[string][2]float64{
	"time": {0.66, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.75, 1}, "lowinfo": {0.50, 1},
	"recency": {0.57, 0.85}, "previous": {0.50, 1}, "crosslingual": {0.66, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario10Floors are the tenth set's floors (testdata/scenarios10),
// committed at 2494619 before any retrieval ran on it, after the ninth
// set's lexicon changes: both the main before them and the changes
// measured all 0.81/0.91 on it, out of sample, hit@1 / hit@5: time 1/1,
// inherited 1/1, speaker 1/1, paraphrase 0.75/0.75 ("谁去跟新供应商签约":
// the agenda naming 供应商 and the old supplier's turns pass the contract
// turn, which says 合同 and 签), lowinfo 1/1, recency 0.33/0.83 ("蔬菜现在
// 由哪家供应": the revision "蔬菜换成鲜丰" holds one of the question's
// words, the old supplier's turn two), previous 1/1, crosslingual
// 0.67/0.67 (core 1/1), tenancy 1/1, nonempty 1/1. The floors are the
// figures with a revision passing the plan it revises (revises; read off
// this set's "新店现在哪天开业", rank 4 -> 1, so in sample here): recency
// 0.50/0.83; with the lexicon's contract concept holding 签约 and eight
// more concepts of agent work (in sample for "谁去跟新供应商签约"):
// paraphrase 1/1; with a replaced choice counted as a revision in a
// question asking for no slot (in sample for "蔬菜现在由哪家供应"): recency
// 0.50/1.00.
var scenario10Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.75, 0.75}, "lowinfo": {1, 1},
	"recency": {0.66, 1}, "previous": {1, 1}, "crosslingual": {1, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario11Floors are the eleventh set's floors (testdata/scenarios11),
// committed at 8f5f5c8 before any retrieval ran on it, after the ninth and
// tenth sets' changes. Out of sample, main before them (8de20be) and the
// changes alike, hit@1 / hit@5: time 0.83/1.00, inherited 0.50/0.50
// ("谁说一月中旬有寒潮？": "一月" parsed as last January, an empty window,
// an empty answer), speaker 1/1, paraphrase 0.50/0.75 ("喜帖谁负责？": the
// meeting says 请柬), lowinfo 1/1, recency 0.50/0.83 ("婚礼现在在哪里办？":
// the revision says 场地, no word of the question), previous 1/1,
// crosslingual 0.33/0.67 (core 1/1), tenancy 1/1, nonempty 1/1; all
// 0.72/0.88. The floors are the figures after the empty window was
// dropped and the invitation concept added (both read off those misses,
// so in sample): inherited 1/1, paraphrase 0.75/1.00; all 0.78/0.94.
var scenario11Floors = map[string][2]float64{
	"time": {0.83, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.75, 0.75}, "lowinfo": {1, 1},
	"recency": {1, 1}, "previous": {1, 1}, "crosslingual": {1, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario12Floors are the twelfth set's floors (testdata/scenarios12),
// its first measurement, out of sample (committed at d9f312d before any
// retrieval ran on it, after the ninth to eleventh sets' changes; main
// before them, 8de20be, measured the same), hit@1 / hit@5: time
// 0.83/1.00, inherited 1/1, speaker 1/1, paraphrase 1/1, lowinfo 1/1,
// recency 0.33/1.00, previous 0.00/0.50 (core 0/0: "上次家里商量谁负责配
// 药？" asked in this morning's family chat narrowed to yesterday's, whose
// "老家" shares the character 家 with "家里"), crosslingual 0.33/0.67
// (core 1/1), tenancy 1/1, nonempty 1/1; all 0.72/0.94. Raised when the
// previous session's words stopped counting single CJK characters
// (holdsWords; read off that miss, so in sample): previous 0.00/1.00
// (the question at rank 2), all 0.72/0.97.
var scenario12Floors = map[string][2]float64{
	"time": {0.83, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {1, 1}, "lowinfo": {1, 1},
	"recency": {0.66, 1}, "previous": {0, 1}, "crosslingual": {1, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario18Floors are the eighteenth set's floors (testdata/scenarios18,
// a student's study-abroad applications; committed at e7bf944 before any
// retrieval ran on it, after every change of 2026-12-05/06). First
// measurement, out of sample, hit@1 / hit@5: time 0.83/1, inherited
// 0.50/1, speaker 0.33/1, paraphrase 0/0.50, recency 0.71/1, previous
// 0.50/1, crosslingual 0/0 (needs), the others 1/1; all 0.59/0.85 (core
// 0.65/0.94). Main before that session (e6bc0cc): all 0.56/0.79, speaker
// 0/0.67, previous 0.50/0.50.
var scenario18Floors = map[string][2]float64{
	"time": {0.83, 1}, "inherited": {0.50, 1}, "speaker": {0.33, 1}, "paraphrase": {0, 0.50}, "lowinfo": {1, 1},
	"recency": {0.71, 1}, "previous": {0.50, 1}, "crosslingual": {0.33, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario17Floors are the seventeenth set's floors (testdata/scenarios17,
// a family moving house; committed at 7f12415 before any retrieval ran
// on it). First measurement, out of sample (main at 7f12415, with every
// rule and the first 76 lexicon concepts of 2026-12-05), hit@1 / hit@5:
// time 0.71/0.71 ("about twenty-five minutes ago" read as five, "on
// Monday of last week" as this week's Monday), inherited 0.50/1, speaker
// 0.33/0.67, paraphrase 0/0.75, recency 0.25/0.75, crosslingual 0/0
// (needs), the others 1/1; all 0.50/0.75 (core 0.56/0.84; main before
// the session, e6bc0cc, 0.47/0.75). The floors are what it measures with
// compound numbers, the long weekday form and 94 more lexicon concepts
// (time 0.86/1, recency 0.25/0.88; all 0.53/0.83). Paraphrase hit@5
// raised to 1 with the glossary mates (2026-12-07).
var scenario17Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {0.50, 1}, "speaker": {0.33, 0.66}, "paraphrase": {0, 1}, "lowinfo": {1, 1},
	"recency": {0.25, 0.75}, "previous": {1, 1}, "crosslingual": {0, 0.33}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario16Floors are the sixteenth set's floors (testdata/scenarios16,
// a class parents' committee; committed at 3aac85b before any retrieval
// ran on it, after the named-meeting rule, the clock times and the
// last-meeting rule). First measurement, out of sample, hit@1 / hit@5:
// time 0.75/0.88, speaker 0.67/1, paraphrase 0/0, recency 0.50/0.88,
// crosslingual 0/0 (needs a multilingual embedder), the others 1/1; all
// 0.61/0.74 (core 0.70/0.82). Main before those three rules (e6bc0cc):
// all 0.58/0.71 (the clock range "10点到10点半之间会上…" missed). The
// floors are what it measures with the 76 lexicon concepts of 79a51ee
// (speaker 1/1, recency 0.62/0.87, crosslingual 0.25/0.25; all 0.68/0.76).
// Recency floor hit@1 lowered: "what was the rehearsal plan originally?" 1 -> 3 once the expansion's terms of the query's own stems are no longer added (notOwn, 2026-12-07; the 36 sets' hit@1 / hit@5 1097.69 / 1366.75 -> 1097.34 / 1368.88).
var scenario16Floors = map[string][2]float64{
	"time": {0.75, 0.87}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0, 0}, "lowinfo": {1, 1},
	"recency": {0.50, 0.87}, "previous": {1, 1}, "crosslingual": {0.25, 0.75}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario15Floors are the fifteenth set's floors (testdata/scenarios15,
// a badminton club; committed at e0dd5e6 before any retrieval ran on it).
// First measurement, out of sample (main at e6bc0cc and with the
// named-meeting rule alike), hit@1 / hit@5: time 0.71/0.86 ("between 9:30
// and 10 this morning": no clock times), paraphrase 0.25/0.25, recency
// 0.33/0.83, previous 0.50/0.50 (an English meeting asked about in
// Chinese), crosslingual 0/0.33, the others 1/1; all 0.62/0.76 (core
// 0.68/0.81). The floors are what it measures after the clock times and
// the rule that keeps a last-meeting question before the current session.
var scenario15Floors = map[string][2]float64{
	"time": {0.85, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.25, 0.25}, "lowinfo": {1, 1},
	"recency": {0.33, 1}, "previous": {0.50, 1}, "crosslingual": {0.33, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario14Floors are the fourteenth set's floors (testdata/scenarios14,
// an author and her publisher; committed at d389f34 before any retrieval
// ran on it). First measurement, out of sample (main at e6bc0cc and with
// the named-meeting rule alike), hit@1 / hit@5: time 0.75/1, paraphrase
// 0/0.25 (jacket art, hand everything in, an index described), recency
// 0.86/1, previous 0.50/1, crosslingual 0/0 (needs a multilingual
// embedder), the others 1/1; all 0.69/0.83 (core 0.74/0.90). The floors
// are what it measures after the clock times (time 0.88/1) and the 76
// lexicon concepts of 79a51ee (recency 1/1, paraphrase 0.25/0.25,
// crosslingual 0.33/0.33; all 0.80/0.86).
var scenario14Floors = map[string][2]float64{
	"time": {0.87, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.25, 0.25}, "lowinfo": {1, 1},
	"recency": {1, 1}, "previous": {0.50, 1}, "crosslingual": {0.66, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario13Floors are the thirteenth set's floors (testdata/scenarios13),
// its first measurement, out of sample (committed at 9a17895 before any
// retrieval ran on it, after every change of 2026-12-05; main before
// them, 8de20be, measured the same), hit@1 / hit@5: time 1/1, inherited
// 1/1, speaker 1/1, paraphrase 0.50/0.75 ("who is giving us snacks to
// sell?": the bakery's cookies), lowinfo 1/1, recency 0.33/0.83 (core
// 0.40/1.00), previous 0.50/1.00, crosslingual 0.33/0.67 (core 1/1),
// tenancy 1/1, nonempty 1/1; all 0.72/0.91.
var scenario13Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0.50, 0.75}, "lowinfo": {1, 1},
	"recency": {0.33, 0.83}, "previous": {0.50, 1}, "crosslingual": {0.66, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

var scenario8Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0, 0.66}, "lowinfo": {1, 1},
	"recency": {0.57, 1}, "previous": {1, 1}, "crosslingual": {0.66, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario25Floors are the twenty-fifth set's floors (testdata/scenarios25,
// a home-care agency's care-team calls; committed at 6712793 before any
// retrieval ran on it). First measurement at 0197675 (6712793's parent
// with the set), out of sample for every rule before it: all .46/.68,
// core .51/.74; identical with the weekday of a plan (written before the
// set was measured). Kinship speakers ("陈爷爷的儿媳", "康复师", "Mrs
// Wang's daughter") 5, miss, 3; "on the day of the Mid-Autumn Festival"
// is no time.
var scenario25Floors = map[string][2]float64{
	"time": {0.77, 0.88}, "inherited": {0.5, 0.5}, "speaker": {0.25, 0.75}, "paraphrase": {0, 0}, "lowinfo": {0.66, 1},
	"recency": {0.42, 0.85}, "previous": {0.25, 0.5}, "crosslingual": {0.25, 0.50}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario26Floors are the twenty-sixth set's floors (testdata/scenarios26,
// a three-generation tea farm's family calls; committed at c509c48 before
// any retrieval ran on it). First measurement at c509c48, out of sample for
// every rule before it (this session's earlier-state words, plan days,
// described speakers, honorifics and calls among them): all .51/.79, core
// .56/.86. Kin named only by the README ("Grandpa" for 沈德昌, "Jenny" for
// 沈建英) are misses.
// Speaker floor raised with the participants rule (2026-12-07).
var scenario26Floors = map[string][2]float64{
	"time": {0.77, 0.88}, "inherited": {1, 1}, "speaker": {0.5, 1}, "paraphrase": {0, 0.5}, "lowinfo": {1, 1},
	"recency": {0.42, 0.85}, "previous": {0, 1}, "crosslingual": {0.75, 0.75}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario27Floors are the twenty-seventh set's floors (testdata/scenarios27,
// a design studio's project calls; committed at ba5453c before any
// retrieval ran on it). First measurement at ba5453c, out of sample for
// every rule of the session that wrote sets 25-27: all .50/.77, core
// .53/.82, against .41/.70, core .42/.74, at that session's base 8fed1d3
// (唐总 and 朱师傅, "our last call", a Friday plan: the session's rules
// holding out of sample). "十点左右我让你起草了什么" and "around half past
// nine" were no time.
// Speaker floor raised with the participants rule (2026-12-07).
var scenario27Floors = map[string][2]float64{
	"time": {0.66, 1}, "inherited": {1, 1}, "speaker": {0.57, 1}, "paraphrase": {0, 0.50}, "lowinfo": {1, 1},
	"recency": {0.42, 0.85}, "previous": {0.25, 0.75}, "crosslingual": {0.25, 0.25}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario28Floors are the twenty-eighth set's floors (testdata/scenarios28,
// a family guesthouse near 阳朔 with an English-speaking son-in-law;
// committed at fd0fd5a before any retrieval ran on it). First
// measurement, after the glossary (d32aa98), out of sample: all .49/.73,
// crosslingual .17/.50; at the session's base (bfed4db, no glossary)
// .47/.71, crosslingual 0/0. The glossary cost it two questions ("五一放
// 假那几天我记了些什么？": 五一 translated as "labor day"; "When are my in-laws
// visiting?": 亲家, 婆家 found Chinese records about others' families);
// the first was mended in sample (the time expression and holidays are
// not translated): all .49/.76. Then, in sample, a single pinyin
// syllable for the last of a given name ("Feng" for 黄晓峰) and a name
// the meeting addresses ("黄叔，我们是用烘干机烘的" answers 黄建华): speaker
// .17/.67 -> .50/.67, all .53/.76.
var scenario28Floors = map[string][2]float64{
	"time": {0.62, 1}, "inherited": {1, 1}, "speaker": {0.50, 0.66}, "paraphrase": {0.20, 0.20}, "lowinfo": {0.66, 1},
	"recency": {0.57, 0.71}, "previous": {0.50, 1}, "crosslingual": {0.16, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario29Floors are the twenty-ninth set's floors (testdata/scenarios29,
// a parents' youth football club in Shanghai; committed at 1cb1a6b before
// any retrieval ran on it). First measurement, out of sample for the
// session's rules before it: all .60/.69 (crosslingual 0/0, speaker
// .50/.50, paraphrase 0/.20); at the session's base (bfed4db) .58/.69, and
// after the glossary alone (e8cbec9) .58/.69: its crosslingual questions
// found none through the glossary at a word's weight. Then, in sample,
// the English words of a Chinese question weighed as its own terms
// (glossaryEnglishReps): all .64/.76, crosslingual .33/.50 with a cap of
// 16; .60/.73, crosslingual 0/.33 with the cap of 8 kept.
var scenario29Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {0.50, 0.50}, "paraphrase": {0, 0.20}, "lowinfo": {0.66, 1},
	"recency": {1, 1}, "previous": {1, 1}, "crosslingual": {0, 0.33}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario30Floors are the thirtieth set's floors (testdata/scenarios30,
// a community vegetable garden in Shanghai; committed at bc3db55 before
// any retrieval ran on it), its first measurement, out of sample for every
// rule of the session that wrote sets 28-30: all .47/.64 (crosslingual
// .17/.17, speaker 0/.50, paraphrase 0/.20), against .44/.64 at that
// session's base (bfed4db): "排队等菜地是按什么规矩排的？" found its English
// answer at rank 1 through the glossary; "在这儿种菜，现在一年得掏多少钱？"
// fell from rank 3 out of the top 5.
// Speaker floor lowered: a question lost to more speakers than K with the participants rule (2026-12-07).
var scenario30Floors = map[string][2]float64{
	"time": {0.75, 1}, "inherited": {1, 1}, "speaker": {0.33, 0.50}, "paraphrase": {0, 0.20}, "lowinfo": {0.66, 1},
	"recency": {0.57, 0.85}, "previous": {0.50, 0.75}, "crosslingual": {0.16, 0.16}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario31Floors are the thirty-first set's floors (testdata/scenarios31,
// a neighbourhood veterinary clinic in Chengdu, written by a helper session
// blind to the engine and committed before any retrieval ran on it): its
// first measurement, at 765b62e's ranking (2026-12-06 session), all
// .42 / .76 (paraphrase .00 / .40, recency .29 / .86, crosslingual
// .33 / .67).
var scenario31Floors = map[string][2]float64{
	"time": {0.50, 0.75}, "inherited": {1, 1}, "speaker": {0.33, 0.66}, "paraphrase": {0, 0.40}, "lowinfo": {0.33, 1},
	"recency": {0.28, 0.85}, "previous": {0.50, 0.75}, "crosslingual": {0.33, 0.66}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario32Floors are the thirty-second set's floors (testdata/scenarios32,
// a family bakery-café in Hangzhou, written by a helper session blind to
// the engine and committed at c467eb4 before any retrieval ran on it): its
// first measurement, at 1d8bcbf's ranking, out of sample for every rule of
// the 2026-12-06 13:47 session: all .56 / .82 (recency .57 / 1, time
// .88 / 1, previous .50 / .75), against .49 / .76 at that session's base
// 765b62e (recency .43 / .71, time .75 / .88, previous .25 / .75).
// Speaker floor hit@1 lowered (an answer at rank 2), hit@5 raised with the participants rule (2026-12-07).
var scenario32Floors = map[string][2]float64{
	"time": {0.87, 1}, "inherited": {1, 1}, "speaker": {0, 0.83}, "paraphrase": {0.40, 0.60}, "lowinfo": {0.33, 1},
	"recency": {0.57, 1}, "previous": {0.50, 0.75}, "crosslingual": {0.33, 0.50}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario33Floors are the thirty-third set's floors (testdata/scenarios33,
// a driving school in Chengdu, written by a helper session blind to the
// engine and committed at 2bd0bd9 before any retrieval ran on it): its
// first measurement, all .56 / .71 (paraphrase .00 / .00, crosslingual
// .20 / .40, previous .25 / .75), the same at the session's base 7d602f2
// and after 78e66a1.
// Speaker floor raised with the participants rule (2026-12-07).
var scenario33Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {0.75, 0.75}, "speaker": {0.40, 1}, "paraphrase": {0, 0}, "lowinfo": {0.75, 1},
	"recency": {0.50, 0.83}, "previous": {0.25, 0.75}, "crosslingual": {0.20, 0.40}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario34Floors are the thirty-fourth set's floors (testdata/scenarios34,
// a residential compound's property office, written by a helper session
// blind to the engine and committed at 4dcb981 before any retrieval ran
// on it): its first measurement, all .67 / .84 (time .67 / .67,
// crosslingual .40 / .60), the same at the session's base 7d602f2 and
// after 5c4ea9b.
var scenario34Floors = map[string][2]float64{
	"time": {0.66, 0.66}, "inherited": {0.75, 1}, "speaker": {0.40, 0.80}, "paraphrase": {0.40, 0.80}, "lowinfo": {1, 1},
	"recency": {0.66, 0.83}, "previous": {0.75, 1}, "crosslingual": {0.40, 0.60}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario35Floors are the thirty-fifth set's floors (testdata/scenarios35,
// a bookkeeping and tax firm, written by a helper session blind to the
// engine and committed at ab91c6b before any retrieval ran on it): its
// first measurement at 2f7fd35, out of sample for every rule of the
// 2026-12-06 16:46 session: all .56 / .73 (paraphrase .00 / .00,
// crosslingual .20 / .40), against .56 / .69 at that session's base
// 7d602f2 (recency hit@5 .83 -> 1, crosslingual .20 -> .40).
// Inherited floor hit@1 lowered: "Which months of bank statements is Oliver still missing?" 1 -> 2 when a [current] word ("still") weighs half beside the topic (currentReps, 2026-12-07; the 36 sets' hit@1 / hit@5 1097.69 / 1366.75 -> 1097.34 / 1368.88).
var scenario35Floors = map[string][2]float64{
	"time": {0.66, 0.83}, "inherited": {0.50, 1}, "speaker": {0.60, 0.60}, "paraphrase": {0, 0}, "lowinfo": {0.75, 1},
	"recency": {0.50, 1}, "previous": {0.50, 0.75}, "crosslingual": {0.20, 0.40}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario36Floors are the thirty-sixth set's floors (testdata/scenarios36,
// a bilingual kindergarten, written by a helper session blind to the
// engine and committed at aeecf42 before any retrieval ran on it): its
// first measurement, all .58 / .87 (previous .00 / 1, paraphrase
// .20 / .80, crosslingual .40 / .60), the same at the 2026-12-06 16:46
// session's base 7d602f2 and after every rule of that session (8c0fc3c).
// Lowinfo hit@1 1 -> .75 with the translation cap (translationReps):
// "np, thanks! what's Daniel's housing allowance again?" keeps its answer
// at rank 2 (the English turn had gained the Chinese turn's 住房补贴
// through session context at the translation's full weight; Daniel's
// reply after it is first by the speaker rule). The cap was kept for the
// 1M suite's planted facts (.928 -> .939) at no cost in sum (36 sets
// 1099.75 / 1356.59 -> 1098.59 / 1358.84).
var scenario36Floors = map[string][2]float64{
	"time": {0.83, 0.83}, "inherited": {0.75, 0.75}, "speaker": {0.40, 0.80}, "paraphrase": {0.20, 0.80}, "lowinfo": {0.75, 1},
	"recency": {0.50, 1}, "previous": {0, 1}, "crosslingual": {0.40, 0.60}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

var scenarioClasses = []string{"time", "inherited", "speaker", "paraphrase", "lowinfo", "recency", "previous", "crosslingual", "tenancy", "nonempty"}

// loadScenario reads the history and the questions and checks that every
// question is well formed: a known class, expected keys that exist and
// belong to the question's agent (or none, for the classes graded by rule).
func loadScenario(t *testing.T, set string) ([]scenarioRecord, []scenarioQuestion) {
	t.Helper()
	dir := filepath.Join("testdata", set)
	recs := readJSONL[scenarioRecord](t, filepath.Join(dir, "records.jsonl"))
	qs := readJSONL[scenarioQuestion](t, filepath.Join(dir, "questions.jsonl"))
	owner := map[string]string{}
	for i, r := range recs {
		if len(r.Meta["key"]) != 1 {
			t.Fatalf("records[%d].meta.key: want one value, got %q", i, r.Meta["key"])
		}
		k := r.Meta["key"][0]
		if _, dup := owner[k]; dup {
			t.Fatalf("records[%d].meta.key: %q used twice", i, k)
		}
		owner[k] = r.Agent
	}
	now := setNow(t, dir)
	for i := range qs {
		qs[i].now = now
	}
	ids := map[string]bool{}
	for i, q := range qs {
		if ids[q.ID] {
			t.Fatalf("questions[%d].id: %q used twice", i, q.ID)
		}
		ids[q.ID] = true
		if !slices.Contains(scenarioClasses, q.Class) {
			t.Fatalf("questions[%d] (%s).class: unknown %q", i, q.ID, q.Class)
		}
		byRule := q.Class == "tenancy" || q.Class == "nonempty"
		if byRule != (len(q.Expect) == 0) {
			t.Fatalf("questions[%d] (%s).expect: class %s wants %s", i, q.ID, q.Class,
				map[bool]string{true: "none (graded by rule)", false: "at least one key"}[byRule])
		}
		for _, k := range q.Expect {
			if a, ok := owner[k]; !ok || a != q.Agent {
				t.Fatalf("questions[%d] (%s).expect: %q is not a record of agent %q", i, q.ID, k, q.Agent)
			}
		}
		if q.K < 5 {
			t.Fatalf("questions[%d] (%s).k: %d, want at least 5 (hit@5 is reported)", i, q.ID, q.K)
		}
	}
	return recs, qs
}

// scenarioOutcome is one question's grade.
type scenarioOutcome struct {
	q          scenarioQuestion
	rank       int      // 1-based rank of the first expected record; 0: not in the top K
	hit1, hit5 bool     // graded per class
	foreign    []string // keys of records of another agent that were returned
	top        []string // keys of the returned records, best first
}

func gradeScenario(q scenarioQuestion, res *engine.Result) scenarioOutcome {
	o := scenarioOutcome{q: q}
	for i, m := range res.Memories {
		key := strings.Join(m.Meta["key"], ",")
		o.top = append(o.top, key)
		if m.Agent != q.Agent {
			o.foreign = append(o.foreign, key)
		}
		if o.rank == 0 && slices.Contains(q.Expect, key) {
			o.rank = i + 1
		}
	}
	switch q.Class {
	case "tenancy":
		// The store filters by agent, so a foreign record anywhere is a
		// leak; checked for every question below, graded here.
		o.hit1 = len(o.foreign) == 0
		o.hit5 = o.hit1
	case "nonempty":
		o.hit1 = len(res.Memories) > 0
		o.hit5 = o.hit1
	default:
		o.hit1 = o.rank == 1
		o.hit5 = o.rank >= 1 && o.rank <= 5
	}
	return o
}

// scenarioTally is hit@1 and hit@5 over a set of questions.
type scenarioTally struct{ n, hit1, hit5 int }

func (s *scenarioTally) add(o scenarioOutcome) {
	s.n++
	if o.hit1 {
		s.hit1++
	}
	if o.hit5 {
		s.hit5++
	}
}

func (s scenarioTally) rates() (float64, float64) {
	if s.n == 0 {
		return 0, 0
	}
	return float64(s.hit1) / float64(s.n), float64(s.hit5) / float64(s.n)
}

// floor2 rounds down to two decimals, the precision of the floors.
func floor2(x float64) float64 { return math.Floor(x*100+1e-9) / 100 }

// scenarioStore opens a store on opts at scenarioNow holding the first
// scenario set's records, and returns it with the questions.
func scenarioStore(t *testing.T, opts engine.Options) (*engine.DB, []scenarioQuestion) {
	t.Helper()
	return scenarioSetStore(t, "scenarios", opts)
}

// setNow is the reference time of the set in dir: the RFC 3339 time in
// its file now, or scenarioNow when it has none.
func setNow(t *testing.T, dir string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "now"))
	if errors.Is(err, fs.ErrNotExist) {
		return scenarioNow
	}
	if err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s/now: %v", dir, err)
	}
	return now
}

// scenarioSetStore is scenarioStore for the set in testdata/set, its
// clock at the set's reference time.
func scenarioSetStore(t *testing.T, set string, opts engine.Options) (*engine.DB, []scenarioQuestion) {
	t.Helper()
	recs, qs := loadScenario(t, set)
	now := setNow(t, filepath.Join("testdata", set))
	opts.Clock = func() time.Time { return now }
	db, err := engine.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	batch := make([]engine.Record, len(recs))
	for i, r := range recs {
		batch[i] = engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
	}
	if _, err := db.AppendBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	return db, qs
}

// scenarioRun is the tallies of one pass over the questions: per class,
// per class without the questions marked "needs" (core), per language,
// and the examples' outcomes.
type scenarioRun struct {
	all, core, byLang map[string]*scenarioTally
	examples          []scenarioOutcome
}

// askScenarios asks every question of qs in lazy mode, grades it, tallies
// it and hands it to each (which may be nil).
func askScenarios(t *testing.T, db *engine.DB, qs []scenarioQuestion, each func(scenarioQuestion, scenarioOutcome, *engine.Result)) scenarioRun {
	t.Helper()
	run := scenarioRun{all: map[string]*scenarioTally{}, core: map[string]*scenarioTally{}, byLang: map[string]*scenarioTally{}}
	for _, c := range scenarioClasses {
		run.all[c], run.core[c] = &scenarioTally{}, &scenarioTally{}
	}
	for _, q := range qs {
		res, err := db.Recall(context.Background(), engine.Query{
			Agent: q.Agent, Text: q.Text, CurrentSession: q.Session, K: q.K,
			Now: q.now, ParseTime: true,
		})
		if err != nil {
			t.Fatalf("%s %q: %v", q.ID, q.Text, err)
		}
		o := gradeScenario(q, res)
		run.all[q.Class].add(o)
		if q.Needs == "" {
			run.core[q.Class].add(o)
		}
		if run.byLang[q.Lang] == nil {
			run.byLang[q.Lang] = &scenarioTally{}
		}
		run.byLang[q.Lang].add(o)
		if q.Example {
			run.examples = append(run.examples, o)
		}
		if each != nil {
			each(q, o, res)
		}
	}
	return run
}

func TestScenarios(t *testing.T) {
	runScenarioSet(t, "scenarios", scenarioFloors, *scenarioSummary)
}

// scenario19Floors are the nineteenth set's floors (testdata/scenarios19,
// an indie band's year-end show; committed at 59ca951 before any
// retrieval ran on it). First measurement, out of sample, hit@1 / hit@5:
// time 0.75/0.75, inherited 0.50/1, speaker 0.67/1, paraphrase 0/0,
// lowinfo 0.33/0.67, recency 0.50/1, previous 0.50/0.50, crosslingual
// 0/0 (needs), tenancy and nonempty 1/1; all 0.50/0.66 (core 0.56/0.74).
// Its misses then gave three rules (in sample for this set): a moment
// named ("about two hours ago") ranks the turns nearest it first,
// "Monday last week", "our last band meeting": time 1/1, previous 1/1.
var scenario19Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {0.50, 1}, "speaker": {0.66, 1}, "paraphrase": {0, 0}, "lowinfo": {0.33, 0.66},
	"recency": {0.50, 1}, "previous": {1, 1}, "crosslingual": {0.25, 0.75}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario20Floors are the twentieth set's floors (testdata/scenarios20,
// a neighbourhood dental clinic; committed at 69ea914 before any
// retrieval ran on it, after the set-19 rules). First measurement, out of
// sample, hit@1 / hit@5: time 0.78/0.78, inherited 1/1, speaker
// 0.33/0.67, paraphrase 0/0.50, lowinfo 0.67/1, recency 0.33/0.83,
// previous 1/1, crosslingual 0/0.25 (needs), tenancy and nonempty 1/1;
// all 0.55/0.76 (core 0.62/0.82). Main at the session's start (d05d844):
// all 0.50/0.74, time 0.67/0.78, previous 0.50/0.50. Then two time
// rules read off its misses ("a quarter of an hour ago", "快十点那会儿"):
// time 0.78/1; and a nickname naming one role ("小梅" for 梁小梅): speaker
// 0.67/1.
var scenario20Floors = map[string][2]float64{
	"time": {0.77, 1}, "inherited": {0.50, 1}, "speaker": {0.66, 1}, "paraphrase": {0, 0.50}, "lowinfo": {0.66, 1},
	"recency": {0.33, 0.83}, "previous": {1, 1}, "crosslingual": {0.50, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario21Floors are the twenty-first set's floors (testdata/scenarios21,
// a translation agency, written blind to the engine by a helper asked for
// speakers named by nickname, title and pinyin among the usual classes):
// its first measurement at 2afe679 was all .58/.82, core .69/.91; with the
// pinyin names (written before the set was read) .61/.82, "Mr. Gu" rank 5
// -> 1; with the transliterations (in sample) .63/.84, 丹尼尔 for Daniel
// Price miss -> 1. Its misses are paraphrase (译员, 馆子, "spreadsheets")
// and the crosslingual answers.
var scenario21Floors = map[string][2]float64{
	"time": {0.66, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0, 0.50}, "lowinfo": {1, 1},
	"recency": {0.66, 0.83}, "previous": {0.5, 1}, "crosslingual": {0.75, 1}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario22Floors are the twenty-second set's floors (testdata/scenarios22,
// a hardware start-up's supply chain, its own reference time in the file
// now; committed at 8505ab7 before any retrieval ran on it). First
// measurement at 2afe679, out of sample: all .50/.75, core .57/.83; with
// the pinyin names and transliterations (out of sample) .53/.75 ("Lao
// Huang" rank 3 -> 1); with the holidays and a Latin role named by one of
// its words (both read off its misses) .57/.80, core .63/.89 ("between
// December 20 and New Year's", "Marcus今天开会提了些什么" miss -> 1; "how
// many units is Priya taking" rank 2 -> 5: Priya Nair's records are
// boosted, the answer is the user's note).
var scenario22Floors = map[string][2]float64{
	"time": {1, 1}, "inherited": {1, 1}, "speaker": {1, 1}, "paraphrase": {0, 0.25}, "lowinfo": {0.33, 1},
	"recency": {0.28, 0.71}, "previous": {1, 1}, "crosslingual": {0.25, 0.50}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario23Floors are the twenty-third set's floors (testdata/scenarios23,
// a bilingual family: a video call, kin named by kinship, 我妈, 婆婆,
// "Lan's dad"; committed at 6f96a26 before any retrieval ran on it). First
// measurement, the same at 2afe679 and at this session's head: all
// .42/.65, core .49/.74; kinship names (speaker 0/.33) and "our last call"
// meaning the call before this morning's (previous 0/.33) are new misses.
// Speaker floor raised with the participants rule (2026-12-07).
var scenario23Floors = map[string][2]float64{
	"time": {0.66, 0.88}, "inherited": {1, 1}, "speaker": {0, 1}, "paraphrase": {0, 0.25}, "lowinfo": {0.33, 1},
	"recency": {0.71, 0.85}, "previous": {0, 0.33}, "crosslingual": {0, 0.50}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// scenario24Floors are the twenty-fourth set's floors (testdata/scenarios24,
// a community choir on video calls; committed at 1c98aad before any
// retrieval ran on it). First measurement at 1c98aad, out of sample for
// every rule of that session: all .45/.65, core .51/.74; with 清明's days
// off and Easter (read off its two time misses) .50/.70, core .57/.80.
// "我老公今天会上说了些啥？" comes back empty: 我 names the role user (no
// longer empty since 0197675: the call's records, none of them his).
var scenario24Floors = map[string][2]float64{
	"time": {0.77, 1}, "inherited": {1, 1}, "speaker": {0, 0.33}, "paraphrase": {0, 0.25}, "lowinfo": {0.66, 1},
	"recency": {0.42, 0.57}, "previous": {0.5, 1}, "crosslingual": {0.25, 0.25}, "tenancy": {1, 1}, "nonempty": {1, 1},
}

// TestScenarioSets runs the sets written after the first, each before it
// was measured (testdata/scenarios2 to scenarios36; their README.md files
// say what they hold), against their own floors:
//
//	go test -run 'TestScenarioSets/scenarios4' -v ./engine/
//
// The weight of a Chinese question's English translations
// (glossaryEnglishReps) raised the crosslingual floors of sets 5, 10, 21,
// 22, 24, 28 and 29 and lowered nine others by a question each at a cap
// of 16 (all 29 sets: 873.0 / 1081.6 -> 879.3 / 1095.5; at the cap of 8
// kept, 877.9 / 1090.8): set 1 paraphrase "新
// 同事报到那天要准备哪些东西？", recency "产品最终什么时候上线？" and
// crosslingual, sets 4, 8, 10 and 22 recency, 5 time, 10 paraphrase "厨房
// 设备什么时候到？": English records found by the translations of 产品, 设备.
//
// The glossary (glossary.go) raised the crosslingual floors of sets 1, 5,
// 6 and 11-26 and lowered six others, each by one question its
// translations cost (all sets: 803.1 / 991.9 -> 820.2 / 1012.2 hit@1 /
// hit@5 summed): set 4 paraphrase "when is the lab safety course?" (实验室
// records), 11 paraphrase "给客人的回礼是什么？" (English wedding records),
// 17 recency, 20 inherited "What was that patient complaining about last
// week?" (its answer says "Complaint" and was found by the dense pass
// alone; 患者 now finds Chinese records), 22 and 27 paraphrase.
func TestScenarioSets(t *testing.T) {
	for _, set := range []struct {
		dir    string
		floors map[string][2]float64
	}{
		{"scenarios2", scenario2Floors},
		{"scenarios3", scenario3Floors},
		{"scenarios4", scenario4Floors},
		{"scenarios5", scenario5Floors},
		{"scenarios6", scenario6Floors},
		{"scenarios7", scenario7Floors},
		{"scenarios8", scenario8Floors},
		{"scenarios9", scenario9Floors},
		{"scenarios10", scenario10Floors},
		{"scenarios11", scenario11Floors},
		{"scenarios12", scenario12Floors},
		{"scenarios13", scenario13Floors},
		{"scenarios14", scenario14Floors},
		{"scenarios15", scenario15Floors},
		{"scenarios16", scenario16Floors},
		{"scenarios17", scenario17Floors},
		{"scenarios18", scenario18Floors},
		{"scenarios19", scenario19Floors},
		{"scenarios20", scenario20Floors},
		{"scenarios21", scenario21Floors},
		{"scenarios22", scenario22Floors},
		{"scenarios23", scenario23Floors},
		{"scenarios24", scenario24Floors},
		{"scenarios25", scenario25Floors},
		{"scenarios26", scenario26Floors},
		{"scenarios27", scenario27Floors},
		{"scenarios28", scenario28Floors},
		{"scenarios29", scenario29Floors},
		{"scenarios30", scenario30Floors},
		{"scenarios31", scenario31Floors},
		{"scenarios32", scenario32Floors},
		{"scenarios33", scenario33Floors},
		{"scenarios34", scenario34Floors},
		{"scenarios35", scenario35Floors},
		{"scenarios36", scenario36Floors},
	} {
		t.Run(set.dir, func(t *testing.T) { runScenarioSet(t, set.dir, set.floors, "") })
	}
}

// runScenarioSet asks the set in testdata/set in lazy mode, logs its table
// (and writes it to summary when that is not empty) and fails t on any
// record of another agent returned and on a class below its floor (with
// -scenario.strict: below the targets).
func runScenarioSet(t *testing.T, set string, floors map[string][2]float64, summary string) {
	db, qs := scenarioSetStore(t, set, engine.Options{})
	var leaks []scenarioOutcome
	run := askScenarios(t, db, qs, func(q scenarioQuestion, o scenarioOutcome, res *engine.Result) {
		if len(o.foreign) > 0 {
			leaks = append(leaks, o)
		}
		if !o.hit5 {
			t.Logf("miss %s [%s] %q (expect %v): got %v, time expr %q", q.ID, q.Class, q.Text, q.Expect, o.top, res.Stats.TimeExpr)
		} else if !o.hit1 {
			t.Logf("rank %d %s [%s] %q (expect %v): got %v", o.rank, q.ID, q.Class, q.Text, q.Expect, o.top)
		}
	})

	table := scenarioTable(run)
	t.Log("\n" + table)
	if summary != "" {
		if err := os.WriteFile(summary, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, o := range leaks {
		t.Errorf("%s %q (agent %s) returned records of another agent: %v", o.q.ID, o.q.Text, o.q.Agent, o.foreign)
	}
	if *scenarioStrict {
		for _, c := range scenarioClasses {
			if run.core[c].n == 0 {
				continue
			}
			if _, h5 := run.core[c].rates(); h5 < scenarioTargetHit5 {
				t.Errorf("strict: class %s hit@5 %.2f, target %.2f", c, h5, scenarioTargetHit5)
			}
		}
		for _, o := range run.examples {
			if o.q.Needs == "" && !o.hit1 {
				t.Errorf("strict: example %s %q not answered at rank 1 (rank %d, got %v)", o.q.ID, o.q.Text, o.rank, o.top)
			}
		}
		return
	}
	for _, c := range scenarioClasses {
		h1, h5 := run.all[c].rates()
		f, ok := floors[c]
		if !ok {
			t.Errorf("%s: class %s has no floor", set, c)
			continue
		}
		if h1 < f[0] || h5 < f[1] {
			t.Errorf("%s: class %s regressed: hit@1 %.2f hit@5 %.2f, floor %.2f / %.2f", set, c, h1, h5, f[0], f[1])
		}
		if floor2(h1) > f[0] || floor2(h5) > f[1] {
			t.Logf("%s: class %s is above its floor: raise its floor to {%.2f, %.2f}", set, c, floor2(h1), floor2(h5))
		}
	}
}

// scenarioTable renders the per-class figures as a markdown table.
func scenarioTable(run scenarioRun) string {
	all, core, byLang, examples := run.all, run.core, run.byLang, run.examples
	var b strings.Builder
	fmt.Fprintf(&b, "scenarios: lazy, hash embedder, default options, ParseTime, now %s\n\n", scenarioNow.Format(time.RFC3339))
	b.WriteString("| class | n | hit@1 | hit@5 | without \"needs\": n | hit@1 | hit@5 |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var tot, totCore scenarioTally
	for _, c := range scenarioClasses {
		a, k := all[c], core[c]
		a1, a5 := a.rates()
		k1, k5 := k.rates()
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %d | %.2f | %.2f |\n", c, a.n, a1, a5, k.n, k1, k5)
		tot.n, tot.hit1, tot.hit5 = tot.n+a.n, tot.hit1+a.hit1, tot.hit5+a.hit5
		totCore.n, totCore.hit1, totCore.hit5 = totCore.n+k.n, totCore.hit1+k.hit1, totCore.hit5+k.hit5
	}
	t1, t5 := tot.rates()
	c1, c5 := totCore.rates()
	fmt.Fprintf(&b, "| all | %d | %.2f | %.2f | %d | %.2f | %.2f |\n", tot.n, t1, t5, totCore.n, c1, c5)
	for _, l := range slices.Sorted(maps.Keys(byLang)) {
		l1, l5 := byLang[l].rates()
		fmt.Fprintf(&b, "| lang=%s | %d | %.2f | %.2f | | | |\n", l, byLang[l].n, l1, l5)
	}
	var ex scenarioTally
	for _, o := range examples {
		ex.add(o)
	}
	e1, e5 := ex.rates()
	fmt.Fprintf(&b, "\nissue examples: %d, at rank 1: %d (%.2f), in the top 5: %d (%.2f)\n", ex.n, ex.hit1, e1, ex.hit5, e5)
	return b.String()
}
