package cluster

import (
	"archive/tar"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Snapshots bound a partition's replay (docs/CLUSTER.md, "Snapshots").
// The owner of a partition uploads, every SnapshotEvery messages or
// SnapshotInterval, a copy of its store (engine BackupIndexed, the id
// map and the applied sequence) to the stream <Stream>-snapshots,
// incrementally (snapfiles.go: the pieces of its files that the kept
// snapshots lack, and a manifest on a subject of its own); it keeps the newest SnapshotKeep and purges the
// stream of the partition's messages at and below the oldest one kept,
// after raising the partition's purge floor to it (floor.go).
// A node opening a partition whose copy is missing or older than the
// oldest snapshot kept or the purge floor (the stream no longer holds
// what the copy lacks) restores the newest snapshot and replays the
// stream from its sequence.
//
// A forget reaches a snapshot through the stream: a restore replays
// every forget after the snapshot's sequence (the purge never passes
// the oldest snapshot kept). Its bytes leave the snapshots too: a
// forget applied makes a new snapshot due, taken after a Compact of the
// store, and every older snapshot is then erased (its manifest and the
// pieces no kept snapshot references securely deleted from the
// snapshots stream). (JetStream's object store is not
// used: each Put starts a goroutine that leaks when the Put's cleanup
// wins a race with it, in nats.go v1.55.)

// The snapshots stream holds each snapshot on its own subject,
// <prefix>-snapshots.p<p>.<seq>: chunks of its manifest (or, before
// incremental snapshots, of a tar of the copy), then an end message (no
// body) whose endHeader gives the chunks' count, the size and the
// SHA-256 of the whole, and formatHeader the format. A subject without its end message is an upload
// cut short: never restored, erased by the next prune.
const (
	endHeader = "Lazymem-Snapshot-End"
	chunkSize = 512 << 10
)

// snapshotInfo is a complete snapshot in the snapshots stream.
type snapshotInfo struct {
	subject string
	seq     uint64
	files   bool // a manifest (snapfiles.go), not a tar
}

// snapStream is the snapshots stream's name.
func (n *Node) snapStream() string { return n.opts.Stream + "-snapshots" }

// snapPrefix is partition p's snapshots' subject prefix.
func (n *Node) snapPrefix(p int) string { return fmt.Sprintf("%s-snapshots.p%d.", n.prefix(), p) }

// snapshots lists partition p's complete snapshots, oldest first, and
// the subjects of its incomplete ones.
func (n *Node) snapshots(ctx context.Context, p int) (complete []snapshotInfo, partial []snapshotInfo, err error) {
	prefix := n.snapPrefix(p)
	info, err := n.snaps.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	if err != nil {
		return nil, nil, fmt.Errorf("lazymem: cluster: list snapshots: %w", err)
	}
	for subj := range info.State.Subjects {
		seq, err := strconv.ParseUint(strings.TrimPrefix(subj, prefix), 10, 64)
		if err != nil {
			continue
		}
		s := snapshotInfo{subject: subj, seq: seq}
		m, err := n.snaps.GetLastMsgForSubject(ctx, subj)
		switch {
		case err == nil && m.Header.Get(endHeader) != "":
			s.files = m.Header.Get(formatHeader) == formatFiles
			complete = append(complete, s)
		case err == nil || errors.Is(err, jetstream.ErrMsgNotFound):
			partial = append(partial, s)
		default:
			return nil, nil, fmt.Errorf("lazymem: cluster: list snapshots: %w", err)
		}
	}
	bySeq := func(a, b snapshotInfo) int { return cmp.Compare(a.seq, b.seq) }
	slices.SortFunc(complete, bySeq)
	slices.SortFunc(partial, bySeq)
	return complete, partial, nil
}

// upload publishes r on subject, one chunk a message, then its end
// message, which names the format ("": a tar; formatFiles: a manifest).
func (n *Node) upload(ctx context.Context, subject string, r io.Reader, format string) error {
	h := sha256.New()
	buf := make([]byte, chunkSize)
	var size, chunks uint64
	for {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			if _, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: buf[:k]}); err != nil {
				return err
			}
			h.Write(buf[:k])
			size += uint64(k)
			chunks++
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	end := fmt.Sprintf("%d %d %x", chunks, size, h.Sum(nil))
	hdr := nats.Header{endHeader: []string{end}}
	if format != "" {
		hdr.Set(formatHeader, format)
	}
	_, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: hdr})
	return err
}

// download writes the snapshot on subject to w, and fails unless it is
// whole: its chunks in order, their count, size and digest those of its
// end message.
func (n *Node) download(ctx context.Context, subject string, w io.Writer) error {
	cons, err := n.snaps.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: subject, AckPolicy: jetstream.AckNonePolicy,
		MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute})
	if err != nil {
		return err
	}
	defer n.dropConsumer(n.snaps, cons)
	h := sha256.New()
	var size, chunks, delivered uint64
	for ctx.Err() == nil {
		batch, err := cons.Fetch(64, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			if md.Sequence.Consumer != delivered+1 {
				return fmt.Errorf("snapshot %s: delivery gap at %d", subject, md.Sequence.Consumer)
			}
			delivered++
			if end := m.Headers().Get(endHeader); end != "" {
				if want := fmt.Sprintf("%d %d %x", chunks, size, h.Sum(nil)); end != want {
					return fmt.Errorf("snapshot %s: read %s, its end message says %s", subject, want, end)
				}
				return nil
			}
			if _, err := w.Write(m.Data()); err != nil {
				return err
			}
			h.Write(m.Data())
			size += uint64(len(m.Data()))
			chunks++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if got == 0 {
			return fmt.Errorf("snapshot %s: no end message after %d chunks", subject, chunks)
		}
	}
	return ctx.Err()
}

// dropConsumer deletes an ephemeral consumer (else it expires).
func (n *Node) dropConsumer(s jetstream.Stream, c jetstream.Consumer) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = s.DeleteConsumer(ctx, c.CachedInfo().Name)
	cancel()
}

// snapshotDue reports whether the partition should take a snapshot now.
func (pt *partition) snapshotDue() bool {
	o := &pt.n.opts
	if !o.snapshots() {
		return false
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.snapping || pt.applied <= pt.snapSeq {
		return false
	}
	return pt.forgotSinceSnap || pt.sweptSinceSnap ||
		o.SnapshotEvery > 0 && pt.sinceSnap >= uint64(o.SnapshotEvery) ||
		o.SnapshotInterval > 0 && time.Since(pt.snapAt) >= o.SnapshotInterval
}

// startSnapshot takes a snapshot in the background when one is due.
func (pt *partition) startSnapshot(ctx context.Context) {
	if !pt.snapshotDue() {
		return
	}
	pt.mu.Lock()
	pt.snapping = true
	pt.forgotSinceSnap, pt.sweptSinceSnap = false, false
	pt.mu.Unlock()
	pt.snapWG.Add(1)
	go func() {
		defer pt.snapWG.Done()
		_, err := pt.snapshot(ctx)
		pt.mu.Lock()
		pt.snapping = false
		if err != nil {
			pt.snapAt = time.Now() // retried after an interval, not at once
		}
		pt.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			pt.n.opts.Logger.Warn("cluster: snapshot", "partition", pt.p, "err", err)
		}
	}()
}

// snapshot uploads a snapshot of the partition's store at the sequence
// applied now, erases the snapshots it makes unnecessary and purges the
// stream below the oldest one kept. It returns the snapshot's sequence.
func (pt *partition) snapshot(ctx context.Context) (uint64, error) {
	// Forgotten or expired records leave the store's files at a Compact:
	// one runs first when any may be in them (appends go on meanwhile).
	m := pt.db.Metrics()
	pt.mu.Lock()
	compact := pt.forgetSeq > pt.compactedSeq || m.Retention.Expired > pt.compactedExpired
	from := pt.applied
	pt.mu.Unlock()
	if compact {
		if err := pt.db.Compact(ctx); err != nil {
			return 0, err
		}
		pt.mu.Lock()
		pt.compactedSeq, pt.compactedExpired = from, m.Retention.Expired
		pt.mu.Unlock()
	}
	tmp, err := os.MkdirTemp(pt.n.opts.Dir, fmt.Sprintf(".snapshot-p%d-", pt.p))
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	dst := filepath.Join(tmp, "store")
	tb := time.Now()
	seq, err := pt.copyTo(ctx, dst, true)
	if err != nil {
		return 0, fmt.Errorf("lazymem: cluster: snapshot partition %d: %w", pt.p, err)
	}
	subject := pt.n.snapPrefix(pt.p) + strconv.FormatUint(seq, 10)
	t0 := time.Now()
	var st uploadStats
	if pt.n.opts.snapshotWhole {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(tarDir(dst, pw)) }()
		cr := &countReader{r: pr}
		err = pt.n.upload(ctx, subject, cr, "")
		pr.CloseWithError(err) // ends the tar writer if the upload stopped early
		st.Uploaded = cr.n
	} else {
		var kept []snapshotInfo
		if kept, _, err = pt.n.snapshots(ctx, pt.p); err == nil {
			st, err = pt.n.uploadFiles(ctx, pt.p, seq, subject, dst, pt.n.knownPieces(ctx, kept))
		}
	}
	if err != nil {
		// The partial upload goes now if it can (the partition may be
		// closing: ctx is done); else the next prune erases it.
		ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = pt.n.eraseSnapshot(ectx, subject)
		cancel()
		return 0, fmt.Errorf("lazymem: cluster: upload snapshot of partition %d: %w", pt.p, err)
	}
	took := time.Since(t0)
	pt.mu.Lock()
	pt.snapSeq, pt.snapAt = seq, time.Now()
	pt.lastUpload = st
	pt.snapshots++
	keepFrom := max(pt.forgetSeq, pt.sweepSeq)
	pt.mu.Unlock()
	tp := time.Now()
	// A prune that fails (a JetStream request finding no responder for a
	// moment, a leader election) is tried again here: the next snapshot
	// is due only once more messages are applied, and a quiet partition
	// would keep its stream unpurged, and the older snapshots (those of a
	// forget's records too), until then. Not when the lease is not fresh:
	// the purge is then the next owner's.
	for try := 1; ; try++ {
		err = pt.n.prune(ctx, pt.p, seq, keepFrom)
		if err == nil || errors.Is(err, ErrNotOwner) || try == 5 {
			break
		}
		pt.n.opts.Logger.Warn("cluster: prune; trying again", "partition", pt.p, "seq", seq, "err", err)
		select {
		case <-ctx.Done():
			return seq, err
		case <-time.After(time.Second):
		}
	}
	pt.n.opts.Logger.Info("cluster: snapshot uploaded", "partition", pt.p, "seq", seq, "uploaded", st.Uploaded,
		"reused", st.Reused, "manifest", st.Manifest, "backup", t0.Sub(tb).Round(time.Millisecond),
		"upload", took.Round(time.Millisecond), "prune", time.Since(tp).Round(time.Millisecond))
	return seq, err
}

// copyTo writes a copy of the partition's store to dst (new or empty):
// the engine's backup with the index (BackupIndexed: a restore loads the
// index instead of rebuilding it), the id map and the sequence applied.
// The apply loop waits meanwhile, so the copy holds exactly what was
// applied through the sequence it returns (a backup is checkpoints and
// hard links, not a copy of the bytes). snap: the copy is the next
// snapshot (the count of messages since the last one restarts).
func (pt *partition) copyTo(ctx context.Context, dst string, snap bool) (uint64, error) {
	pt.storeMu.RLock()
	defer pt.storeMu.RUnlock()
	if pt.db == nil {
		return 0, fmt.Errorf("%w: partition %d was closed", ErrNotOwner, pt.p)
	}
	backup := pt.db.BackupIndexed
	if pt.n.opts.snapshotNoIndex {
		backup = pt.db.Backup
	}
	pt.applyMu.Lock()
	pt.mu.Lock()
	seq := pt.applied
	if snap {
		pt.sinceSnap = 0
	}
	pt.mu.Unlock()
	err := backup(ctx, dst)
	var ids []byte
	if err == nil {
		ids, err = os.ReadFile(filepath.Join(pt.dir, idsFile))
	}
	pt.applyMu.Unlock()
	if err != nil {
		return 0, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seq)
	if err := errors.Join(os.WriteFile(filepath.Join(dst, idsFile), ids, 0o644),
		os.WriteFile(filepath.Join(dst, appliedFile), b[:], 0o644)); err != nil {
		return 0, err
	}
	return seq, nil
}

// prune erases partition p's snapshots older than newest that are past
// SnapshotKeep or older than keepFrom (the last forget applied: they
// may hold its records; or the last purge message, whose snapshot
// purges the stream through it), and the uploads cut short, then purges
// the stream of p's messages at and below the oldest snapshot kept.
func (n *Node) prune(ctx context.Context, p int, newest, keepFrom uint64) error {
	snaps, partial, err := n.snapshots(ctx, p)
	if err != nil {
		return err
	}
	kept := 0
	floor := newest
	var drop, keep []snapshotInfo
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		switch {
		case s.seq > newest:
			// Another owner's, newer: left to it (and its pieces).
			keep = append(keep, s)
		case s.seq == newest || kept < n.opts.SnapshotKeep && s.seq >= keepFrom:
			kept++
			floor = min(floor, s.seq)
			keep = append(keep, s)
		default:
			drop = append(drop, s)
		}
	}
	for _, s := range partial {
		if s.seq < newest { // a newer one may be an upload in progress
			drop = append(drop, s)
		}
	}
	for _, s := range drop {
		if err := n.eraseSnapshot(ctx, s.subject); err != nil {
			return err
		}
	}
	if err := n.prunePieces(ctx, p, newest, keep); err != nil {
		return err
	}
	return n.purge(ctx, p, floor)
}

// purge purges the stream of partition p's messages at and below floor
// (a snapshot's sequence), when this node holds p's lease. Only the
// lease holder purges: a node that lost the lease while paused could
// purge what the new owner has yet to apply. The lease must have been
// refreshed less than 3/4 of its TTL ago (leaseFresh: no other node can
// hold it before the purge is sent; waited for up to a TTL), and the
// purge floor is raised before the purge (floor.go): a node opening the
// partition, or a consumer starting, reads it and restores a snapshot
// rather than resume past what the purge removed. (The lease used to
// be read once, from any replica, and the purge sent whenever: a
// purge that crossed a take-over could remove what the new owner,
// resuming its own older copy, had yet to apply.)
func (n *Node) purge(ctx context.Context, p int, floor uint64) error {
	if !n.waitLeaseFresh(ctx, p) {
		return fmt.Errorf("%w: partition %d: the stream is not purged below the snapshot", ErrNotOwner, p)
	}
	if err := n.raiseFloor(ctx, p, floor); err != nil {
		return err
	}
	left, ok := n.leaseFresh(p)
	if !ok {
		return fmt.Errorf("%w: partition %d: the lease aged while the purge floor was raised; not purged", ErrNotOwner, p)
	}
	pctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	if err := n.stream.Purge(pctx, jetstream.WithPurgeSubject(n.subject(p)), jetstream.WithPurgeSequence(floor+1)); err != nil {
		return fmt.Errorf("lazymem: cluster: purge partition %d below %d: %w", p, floor+1, err)
	}
	return nil
}

// waitLeaseFresh waits up to a lease TTL for leaseFresh(p) (the lease
// loop refreshes every quarter of it), and reports it.
func (n *Node) waitLeaseFresh(ctx context.Context, p int) bool {
	deadline := time.Now().Add(n.opts.LeaseTTL)
	for {
		if _, ok := n.leaseFresh(p); ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(n.opts.LeaseTTL / 20):
		}
	}
}

// eraseSnapshot removes the snapshot on subject: its end message first
// (no restore starts from it), then each chunk with a secure delete, so
// that the records it held leave the files of the snapshots stream as a
// forget's message leaves the stream's. (An incremental snapshot's
// pieces on its data subject go at the prune after, unless a kept
// snapshot references them.)
func (n *Node) eraseSnapshot(ctx context.Context, subject string) error {
	return n.erase(ctx, subject, func(uint64) bool { return false })
}

// erase securely deletes the messages on subject but those keep names,
// the last one first. A fetch that brings nothing within its wait ends
// the listing only when a message get (answered by the stream's
// leader) finds no message on subject after the last one listed: on a
// loaded server the first fetch of a new consumer can bring nothing,
// and the listing used to end there, erasing nothing.
func (n *Node) erase(ctx context.Context, subject string, keep func(seq uint64) bool) error {
	cons, err := n.snaps.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: subject, HeadersOnly: true,
		AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute})
	if err != nil {
		return err
	}
	defer n.dropConsumer(n.snaps, cons)
	var seqs []uint64
	for empty := 0; ; {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			return err
		}
		got, pending := 0, uint64(1)
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			seqs = append(seqs, md.Sequence.Stream)
			got++
			pending = md.NumPending
		}
		if got > 0 && pending == 0 {
			break // the last message seen: no empty fetch waited for
		}
		if got > 0 {
			continue
		}
		after := uint64(1)
		if len(seqs) > 0 {
			after = seqs[len(seqs)-1] + 1
		}
		if _, err := n.snaps.GetMsg(ctx, after, jetstream.WithGetMsgSubject(subject)); errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		} else if err != nil {
			return fmt.Errorf("lazymem: cluster: list %s to erase it: %w", subject, err)
		}
		if empty++; empty == 20 {
			return fmt.Errorf("lazymem: cluster: list %s to erase it: the consumer delivers nothing", subject)
		}
	}
	slices.Reverse(seqs) // the end message first
	for _, seq := range seqs {
		if keep(seq) {
			continue
		}
		if err := n.snaps.SecureDeleteMsg(ctx, seq); err != nil && !msgGone(err) {
			return fmt.Errorf("lazymem: cluster: erase snapshot %s: %w", subject, err)
		}
	}
	return nil
}

// restore replaces the partition's directory with the newest snapshot
// that downloads whole, and returns its sequence. A snapshot below the
// purge floor is never restored: the stream no longer holds the
// messages after it (an error, and the open is tried again, rather than
// a copy served with a hole).
func (pt *partition) restore(ctx context.Context, snaps []snapshotInfo, floor uint64) (uint64, error) {
	var errs []error
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		if s.seq < floor {
			errs = append(errs, fmt.Errorf("%s: below the purge floor %d: %w", s.subject, floor, errGap))
			break
		}
		tmp := filepath.Join(pt.n.opts.Dir, fmt.Sprintf(".restore-p%d", pt.p))
		if err := os.RemoveAll(tmp); err != nil {
			return 0, err
		}
		var err error
		if s.files {
			err = pt.n.restoreFiles(ctx, pt.p, s.subject, tmp)
		} else {
			err = pt.fetch(ctx, s.subject, tmp)
		}
		if err == nil {
			if err = os.RemoveAll(pt.dir); err == nil {
				err = os.Rename(tmp, pt.dir)
			}
		}
		if err == nil {
			return s.seq, nil
		}
		_ = os.RemoveAll(tmp)
		errs = append(errs, fmt.Errorf("%s: %w", s.subject, err))
	}
	return 0, fmt.Errorf("lazymem: cluster: restore partition %d: %w", pt.p, errors.Join(errs...))
}

// fetch unpacks the snapshot on subject into dir.
func (pt *partition) fetch(ctx context.Context, subject, dir string) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := pt.n.download(ctx, subject, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	err := untar(pr, dir)
	if err == nil {
		_, err = io.Copy(io.Discard, pr) // to the end: the digest is checked there
	}
	pr.CloseWithError(err)
	return errors.Join(err, <-done)
}

// tarDir writes the regular files under dir to w as a tar.
func tarDir(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel) + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: st.Size()}); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, st.Size())
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// untar unpacks a tarDir archive into dir, refusing names that leave it.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("snapshot entry %q leaves the directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.CopyN(f, tr, h.Size)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("snapshot entry %q: unexpected type %c", h.Name, h.Typeflag)
		}
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
