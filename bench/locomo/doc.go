// Package locomo loads the LoCoMo long-term conversational memory benchmark
// (Maharana et al., 2024) in its original JSON format.
//
// A conversation file ("26.json") is one JSON object:
//
//	{
//	  "speaker_a": "Caroline", "speaker_b": "Melanie",
//	  "session_1_date_time": "1:56 pm on 8 May, 2023",
//	  "session_1": [ {"speaker", "dia_id": "D1:3", "text",
//	                  optional "img_url": [..], "blip_caption", "query"}, ... ],
//	  "session_2_date_time": ..., "session_2": [...], ...
//	  "qa": [ {"question", "answer" (string, number or absent),
//	           "adversarial_answer" (category 5), "evidence": ["D1:3", ...],
//	           "category": 1..5}, ... ],
//	  "events_session_N", "session_N_observation", "session_N_summary": ignored
//	}
//
// The loader also accepts the combined release file (a JSON array of
// {"sample_id", "conversation": {...}, "qa": [...]}) and a single object of
// that shape, so any directory of LoCoMo-format files loads.
//
// Cleaning, applied once here so every consumer sees the same data:
// sessions are ordered by number and those without turns are dropped (some
// files list a date for sessions that have no turns); evidence entries are
// split on ';' and ',' ("D8:6; D9:17" holds two ids), trimmed, and ids that
// match no turn of the conversation are dropped and kept in QA.Dropped.
// Answers that are numbers become their decimal text. Times are parsed as
// UTC wall-clock time ("1:56 pm on 8 May, 2023" => 2023-05-08T13:56:00Z);
// a date that does not parse is an error naming the field and the value.
//
// Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
// adversarial (no answer exists; leave out of recall).
package locomo
