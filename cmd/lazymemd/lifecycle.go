package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// store is what a handler calls for one agent: the scoped handle of the
// agent for a tenant of some agents (no call through it reaches another
// agent), the whole store for an admin or a daemon without --keys.
type store interface {
	Append(ctx context.Context, r engine.Record) (uint64, error)
	AppendBatch(ctx context.Context, recs []engine.Record) ([]uint64, error)
	Recall(ctx context.Context, q engine.Query) (*engine.Result, error)
	Forget(ctx context.Context, sel engine.Selector) (engine.ForgetResult, error)
}

// handle is the store a request of tenant t acting as agent uses: the
// agent's scoped handle, carrying the key's quota.
func (s *server) handle(t *tenant, agent string) store {
	if t.all {
		return s.db
	}
	return s.db.Agent(agent, t.quota)
}

// forgetBody is the body of POST /v1/forget: what to forget, as
// engine.Selector in snake case.
type forgetBody struct {
	Agent    string              `json:"agent"`
	IDs      []uint64            `json:"ids"`
	Sessions []string            `json:"sessions"`
	Roles    []string            `json:"roles"`
	Where    map[string][]string `json:"where"`
	Since    *string             `json:"since"` // RFC 3339
	Until    *string             `json:"until"`
}

// forget forgets the records a selector names, within the tenant: a
// tenant of some agents names one of them (or has only one); ids of
// other agents are ignored, as ids never assigned are.
func (s *server) forget(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	var fb forgetBody
	if err := wire.DecodeStrict(body, &fb, "a selector"); err != nil {
		s.error(w, r, err, "selector") // "selector.ids: want ..."
		return
	}
	var window [2]time.Time
	for i, f := range []struct {
		name string
		in   *string
	}{{"since", fb.Since}, {"until", fb.Until}} {
		if f.in == nil {
			continue
		}
		tm, err := time.Parse(time.RFC3339Nano, *f.in)
		if err != nil {
			s.error(w, r, &wire.Error{Field: f.name, Msg: fmt.Sprintf("%q is not an RFC 3339 time (like 2026-05-01T14:03:00Z)", wire.Truncate(*f.in, 60))}, "selector")
			return
		}
		window[i] = tm
	}
	t := tenantOf(r)
	if !t.all {
		switch {
		case fb.Agent == "" && len(t.list) == 1:
			fb.Agent = t.list[0]
		case fb.Agent == "":
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "selector.agent",
				Message: fmt.Sprintf("selector.agent: name one of the key's agents (%s)", strings.Join(t.list, ", "))})
			return
		case !t.allows(fb.Agent):
			s.fail(w, r, http.StatusForbidden, forbiddenAgent(t, "selector.agent", fb.Agent))
			return
		}
	}
	sel := engine.Selector{Agent: fb.Agent, IDs: fb.IDs, Sessions: fb.Sessions, Roles: fb.Roles, Where: fb.Where}
	sel.Since, sel.Until = window[0], window[1]
	if s.cluster != nil {
		s.clusterForget(w, r, body, sel)
		return
	}
	res, err := s.handle(t, fb.Agent).Forget(r.Context(), sel)
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	ranges := make([][2]uint64, 0, len(res.Ranges))
	for _, rg := range res.Ranges {
		ranges = append(ranges, [2]uint64{rg.First, rg.Last})
	}
	s.reply(w, http.StatusOK, map[string]any{"forgotten": res.Forgotten, "ranges": ranges, "reindexed": res.Reindexed})
}

// export writes the live records of ?agent= as JSONL, the format of
// `lazymem ingest` (an admin may omit the agent: every agent).
func (s *server) export(w http.ResponseWriter, r *http.Request) {
	agent := r.URL.Query().Get("agent")
	t := tenantOf(r)
	switch {
	case agent == "" && !t.all && len(t.list) == 1:
		agent = t.list[0]
	case agent == "" && !t.all:
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "agent",
			Message: fmt.Sprintf("agent: name one of the key's agents (%s)", strings.Join(t.list, ", "))})
		return
	case agent != "" && !t.allows(agent):
		s.fail(w, r, http.StatusForbidden, forbiddenAgent(t, "agent", agent))
		return
	}
	if s.cluster != nil {
		s.clusterExport(w, r, agent) // cluster_export.go
		return
	}
	cw := &countingWriter{w: w, header: func() {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}}
	bw := bufio.NewWriterSize(cw, 64<<10)
	var err error
	if t.all {
		_, err = s.db.Export(r.Context(), agent, bw)
	} else {
		_, err = s.db.Agent(agent, engine.Quota{}).Export(r.Context(), bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case err != nil && cw.n == 0:
		s.error(w, r, err, "") // nothing sent yet: a proper error reply
	case err != nil:
		// Part of the stream is out with a 200: the client sees a short
		// stream (no final newline-terminated record count); logged.
		s.errLog.Error("export cut short", "id", requestID(r), "agent", agent, "err", err)
	case cw.n == 0:
		cw.header() // no records: an empty stream
		w.WriteHeader(http.StatusOK)
	}
}

// countingWriter sets the reply's headers before its first byte and
// counts the bytes sent.
type countingWriter struct {
	w      http.ResponseWriter
	header func()
	n      int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n == 0 && len(p) > 0 {
		c.header()
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// hideBM25 hides raw BM25 scores from a tenant's recall over several of
// its agents, as the engine's scoped handle does for one: document
// frequencies are computed over every tenant's records, so a raw score
// would let one tenant probe whether others use a word. Ranks stay.
func hideBM25(res *engine.Result) {
	for i := range res.Memories {
		m := &res.Memories[i]
		m.Score, m.Sparse = 0, 0
		for j, r := range m.Reasons {
			if strings.HasPrefix(r, "bm25 ") {
				if k := strings.Index(r, " ("); k > 0 {
					m.Reasons[j] = r[:k]
				}
			}
		}
	}
}

// backupBody is POST /v1/backup's body.
type backupBody struct {
	To string `json:"to"`
}

// backup writes an online, consistent copy of the whole store into a
// directory on the daemon's machine (admin only: it names a path of the
// server's filesystem). The directory must not exist or be empty;
// restoring is starting a daemon (or engine.Open) on it.
func (s *server) backup(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	var bb backupBody
	if err := wire.DecodeStrict(body, &bb, "a backup request"); err != nil {
		s.error(w, r, err, "backup")
		return
	}
	if bb.To == "" || !filepath.IsAbs(bb.To) {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "backup.to",
			Message: fmt.Sprintf("backup.to: want an absolute directory path on the server, got %q", wire.Truncate(bb.To, 80))})
		return
	}
	if s.cluster != nil {
		s.clusterBackup(w, r, filepath.Clean(bb.To)) // cluster_export.go
		return
	}
	t0 := time.Now()
	if err := s.db.Backup(r.Context(), filepath.Clean(bb.To)); err != nil {
		if errors.Is(err, engine.ErrExists) {
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "backup.to",
				Message: fmt.Sprintf("backup.to: %s exists and is not empty: name a new directory", filepath.Clean(bb.To))})
			return
		}
		s.error(w, r, err, "backup")
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"to": filepath.Clean(bb.To), "seconds": time.Since(t0).Seconds()})
}
