// Package eval runs the LoCoMo evidence-recall evaluation of lazymem (issue 5
// acceptance 5, issue 6 `lazymem eval locomo`).
//
// Run loads every LoCoMo-format conversation of Config.DataDir (package
// bench/locomo), and for each mode of Config.Modes opens a fresh store in a
// temporary directory, ingests every conversation into its own agent scope
//
//	agent   = the conversation id (sample_id, or the file name without .json)
//	session = "session_N"
//	role    = the turn's speaker
//	time    = the session's date_time (UTC wall clock)
//	meta    = {"dia_id": ["D3:7"]}
//	text    = the turn's text, then " [shares an image: CAPTION]" when the
//	          turn shares an image (LoCoMo's blip_caption)
//
// then asks every question of the evaluated categories (default 1-4;
// category 5 is adversarial and has no evidence) against its own
// conversation only, with K = max(Config.Ks). Evidence recall@k of a question
// is the fraction of its distinct evidence turns (dia_ids that match a turn)
// found among the top k memories; Report averages it over questions, overall
// and per category. A question whose evidence matches no turn is not counted.
//
// The caption is what a memory of a multimodal chat would keep of the
// image; it is for the sparse stage only: the engine embeds each turn
// without it ("Role: Text" of the turn's own text, pleasantries stripped as
// for any record), so the dense view is the same with or without captions.
// Config.NoCaptions (--no-captions) stores the text alone, the protocol
// before 2026-12-03.
//
// The engine embeds the constructed memory text, by default "Role: Text"
// ("Caroline: I went to ..."), so the replay embedder serves the
// N.speaker_turns.fvecs vectors for turns and N.questions.fvecs for the
// questions; N.turns.fvecs (bare text) is loaded too, for a Construct that
// returns the bare text.
//
// The JSON of one run is exactly
//
//	{"questions": N, "recall": {"1": r, "5": r, "10": r, "25": r},
//	 "by_category": {"1": {"name": "multi-hop", "questions": n, "recall": {...}}, ...},
//	 "embedded": E, "turns": T}
//
// where E is the number of texts the runs' recalls embedded (cache misses,
// questions included; ingest embeds nothing) and T the turns stored. The mode
// and embedder of a run are in RunReport.Mode and RunReport.Embedder, not in
// its JSON.
package eval
