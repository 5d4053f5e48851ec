package main

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// Export and backup in cluster mode (docs/CLUSTER.md, "Export and
// backup"): each reads partition stores, so an export is answered by the
// owner of one partition (forwarded there like a recall) and a backup
// copies the partitions the node it is sent to owns.

// clusterExport answers GET /v1/export from the owner of the agent's
// partition (agent checked against the tenant already): the agent's
// records, or with ?partition=N and a key of every agent, every record
// of partition N. The records' public ids are not written (an export
// ingests into a store that assigns its own).
func (s *server) clusterExport(w http.ResponseWriter, r *http.Request, agent string) {
	p := -1
	if agent != "" {
		p = s.cluster.Partition(agent)
	}
	if v := r.URL.Query().Get("partition"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 0 || n >= s.cluster.Partitions():
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "partition",
				Message: fmt.Sprintf("partition: %q: want 0..%d", wire.Truncate(v, 40), s.cluster.Partitions()-1)})
			return
		case p >= 0 && n != p:
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "partition",
				Message: fmt.Sprintf("partition: the agent %q is in partition %d, not %d", agent, p, n)})
			return
		}
		p = n
	}
	if p < 0 {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "agent",
			Message: fmt.Sprintf("agent: name the agent, or ?partition= (0..%d) for every agent of one partition: in cluster mode an export reads one partition's store", s.cluster.Partitions()-1)})
		return
	}
	l := s.owned(w, r, p, nil)
	if l == nil {
		return
	}
	defer l.Release()
	cw := &countingWriter{w: w, header: func() {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}}
	bw := bufio.NewWriterSize(cw, 64<<10)
	_, err := l.DB().ExportOmitting(r.Context(), agent, cluster.MetaID, bw)
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case err != nil && cw.n == 0:
		s.clusterError(w, r, err, "")
	case err != nil:
		s.errLog.Error("export cut short", "id", requestID(r), "agent", agent, "partition", p, "err", err)
	case cw.n == 0:
		cw.header()
		w.WriteHeader(http.StatusOK)
	}
}

// clusterBackup answers POST /v1/backup in cluster mode: a copy of each
// partition this node owns, to <to>/p<N> on this node's machine (the
// store with its index, the id map and the sequence applied).
func (s *server) clusterBackup(w http.ResponseWriter, r *http.Request, to string) {
	t0 := time.Now()
	seqs, err := s.cluster.Backup(r.Context(), to)
	if errors.Is(err, engine.ErrExists) {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "backup.to",
			Message: fmt.Sprintf("backup.to: %s holds a partition's copy already: name a new directory", to)})
		return
	}
	if err != nil {
		s.clusterError(w, r, err, "backup")
		return
	}
	parts := map[string]uint64{}
	for p, seq := range seqs {
		parts[strconv.Itoa(p)] = seq
	}
	s.reply(w, http.StatusOK, map[string]any{"to": to, "node": s.cluster.ID(), "partitions": parts, "seconds": time.Since(t0).Seconds()})
}
