package consolidate

// Select builds the Input for a run of turns in speaking order (one
// session, or one meeting): every turn whose value (Options.Value) reaches
// Options.Threshold is selected, with up to Options.ContextTurns turns on
// each side as its context. Options must have their defaults
// (EnsureDefaults). It is the offline form of the value-threshold trigger;
// an engine that keeps scores with its records builds Input itself.
func (o *Options) Select(agent string, turns []Turn) Input {
	in := Input{Agent: agent}
	for i := range turns {
		if o.Value(turns[i].Text, turns[i].Role) < o.Threshold {
			continue
		}
		n := max(o.ContextTurns, 0)
		lo, hi := max(0, i-n), min(len(turns), i+1+n)
		in.Records = append(in.Records, Selected{
			Turn:   turns[i],
			Before: append([]Turn(nil), turns[lo:i]...),
			After:  append([]Turn(nil), turns[i+1:hi]...),
		})
	}
	return in
}
