package workload

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

type slot uint8

const (
	slotLit slot = iota
	slotNoun
	slotNouns
	slotAdj
	slotGlue
	slotVerb
	slotVerbS
	slotVerbD
	slotVerbG
	slotWord
	slotPerson
	slotService
	slotProject
	slotTech
	slotTail
	slotID
	slotNum
	slotBig
	slotMS
	slotPct
	slotDay
	slotDate
	slotHour
	slotDB
	slotLang
	slotZhNoun
	slotZhVerb
	slotZhAdj
	slotZhDay
	slotSubj // fact subject
	slotVal  // fact value
)

var slotNames = map[string]slot{
	"n": slotNoun, "ns": slotNouns, "a": slotAdj, "g": slotGlue,
	"v": slotVerb, "vs": slotVerbS, "vd": slotVerbD, "vg": slotVerbG, "w": slotWord,
	"P": slotPerson, "S": slotService, "J": slotProject, "T": slotTech, "X": slotTail,
	"id": slotID, "num": slotNum, "big": slotBig, "ms": slotMS, "pct": slotPct,
	"day": slotDay, "date": slotDate, "hour": slotHour, "DB": slotDB, "L": slotLang,
	"zn": slotZhNoun, "zv": slotZhVerb, "za": slotZhAdj, "zd": slotZhDay,
	"SUBJ": slotSubj, "VAL": slotVal,
}

type piece struct {
	lit  string
	slot slot
}

type tmpl []piece

// compile parses a template. Unknown slots are a programming error caught by
// TestTemplatesCompile, so compile keeps them as literal text rather than
// panicking.
func compile(s string) tmpl {
	var t tmpl
	for len(s) > 0 {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			t = append(t, piece{lit: s})
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			t = append(t, piece{lit: s})
			break
		}
		name := s[i+1 : i+j]
		sl, ok := slotNames[name]
		if !ok {
			// JSON braces and the like: literal up to and including '{'.
			t = append(t, piece{lit: s[:i+1]})
			s = s[i+1:]
			continue
		}
		if i > 0 {
			t = append(t, piece{lit: s[:i]})
		}
		t = append(t, piece{slot: sl})
		s = s[i+j+1:]
	}
	return t
}

func compileAll(ss []string) []tmpl {
	out := make([]tmpl, len(ss))
	for i, s := range ss {
		out[i] = compile(s)
	}
	return out
}

// vocabulary is built once; it is read-only afterwards and shared by all
// generators.
type vocabulary struct {
	nouns, nounsPl              []string
	verbs, verbsS, verbsD, vIng []string
	adjs, glue, tech            []string
	tail                        []string // long tail of identifiers
	zhNouns, zhVerbs, zhAdjs    []string

	greeting, uQuestion, uRequest, uInform, chitchat []tmpl
	aAnswer, aPlan, aDecision, aFollowup, tool, zh   []tmpl
}

// vocab is built on first use (10-20 ms, mostly the long tail), not at
// init, so packages that import workload only for its types pay nothing.
var vocab = sync.OnceValue(buildVocabulary)

func dedup(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// tailSize is the number of long-tail identifiers: rare words that appear a
// handful of times in a million records, as product names, internal tools
// and code identifiers do in real chat.
const tailSize = 20000

func buildVocabulary() *vocabulary {
	v := &vocabulary{}
	v.nouns = dedup(nounList)
	for _, n := range v.nouns {
		v.nounsPl = append(v.nounsPl, plural(n))
	}
	v.verbs = dedup(verbList)
	for _, w := range v.verbs {
		s, d, g := inflect(w)
		v.verbsS = append(v.verbsS, s)
		v.verbsD = append(v.verbsD, d)
		v.vIng = append(v.vIng, g)
	}
	v.adjs = dedup(adjList)
	v.glue = dedup(glueList)
	v.tech = dedup(techTerms)
	v.zhNouns, v.zhVerbs, v.zhAdjs = dedup(zhNouns), dedup(zhVerbs), dedup(zhAdjs)

	// The tail is generated from a fixed seed, independent of Config.Seed, so
	// that every corpus shares one vocabulary (KeywordQueries relies on it).
	r := rand.New(rand.NewPCG(0x7461696c, 0x766f6361))
	syl := strings.Fields("ka ri lo mi zen tor vex qua lin dex pha nor sil bra cor tek mon pli fu gar hex jo")
	suffix := strings.Fields("CP DB io ctl kit ify ly js go rs er hub ops")
	seen := make(map[string]bool, tailSize)
	var b []byte
	for len(v.tail) < tailSize {
		b = b[:0]
		switch r.IntN(4) {
		case 0: // CamelCase product name: HikariCP-like
			for k := 2 + r.IntN(2); k > 0; k-- {
				s := syl[r.IntN(len(syl))]
				b = append(b, s[0]-'a'+'A')
				b = append(b, s[1:]...)
			}
			b = append(b, suffix[r.IntN(len(suffix))]...)
		case 1: // snake_case identifier
			b = append(b, v.nouns[r.IntN(len(v.nouns))]...)
			b = append(b, '_')
			b = append(b, v.verbs[r.IntN(len(v.verbs))]...)
			b = append(b, '_')
			b = append(b, syl[r.IntN(len(syl))]...)
		case 2: // lowercase tool name
			b = append(b, syl[r.IntN(len(syl))]...)
			b = append(b, syl[r.IntN(len(syl))]...)
			b = append(b, suffix[r.IntN(len(suffix))]...)
		default: // dotted config key
			b = append(b, v.nouns[r.IntN(len(v.nouns))]...)
			b = append(b, '.')
			b = append(b, v.nouns[r.IntN(len(v.nouns))]...)
			b = append(b, '.')
			b = strconv.AppendInt(b, int64(r.IntN(100)), 10)
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			v.tail = append(v.tail, s)
		}
	}

	v.greeting = compileAll(greetingTmpl)
	v.uQuestion = compileAll(userQuestionTmpl)
	v.uRequest = compileAll(userRequestTmpl)
	v.uInform = compileAll(userInformTmpl)
	v.chitchat = compileAll(chitchatTmpl)
	v.aAnswer = compileAll(assistantAnswerTmpl)
	v.aPlan = compileAll(assistantPlanTmpl)
	v.aDecision = compileAll(assistantDecisionTmpl)
	v.aFollowup = compileAll(assistantFollowupTmpl)
	v.tool = compileAll(toolTmpl)
	v.zh = compileAll(zhTmpl)
	return v
}
