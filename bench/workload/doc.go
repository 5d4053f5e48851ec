// Package workload generates seeded, realistic agent histories for lazymem's
// tests and benchmarks, with queries whose relevant records are known by
// construction.
//
// A corpus is Config.Records records spread over Agents*Sessions sessions
// (default 100 agents x 50 sessions) and over [Start, Start+Span) (default
// 90 days from 2026-01-01). Sessions are bursts: log-normal sizes, 15 s to 4
// min between turns, turns alternating user / assistant with tool outputs
// after some assistant turns. Records come out in non-decreasing time order.
//
// Text is made from sentence templates (greetings, questions, requests,
// status updates, chit-chat, answers, plans, decisions, JSON-ish tool
// output, log lines, SQL) whose slots are filled from a hand-written English
// vocabulary drawn with Zipf-Mandelbrot laws (s = 1.1, q = 2.7), a long
// tail of 20,000 generated identifiers (HikariCP-like product names,
// snake_case names, config keys), fresh ids (sess_ab12, TKT-4821, v2.1.3),
// and each agent's own recurring people, services and projects (each
// session has a focus service and project). About 3% of the user and
// assistant turns are in Chinese. Metadata: tags, entities, intent,
// task_type. docs/benchmarks/workload.md has the measured length
// distribution, compression ratio and speed.
//
// Planted facts: a fraction of the records (FactRate, default 1%) states a
// unique fact about one of the agent's entities ("Alice's badge number is
// 7731", "we chose Postgres 16 as the database for billing-api"), and with
// probability EchoRate the next turn confirms it. The facts are planned in
// New, before any text exists: Queries turns them into questions (direct
// wording, paraphrases that avoid the fact's words, and time-windowed ones)
// whose Relevant ordinals are the stating and confirming records. No
// search system is involved in the labelling. Each (agent, fact family,
// subject) is planted at most once, and each fact family has a marker
// phrase that filler text never produces together with the subject and the
// value, so the labels are complete; the tests check both on generated
// corpora.
//
// Determinism: one math/rand/v2 PCG stream seeded from Config.Seed drives
// planning and text; Queries and KeywordQueries use their own streams, so
// asking for queries never changes the records.
package workload
