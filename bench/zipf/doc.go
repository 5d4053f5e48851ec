// Package zipf generates synthetic agent histories that nobody tuned the
// engine to: words drawn from a Zipf law over a numbered vocabulary, records
// of a random length, agents whose sessions interleave in time, and a share
// of agents writing Chinese-script text. Every parameter is a field of
// Config, every draw comes from Config.Seed, and the same Config always
// yields the same records and the same queries.
//
// The vocabulary is artificial on purpose: word r (rank r, 0 the most
// frequent) is a pronounceable letter string made only of the letters
// b d f g k l m n p r t v z and the vowels a i o u, so that no stop list and
// no English stemmer recognises it and both engines under comparison index
// the same terms. The CJK vocabulary maps rank r to two Han characters.
//
// Queries come in classes (Class) crossed with filters of every selectivity
// (FilterKind):
//
//	class   words  drawn from
//	mid     2-4    ranks [10, 3010), uniformly
//	rare    2-4    ranks [3010, 30000), uniformly
//	common  2-4    ranks [0, 100), uniformly
//	long    8-12   the corpus's own Zipf law (common and rare mixed)
//	cjk     2-4    CJK ranks [10, 3010), against a CJK-writing agent
//
//	filter   restriction
//	none     the whole corpus
//	agent    one agent
//	session  one session of one agent
//	window   a 7-day time window, every agent
package zipf
