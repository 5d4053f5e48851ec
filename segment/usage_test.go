package segment

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// recountUsage returns the counts a count of every segment gives now, and
// leaves the log's counts as they were.
func recountUsage(t *testing.T, l *Log) ([]uint32, map[uint64]uint32) {
	t.Helper()
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	kept := l.use
	l.use = usage{}
	if err := l.countUsage(); err != nil {
		t.Fatal(err)
	}
	words, names := l.use.words, l.use.names
	l.use = kept
	return words, names
}

// sameWords compares two word counts, a missing id counting zero.
func sameWords(a, b []uint32) error {
	for id := range max(len(a), len(b)) {
		var x, y uint32
		if id < len(a) {
			x = a[id]
		}
		if id < len(b) {
			y = b[id]
		}
		if x != y {
			return fmt.Errorf("word %d: kept count %d, recount %d", id, x, y)
		}
	}
	return nil
}

// TestUsageCounts: the word and name counts Compact keeps from one
// compaction to the next (rewrites, drops, seals in between) equal a count
// of every segment after each compaction, and a word or a name only
// forgotten records used leaves the vocabulary and the name table at the
// compaction that rewrites their segments, the second, third and fourth
// of the process as at the first; a word or name a live record shares
// stays.
func TestUsageCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	secretWords := map[uint64][]string{} // id -> the words only it uses
	secretNames := map[uint64]string{}   // id -> the session only it uses
	var recs [][]byte
	record := func(round, i int) []byte {
		id := uint64(len(recs) + 1)
		if i%40 != 17 {
			return chatRecord(r, 5+r.IntN(25))
		}
		var toks []string
		for k := range 4 {
			toks = append(toks, fmt.Sprintf("usagesecret%dx%04dz%d", round, i, k))
		}
		secretWords[id] = toks
		secretNames[id] = fmt.Sprintf("usagesession-%d-%04dq", round, i)
		text := strings.Join(toks, " ") + " sharedusageword. " + strings.Join(toks, " ") + " sharedusageword"
		return codec.AppendRecord(nil, &codec.Record{Time: 1e18 + int64(id), Agent: "agent-1",
			Session: secretNames[id], Role: "user", Text: text})
	}
	for i := range 8000 {
		recs = append(recs, record(0, i))
	}
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true, ReserveBytes: -1}
	l := framedLog(t, fs, opts, recs, nil)
	defer l.Close()
	forgotten := map[uint64]bool{}
	check := func(step string) {
		t.Helper()
		if !l.use.ok {
			t.Fatalf("%s: the counts do not hold after a Compact", step)
		}
		// The segments sealed since the last count join the counts (a
		// Compact that forgets nothing does not count them).
		l.sealMu.Lock()
		err := l.countUsage()
		l.sealMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		words, names := recountUsage(t, l)
		if err := sameWords(l.use.words, words); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !maps.Equal(l.use.names, names) {
			t.Fatalf("%s: name counts kept %d, recount %d", step, len(l.use.names), len(names))
		}
		for id, toks := range secretWords {
			for _, w := range toks {
				if forgotten[id] && l.words.ids.has([]byte(w)) {
					t.Fatalf("%s: forgotten record %d's word %s is in the vocabulary", step, id, w)
				}
			}
			if _, ok := l.names.ids[secretNames[id]]; ok == forgotten[id] {
				t.Fatalf("%s: record %d (forgotten %v): session name in the table %v", step, id, forgotten[id], !forgotten[id])
			}
		}
		if !l.words.ids.has([]byte("sharedusageword")) {
			t.Fatalf("%s: a word live records use left the vocabulary", step)
		}
	}
	ids := slices.Sorted(maps.Keys(secretWords))
	inVocab := 0 // words of records forgotten in the vocabulary before the Compact
	for round := 1; round <= 4; round++ {
		// Forget a third of the secret records not yet forgotten.
		var del []uint64
		for _, id := range ids {
			if !forgotten[id] && r.IntN(3) == 0 {
				del = append(del, id)
			}
		}
		if len(del) == 0 {
			t.Fatalf("round %d: nothing to forget", round)
		}
		for _, id := range del {
			for _, w := range secretWords[id] {
				if l.words.ids.has([]byte(w)) {
					inVocab++
				}
			}
		}
		if err := l.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
		for _, id := range del {
			forgotten[id] = true
		}
		if round == 3 {
			// As after a Repair: the next Compact counts every segment
			// again, from nothing.
			l.sealMu.Lock()
			l.use.ok = false
			l.sealMu.Unlock()
		}
		if err := l.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round %d compact", round))
		// New segments, counted by the next Compact only.
		var more [][]byte
		for i := range 600 {
			p := record(round, i)
			recs = append(recs, p)
			more = append(more, p)
		}
		if _, err := l.AppendBatch(ctx, more); err != nil {
			t.Fatal(err)
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		ids = slices.Sorted(maps.Keys(secretWords))
		if round == 2 {
			// Retention: the oldest segments leave; their records' words
			// and names leave at the next Compact.
			l.segMu.RLock()
			cut := l.segs[3].first
			l.segMu.RUnlock()
			if _, err := l.DropBefore(ctx, cut); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if id < cut {
					forgotten[id] = true
				}
			}
		}
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("last compact")
	if inVocab < 50 {
		t.Fatalf("%d words of forgotten records were in the vocabulary before their Compact: the test proves little", inVocab)
	}
	t.Logf("%d words of forgotten records left the vocabulary", inVocab)
	// And from every file: the forgotten sessions' names, not a live one's.
	if err := l.WaitPurged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var gone, live []string
	for id, nm := range secretNames {
		if forgotten[id] {
			gone = append(gone, nm)
		} else if len(live) < 3 {
			live = append(live, nm)
		}
	}
	found := storeHolds(t, fs, append(gone, live...)...)
	for _, nm := range gone {
		if found[nm] {
			t.Errorf("a file still holds forgotten session %s", nm)
			for f, b := range storeFiles(t, fs, nil) {
				if i := bytes.Index(b, []byte(nm)); i >= 0 {
					t.Logf("%s at %d of %d: %q", f, i, len(b), b[max(0, i-80):min(len(b), i+80)])
				}
			}
		}
	}
	for _, nm := range live {
		if !found[nm] {
			t.Errorf("no file holds live session %s: the scan sees nothing", nm)
		}
	}
}

// TestUsageDamaged: a segment whose value cannot be walked leaves the
// counts unknown; Compact then keeps every name and word (its records
// may still read) instead of failing or dropping what the damaged
// segment uses, and once Repair has replaced it, the next Compact counts
// every segment again and drops the names only its lost records used.
func TestUsageDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var recs [][]byte
	session := map[uint64]string{}
	for i := range 3000 {
		id := uint64(i + 1)
		if i%50 != 25 {
			recs = append(recs, chatRecord(r, 5+r.IntN(25)))
			continue
		}
		session[id] = fmt.Sprintf("damagedsession-%04dq", i)
		recs = append(recs, codec.AppendRecord(nil, &codec.Record{Time: 1e18 + int64(id), Agent: "agent-1",
			Session: session[id], Role: "user", Text: fmt.Sprintf("note %d", i)}))
	}
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true, ReserveBytes: -1}
	l := framedLog(t, fs, opts, recs, nil)
	defer l.Close()
	hasName := func(s string) bool {
		l.names.mu.RLock()
		defer l.names.mu.RUnlock()
		_, ok := l.names.ids[s]
		return ok
	}
	// The victim: the segment holding record 1026; another record,
	// 2026, is forgotten.
	const victimRec, forgottenRec = 1026, 2026
	l.segMu.RLock()
	victim := *findSeg(l.segs, victimRec)
	l.segMu.RUnlock()
	if forgottenRec >= victim.first && forgottenRec < victim.end() {
		t.Fatalf("victim segment %d-%d holds the forgotten record", victim.first, victim.end())
	}
	key := makeKey(prefixSegment, victim.first)
	v, closer, err := l.db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(v)
	closer.Close()
	f, err := parseFramed(victim.first, bad)
	if err != nil || !f.names {
		t.Fatalf("the victim is not a framed value with names: %v", err)
	}
	bad[f.head.off+f.head.stored/2] ^= 0x5a // its head: which names it uses is unknown
	if err := l.db.Set(key, bad, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, []uint64{forgottenRec}); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatalf("a damaged segment failed Compact: %v", err)
	}
	if !hasName(session[victimRec]) || !hasName(session[forgottenRec]) {
		t.Fatal("Compact dropped names although a segment could not be walked")
	}
	ce := &CorruptionError{}
	if err := l.Verify(ctx); !errors.As(err, &ce) || ce.Segment != victim.first {
		t.Fatalf("verify: %v", err)
	}
	if _, err := l.Repair(ctx, ce); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if hasName(session[forgottenRec]) {
		t.Fatal("after the repair, the forgotten record's session is still in the name table")
	}
	if _, err := l.Get(victimRec, nil); err == nil {
		t.Fatal("the damaged segment's record still reads after the repair")
	}
	if hasName(session[victimRec]) {
		t.Fatal("after the repair, the lost record's session is still in the name table")
	}
	if !hasName(session[26]) {
		t.Fatal("a live record's session left the table")
	}
	if !l.use.ok {
		t.Fatal("the counts do not hold after the compaction that followed the repair")
	}
}
