package workload_test

import (
	"fmt"

	"github.com/lazymem/lazymem/bench/workload"
)

// A corpus, its planted-fact questions, and keyword queries for latency.
func Example() {
	cfg := workload.Config{Seed: 7, Records: 2000, Agents: 4, Sessions: 5}
	g := workload.New(cfg)
	var r workload.Record
	var texts []string
	for g.Next(&r) {
		texts = append(texts, r.Text)
	}
	seen := map[string]bool{}
	for _, q := range g.Queries(20) {
		if seen[q.Kind] {
			continue
		}
		seen[q.Kind] = true
		fmt.Printf("%s %s %q -> %v\n", q.Kind, q.Agent, q.Text, q.Relevant)
		fmt.Printf("  %q\n", texts[q.Relevant[0]])
	}
	kq := workload.KeywordQueries(cfg, 1, 7)[0]
	fmt.Printf("keyword %s %q %s..%s\n", kq.Agent, kq.Text, kq.Since.Format("Jan 2"), kq.Until.Format("Jan 2"))
	// Output:
	// planted agent-001 "What is the request timeout of session-api?" -> [50]
	//   "From now on session-api uses a request timeout of 31 seconds."
	// temporal agent-002 "What is the launch date of Onyx?" -> [937]
	//   "Perfect. The Onyx launch is scheduled for March 7."
	// paraphrase agent-003 "On what day should we bring cake for Tariq?" -> [1173]
	//   "The job here is so big this week. Reminder: Tariq has a birthday on February 5. The release from Prometheus looks broken, around 88 ms p99."
	// keyword agent-000 "question guess" Jan 26..Feb 2
}
