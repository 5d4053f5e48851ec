package workload

// Sentence templates. A template is literal text with slots in braces; the
// slots are parsed once at package init (see compile) so rendering is a loop
// over pieces with no fmt and no map look-ups.
//
//	{n} noun        {ns} plural noun    {a} adjective    {g} glue word
//	{v} verb        {vs} verb+s         {vd} verb+ed     {vg} verb+ing
//	{w} any content word, sometimes a long-tail identifier
//	{P} person      {S} service         {J} project      (the agent's own entities)
//	{T} tech term   {X} long-tail identifier from the pool
//	{id} fresh identifier (session id, ticket, version, trace id)
//	{num} 2..99     {big} 100..99999    {ms} latency     {pct} percent
//	{day} weekday   {date} "March 14"   {hour} "3pm"     {DB} database  {L} language

var greetingTmpl = []string{
	"Hi!", "Hey!", "Good morning!", "Morning!", "Hello again.", "Hey there!",
	"Hi, quick one.", "Hey, hope your {day} is going well.", "Back again.",
	"Good afternoon.", "Hi, it's me again.", "Hey {P} asked me to ping you.",
}

var userQuestionTmpl = []string{
	"Can you check why the {S} is so {a} today?",
	"Do you know if the {n} for {J} is {a} yet?",
	"What's the status of the {S} {n}?",
	"Why does the {n} keep {vg} after the {n}?",
	"Is it {a} to {v} the {n} on {S} right now?",
	"Any idea why {T} {vs} the {ns} every {num} minutes?",
	"How do I {v} the {n} without {vg} the {n}?",
	"Did {P} already {v} the {n} for {J}?",
	"Where did we put the {n} about the {a} {n}?",
	"What was the {n} we talked about for the {S}?",
	"Could you {v} the {ns} in {id} and tell me what you see?",
	"Should we {v} {T} or just {v} the {n}?",
	"What's a good {n} size for {S} under load?",
	"Can you remind me what {P} said about the {n}?",
	"Is the {a} {n} still {vg} on {S}?",
}

var userRequestTmpl = []string{
	"Please {v} the {ns} for {J} before the {n}.",
	"Can you {v} a {n} for the {S} {n}?",
	"Let's {v} the {a} {ns} and {v} the rest.",
	"I need you to {v} the {n} in {id}.",
	"Go ahead and {v} the {S} {n}, {P} signed off on it.",
	"Could you draft a {n} for {P} about the {a} {n}?",
	"Run the {n} against {S} with {num} {ns} and send me the {n}.",
	"Please {v} {X} to the {n} and {v} the {ns}.",
	"Take a look at {id} and {v} anything {a}.",
	"Write up the {n} from the {J} {n} so {P} can {v} it.",
}

var userInformTmpl = []string{
	"FYI the {S} {n} is {a} again since {hour}.",
	"{P} is out until {day}, so {J} {ns} will slip a bit.",
	"Just saw {id} fail with a {a} {n} on {S}.",
	"The {n} from {T} looks {a}, around {ms} ms p99.",
	"I {vd} the {n} for {J} this morning.",
	"Heads up: the {a} {n} is {vg} {pct}% of the {ns}.",
	"{P} {vd} the {ns} and says the {n} is {a} now.",
	"We got another {n} from a {n} about the {S} {n}.",
	"Looks like {X} {vd} the {n} again, same as last {day}.",
	"The {n} for {J} moved to {date}.",
	"We should revisit the pool size for the {S} at some point.",
	"Someone mentioned the {S} {n} during the {n} but nothing was decided.",
}

var chitchatTmpl = []string{
	"Thanks!", "Thanks, that helps a lot.", "Cool, makes sense.", "Haha yes.",
	"Ok sounds good.", "Long {day} so far, lots of {ns}.", "I'm grabbing a {n}, back in {num}.",
	"Nice, {P} will be happy about that.", "Ugh, {ns} again.", "Got it, thanks for the {a} {n}.",
	"Sorry, was in a {n}.", "No worries.", "Perfect.", "Lol, {T} strikes again.",
	"How was your {n}?", "Did you see the {n} about {J}?", "Have a good {day}!",
	"My {n} is {a} today, bear with me.", "Brb, {n} at the {n}.",
	"{P} brought {n} to the office, highly recommend.", "The {n} here is so {a} this week.",
	"Weekend plans: {n}, {n} and probably some {ns}.",
}

var assistantAnswerTmpl = []string{
	"I checked the {S} {ns}: the {n} is {a} because the {n} {vs} the {n}.",
	"The {n} comes from {T}; it {vs} the {ns} when the {n} is {a}.",
	"Short answer: yes, you can {v} the {n} safely, the {ns} are {a}.",
	"From the {ns} in {id}, the {a} part is the {n}, not the {n}.",
	"It looks like {P} {vd} the {n} on {date}, so the {n} should be {a}.",
	"The p99 latency of {S} is {ms} ms, up from {ms} ms last {day}.",
	"I found {num} {ns} that {v} the {n}; most of them are {a}.",
	"{T} is {vg} the {ns} because the {n} is set too {a}.",
	"The {J} {n} is {a}: {num} of {num} {ns} are done.",
	"Here is what I see: the {n} {vs} {pct}% of the time and the {ns} are {a}.",
	"There are {big} {ns} in the {n}, about {pct}% of them {a}.",
	"The {n} you asked about is in {X}, under the {a} {n}.",
}

var assistantPlanTmpl = []string{
	"I'll {v} the {n} first, then {v} the {ns} and {v} {P}.",
	"Plan: {v} the {S} {n}, {v} the {ns}, then {v} the {n}.",
	"Next I will {v} {X} and {v} the {a} {ns}.",
	"I can {v} a {n} for {J} and share it with {P} by {day}.",
	"Let me {v} the {ns} and come back with a {n}.",
	"I'll open {id} to track the {n} and {v} it after the {n}.",
	"Step {num}: {v} the {n}. Step {num}: {v} the {ns}.",
}

var assistantDecisionTmpl = []string{
	"Agreed, we'll {v} the {n} and keep the {a} {ns} for now.",
	"Decision noted: {J} will {v} {T} instead of the {a} {n}.",
	"We decided to {v} the {ns} every {num} minutes on {S}.",
	"Ok, we keep the {n} {a} and revisit on {day}.",
	"Going with the {a} option: {v} the {n} and {v} the {ns}.",
}

var assistantFollowupTmpl = []string{
	"Do you want me to {v} the {ns} as well?",
	"Should I {v} {P} about it?",
	"Want me to {v} this for {J} too?",
	"Anything else on the {S}?",
}

var toolTmpl = []string{
	`{"status":"ok","service":"{S}","latency_ms":{ms},"rows":{big},"request_id":"{id}"}`,
	`{"status":"error","service":"{S}","error":"{n} {a}: {n} {vd}","code":{num},"trace_id":"{id}"}`,
	`{"tool":"search","query":"{n} {n}","hits":{num},"top":["{X}","{n}-{n}","{id}"]}`,
	`$ kubectl get pods -n {S}` + "\n" + `{S}-{id} 1/1 Running {num} {num}h` + "\n" + `{S}-{id} 0/1 CrashLoopBackOff {num} {num}m`,
	`{"metric":"{S}.{n}.{n}","p50_ms":{ms},"p99_ms":{ms},"count":{big},"window":"{num}m"}`,
	`level=warn ts={id} caller={n}.go:{big} msg="{n} {a}" service={S} retries={num}`,
	`{"ticket":"{id}","title":"{a} {n} in {S}","assignee":"{P}","priority":"P{num}","labels":["{n}","{J}"]}`,
	`SELECT {n}_id, count(*) FROM {ns} WHERE {n} = '{a}' GROUP BY 1; -- {big} rows, {ms} ms`,
	`{"calendar":"{J} {n}","when":"{day} {hour}","attendees":["{P}","{P}"],"room":"{X}"}`,
	`git log --oneline: {id} {v} {n} in {S}; {id} {v} {a} {ns}; {id} {v} {T} {n}`,
}

// Chinese sentences: CJK exercised through mixed-script chat.
var zhTmpl = []string{
	"{zn}的{zn}有点{za}，能帮忙{zv}一下吗？",
	"今天{S}的{zn}又{za}了，我们先{zv}再说。",
	"{P}说{J}的{zn}需要{zv}，周{zd}之前完成。",
	"好的，我来{zv}{zn}，然后{zv}{zn}。",
	"刚才{zv}了{T}的{zn}，结果{za}。",
	"这个{zn}我们下次{zn}再{zv}吧。",
	"谢谢！{zn}已经{zv}好了。",
}
