package engine

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/lazymem/lazymem/index"
)

// The question's subject: when a question names two speakers or more and
// is not about them together, the one named first is asked about and the
// others are what it speaks of ("what did Jon say about Gina's store?",
// "What is Nate's favorite video game?" asked of Joanna and Nate alike).
// The speaker boost then goes to the subject's records only: the others'
// are scored as records of a speaker not named. In LoCoMo, 76 questions
// name both speakers of a conversation and 77% of their evidence is the
// first-named speaker's. Measured (lazy, hash; LoCoMo R@1/5/10/25): the
// boost to every named speaker .446/.689/.745/.797; the others' records
// x0.8 .446/.692/.747/.797, x0.7 .447/.690/.747/.798, no boost for them
// (x0.5) .447/.693/.748/.797 (halves 26/41/43 R@10 .774 -> .773,
// 30/42/44 .710 -> .717). The Chinese set and the scenarios are unchanged.

// jointWords mark a question about several speakers together ("what have
// Caroline and Melanie both painted?", "王芳和李雷一起…"): no subject.
var jointWords = []string{" and ", "&", " both ", " together", "each other", "和", "与", "跟", "同", "都", "一起"}

// findSubject sets p.others when the question names two speakers or more
// and is not about them together: the records of every named speaker but
// the one named first. spelled holds how the question writes a role it
// names in pinyin.
func (p *plan) findSubject(asked string, named []string, spelled map[string]string) error {
	p.others = nil
	if len(named) < 2 {
		return nil
	}
	text := " " + strings.ToLower(asked) + " "
	for _, w := range jointWords {
		if strings.Contains(text, w) {
			return nil
		}
	}
	first, at := "", len(text)
	for _, n := range named {
		if i := indexWord(text, strings.ToLower(cmp.Or(spelled[n], n))); i >= 0 && i < at {
			first, at = n, i
		}
	}
	if first == "" {
		return nil
	}
	var roles []string
	for _, n := range named {
		if n != first {
			roles = append(roles, n)
		}
	}
	bm, err := p.db.idx.Filter(&index.Filter{Agents: p.filter.Agents, Roles: roles})
	if err != nil {
		return fmt.Errorf("lazymem: engine: role filter: %w", err)
	}
	sub, err := p.db.idx.Filter(&index.Filter{Agents: p.filter.Agents, Roles: []string{first}})
	if err != nil {
		return fmt.Errorf("lazymem: engine: role filter: %w", err)
	}
	bm.AndNot(sub)
	p.others, p.subjectName = bm, first
	return nil
}

// subject takes the speaker boost back from the records of the speakers
// named after the subject.
func (p *plan) subject() {
	if p.others == nil || p.q.SpeakerBoost <= 1 {
		return
	}
	n := 0
	for i := range p.cands {
		c := &p.cands[i]
		if c.speaker && p.others.Contains(uint32(c.id)) {
			p.fused[i] /= float32(p.q.SpeakerBoost)
			c.speaker = false
			n++
		}
	}
	if n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("the question is about %s: %d records of the other speakers it names were not boosted", p.subjectName, n))
	}
}
