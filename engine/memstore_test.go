package engine

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// memStore opens an in-memory store whose clock reads now and appends
// recs to it; the store closes with the test.
func memStore(t testing.TB, now time.Time, recs []Record) *DB {
	t.Helper()
	return memStoreWith(t, Options{Clock: func() time.Time { return now }}, recs)
}

// memStoreWith is memStore on opts (an in-memory filesystem and no disk
// cache set on them).
func memStoreWith(t testing.TB, opts Options, recs []Record) *DB {
	t.Helper()
	opts.FS, opts.DisableDiskCache = vfs.NewMem(), true
	db, err := Open("s", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return db
}

// turns returns a session's records, a minute apart from t0: each turn a
// role and a text.
func turns(agent, session string, t0 time.Time, rt ...[2]string) []Record {
	recs := make([]Record, len(rt))
	for i, x := range rt {
		recs[i] = Record{Agent: agent, Session: session, Role: x[0], Text: x[1], Time: t0.Add(time.Duration(i) * time.Minute)}
	}
	return recs
}

// topText returns the text of q's first memory, "" when there is none.
func topText(t testing.TB, db *DB, q Query) string {
	t.Helper()
	res, err := db.Recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 {
		return ""
	}
	return res.Memories[0].Text
}
