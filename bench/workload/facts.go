package workload

import (
	"math/rand/v2"
	"strconv"
)

// A factKind is one family of planted facts. Every statement and echo
// template contains marker, and no filler template can produce marker
// together with the fact's subject and value: that is what makes the labels
// complete by construction (TestPlantedLabels checks it on a generated
// corpus). Paraphrases avoid the marker and the statement's key words.
type factKind struct {
	name       string
	subject    slot // slotPerson, slotService, slotProject or slotTech
	marker     string
	intent     string
	statements []string
	echoes     []string
	questions  []string
	paraphrase []string
	// talk: sentences about the fact's topic and subject that do not state
	// it (no value), used by Config.TalkRate.
	talk  []string
	value func(r *rand.Rand, a *agentInfo) string

	st, ec, qs, ps, tk []tmpl
}

var factKinds = []*factKind{
	{
		name: "badge", subject: slotPerson, marker: "badge number", intent: "inform",
		statements: []string{
			"By the way, {SUBJ}'s badge number is {VAL}.",
			"{SUBJ}'s badge number is {VAL}, in case the front desk asks.",
			"Note for later: the badge number for {SUBJ} is {VAL}.",
		},
		echoes:     []string{"Noted, {SUBJ}'s badge number is {VAL}."},
		questions:  []string{"What is {SUBJ}'s badge number?", "What badge number does {SUBJ} have?"},
		talk:       []string{"Has anyone seen {SUBJ}'s badge? It was left at the front desk.", "{SUBJ} forgot the badge again, security had to let them in."},
		paraphrase: []string{"What ID does {SUBJ} use to get into the building?", "Which code lets {SUBJ} through the office door?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return strconv.Itoa(1000 + r.IntN(9000)) },
	},
	{
		name: "pool", subject: slotService, marker: "connection pool size", intent: "decision",
		statements: []string{
			"We decided to set the connection pool size of {SUBJ} to {VAL}.",
			"Final call: {SUBJ} gets a connection pool size of {VAL}.",
			"Let's set the connection pool size for {SUBJ} to {VAL} and move on.",
		},
		echoes:     []string{"Done, {SUBJ} now runs with a connection pool size of {VAL}."},
		questions:  []string{"What connection pool size did we set for {SUBJ}?", "What is the connection pool size of {SUBJ}?"},
		talk:       []string{"The connection pool of {SUBJ} is saturated again.", "Connections to {SUBJ} keep timing out, maybe the pool is too small."},
		paraphrase: []string{"How many database connections can {SUBJ} keep open at once?", "What is the cap on simultaneous DB links we allowed {SUBJ}?"},
		value: func(r *rand.Rand, _ *agentInfo) string {
			return strconv.Itoa([]int{8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128, 256}[r.IntN(12)])
		},
	},
	{
		name: "database", subject: slotService, marker: "database", intent: "decision",
		statements: []string{
			"We chose {VAL} as the database for {SUBJ}.",
			"Decision: the database for {SUBJ} will be {VAL}.",
			"After the review we picked {VAL} as the {SUBJ} database.",
		},
		echoes:     []string{"Confirmed, the {SUBJ} database is {VAL}."},
		questions:  []string{"Which database did we choose for {SUBJ}?", "What database does {SUBJ} use?"},
		talk:       []string{"The {SUBJ} database is slow this morning.", "Moving {SUBJ} to another database would take a sprint at least."},
		paraphrase: []string{"Where does {SUBJ} keep its records now?", "What storage engine did we settle on to back {SUBJ}?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return dbNames[r.IntN(len(dbNames))] },
	},
	{
		name: "launch", subject: slotProject, marker: "launch", intent: "inform",
		statements: []string{
			"The {SUBJ} launch is scheduled for {VAL}.",
			"Heads up: {SUBJ} has its launch on {VAL}, {P} confirmed.",
		},
		echoes:     []string{"Got it, the {SUBJ} launch is on {VAL}."},
		questions:  []string{"When is the {SUBJ} launch scheduled?", "What is the launch date of {SUBJ}?"},
		talk:       []string{"Are we still on track for the {SUBJ} launch?", "Marketing asked about the {SUBJ} launch plan again."},
		paraphrase: []string{"When does {SUBJ} ship to customers?", "What day will {SUBJ} be released to everyone?"},
		value: func(r *rand.Rand, _ *agentInfo) string {
			return monthNames[r.IntN(12)] + " " + strconv.Itoa(1+r.IntN(28))
		},
	},
	{
		name: "oncall", subject: slotService, marker: "on-call", intent: "inform",
		statements: []string{
			"{VAL} is now the on-call owner of {SUBJ}.",
			"Starting today {VAL} owns the on-call rotation for {SUBJ}.",
		},
		echoes:     []string{"Ok, {VAL} is on-call for {SUBJ} then."},
		questions:  []string{"Who is the on-call owner of {SUBJ}?", "Who owns the on-call rotation for {SUBJ}?"},
		talk:       []string{"The on-call handover for {SUBJ} was messy this week.", "Who covered on-call for {SUBJ} last weekend?"},
		paraphrase: []string{"Who gets paged when {SUBJ} breaks at night?", "If {SUBJ} goes down, whose phone rings?"},
		value:      func(r *rand.Rand, a *agentInfo) string { return a.persons[r.IntN(len(a.persons))] },
	},
	{
		name: "pin", subject: slotTech, marker: "pinned", intent: "decision",
		statements: []string{
			"We pinned {SUBJ} to version {VAL} until the regression is fixed.",
			"Let's keep {SUBJ} pinned at {VAL} for now.",
		},
		echoes:     []string{"Ok, {SUBJ} stays pinned at {VAL}."},
		questions:  []string{"Which version of {SUBJ} did we pin?", "What version is {SUBJ} pinned to?"},
		talk:       []string{"{SUBJ} put out a new release, should we upgrade?", "The {SUBJ} changelog mentions a regression fix."},
		paraphrase: []string{"What release of {SUBJ} are we locked on?", "Which {SUBJ} build are we holding back on until the bug is gone?"},
		value: func(r *rand.Rand, _ *agentInfo) string {
			return "v" + strconv.Itoa(1+r.IntN(9)) + "." + strconv.Itoa(r.IntN(30)) + "." + strconv.Itoa(r.IntN(20))
		},
	},
	{
		name: "retro", subject: slotProject, marker: "retro", intent: "inform",
		statements: []string{
			"The {SUBJ} retro moved to {VAL}.",
			"Heads up, we hold the {SUBJ} retro on {VAL} from now on.",
		},
		echoes:     []string{"Calendar updated: {SUBJ} retro on {VAL}."},
		questions:  []string{"When is the {SUBJ} retro?", "What time is the {SUBJ} retro now?"},
		talk:       []string{"The {SUBJ} retro notes are in the wiki.", "Half the team skipped the {SUBJ} retro."},
		paraphrase: []string{"When do we look back on how the {SUBJ} sprint went?", "What slot did the post-sprint review of {SUBJ} move to?"},
		value: func(r *rand.Rand, _ *agentInfo) string {
			return weekdays[r.IntN(5)] + " at " + strconv.Itoa(1+r.IntN(11)) + []string{"am", "pm"}[r.IntN(2)]
		},
	},
	{
		name: "ticket", subject: slotService, marker: "memory leak", intent: "inform",
		statements: []string{
			"Ticket {VAL} tracks the memory leak in {SUBJ}.",
			"I filed {VAL} for the {SUBJ} memory leak.",
		},
		echoes:     []string{"Thanks, {VAL} is the memory leak ticket for {SUBJ}."},
		questions:  []string{"Which ticket tracks the {SUBJ} memory leak?", "What is the ticket number for the memory leak in {SUBJ}?"},
		talk:       []string{"The memory leak in {SUBJ} is back after the deploy.", "Heap graphs of {SUBJ} look like a memory leak again."},
		paraphrase: []string{"Where are we following the bug about {SUBJ} running out of RAM?", "What issue id covers {SUBJ} slowly eating all its RAM?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return "OPS-" + strconv.Itoa(10000+r.IntN(90000)) },
	},
	{
		name: "budget", subject: slotProject, marker: "budget", intent: "decision",
		statements: []string{
			"The {SUBJ} budget was approved at {VAL}.",
			"Finance approved {VAL} as the {SUBJ} budget for the quarter.",
		},
		echoes:     []string{"Great, {VAL} budget for {SUBJ} it is."},
		questions:  []string{"What budget was approved for {SUBJ}?", "How much is the {SUBJ} budget?"},
		talk:       []string{"Will the {SUBJ} budget cover the new hires?", "Finance wants an update on the {SUBJ} budget."},
		paraphrase: []string{"How much money was set aside for {SUBJ}?", "What spending cap does {SUBJ} have?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return "$" + strconv.Itoa(5+5*r.IntN(200)) + "k" },
	},
	{
		name: "language", subject: slotPerson, marker: "language for new services", intent: "inform",
		statements: []string{
			"{SUBJ}'s preferred language for new services is {VAL}.",
			"Remember that {SUBJ} picks {VAL} as the language for new services.",
		},
		echoes:     []string{"Good to know, {SUBJ} likes {VAL} as the language for new services."},
		questions:  []string{"Which language does {SUBJ} prefer for new services?", "What is {SUBJ}'s language for new services?"},
		talk:       []string{"{SUBJ} has strong opinions about which stack to pick for backends.", "{SUBJ} wants to talk about coding standards."},
		paraphrase: []string{"What does {SUBJ} like to code fresh backends in?", "If {SUBJ} starts a backend from scratch, what will it be written in?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return langNames[r.IntN(len(langNames))] },
	},
	{
		name: "timeout", subject: slotService, marker: "request timeout", intent: "decision",
		statements: []string{
			"We set the request timeout of {SUBJ} to {VAL}.",
			"From now on {SUBJ} uses a request timeout of {VAL}.",
		},
		echoes:     []string{"Applied: {SUBJ} request timeout is {VAL}."},
		questions:  []string{"What request timeout did we set for {SUBJ}?", "What is the request timeout of {SUBJ}?"},
		talk:       []string{"Requests to {SUBJ} are timing out again.", "Should we raise the timeout on {SUBJ}?"},
		paraphrase: []string{"How long does {SUBJ} wait before giving up on a call?", "After how long does {SUBJ} abandon a slow upstream?"},
		value:      func(r *rand.Rand, _ *agentInfo) string { return strconv.Itoa(1+r.IntN(60)) + " seconds" },
	},
	{
		name: "birthday", subject: slotPerson, marker: "birthday", intent: "chitchat",
		statements: []string{
			"Oh, {SUBJ}'s birthday is on {VAL}, let's not forget.",
			"Reminder: {SUBJ} has a birthday on {VAL}.",
		},
		echoes:     []string{"Added {SUBJ}'s birthday on {VAL} to the calendar."},
		questions:  []string{"When is {SUBJ}'s birthday?", "What date is {SUBJ}'s birthday?"},
		talk:       []string{"We should plan something for {SUBJ}'s birthday.", "Does anyone know what {SUBJ} wants as a birthday gift?"},
		paraphrase: []string{"On what day should we bring cake for {SUBJ}?", "When does {SUBJ} turn a year older?"},
		value: func(r *rand.Rand, _ *agentInfo) string {
			return monthNames[r.IntN(12)] + " " + strconv.Itoa(1+r.IntN(28))
		},
	},
}

func init() {
	for _, k := range factKinds {
		k.st = compileAll(k.statements)
		k.ec = compileAll(k.echoes)
		k.qs = compileAll(k.questions)
		k.ps = compileAll(k.paraphrase)
		k.tk = compileAll(k.talk)
	}
}

// fact is one planted fact: where it is stated and what it says.
type fact struct {
	ordinal int // record that states it
	echo    int // record that confirms it, or -1
	agent   int
	kind    *factKind
	subject string
	value   string
	stmt    int // index into kind.st
	unix    int64
}
