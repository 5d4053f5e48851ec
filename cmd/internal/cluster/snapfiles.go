package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Incremental snapshots (docs/CLUSTER.md, "Snapshots"). A snapshot's own
// subject, <prefix>-snapshots.p<p>.<seq>, holds a manifest (uploaded as
// a whole snapshot was: chunks, then an end message, which also carries
// formatHeader) naming every file of the copy and, for each file, its
// pieces of pieceSize bytes at fixed offsets, each by the sequence of
// the message holding it in the snapshots stream and its SHA-256. The
// pieces an upload finds among those of the partition's snapshots kept
// (same digest, same size) are referenced, not uploaded again: sealed
// log segments and index files, and the unchanged head of a log file
// that only grew. The new ones are published on the data subject
// <prefix>-snapshots.p<p>.d.<seq>. A piece leaves the stream, with a
// secure delete, once no kept snapshot references it (prune).
//
// Snapshots uploaded before this format (a tar of the copy on the
// snapshot's subject) are still restored.

const (
	// pieceSize is the size of a file's pieces (the last one of a file
	// may be shorter). Smaller pieces share more of a file that grew
	// (the log's active file, the id map: only the piece at the old end
	// changes) at the cost of a longer manifest and one message get per
	// piece at a restore: 128 KiB pieces make a 1 GiB store 8192 pieces
	// and a manifest of about 1 MB.
	pieceSize = 128 << 10
	// formatHeader on a snapshot's end message: formatFiles, a manifest;
	// absent, a tar of the copy.
	formatHeader = "Lazymem-Snapshot-Format"
	formatFiles  = "files"
)

// manifest is an incremental snapshot's list of files.
type manifest struct {
	Seq   uint64         `json:"seq"`
	Dirs  []string       `json:"dirs,omitempty"`
	Files []manifestFile `json:"files"`
}

// manifestFile is one file of the copy: its pieces in order.
type manifestFile struct {
	Name   string     `json:"name"`
	Size   int64      `json:"size"`
	Pieces []pieceRef `json:"pieces"`
}

// pieceRef is a piece of a file: the snapshots stream's message holding
// it, its size and SHA-256 (hex).
type pieceRef struct {
	Seq  uint64 `json:"seq"`
	Size int    `json:"size"`
	SHA  string `json:"sha256"`
	// Data is the sequence of the snapshot whose upload published the
	// piece: it is on that snapshot's data subject.
	Data uint64 `json:"data"`
}

// uploadStats is what an upload sent and what it referenced.
type uploadStats struct {
	Uploaded, Reused int64 // bytes of pieces published, and referenced
	Pieces, Manifest int   // pieces published; the manifest's bytes
}

// dataSubject is the subject of the pieces first uploaded by partition
// p's snapshot at seq.
func (n *Node) dataSubject(p int, seq uint64) string {
	return n.snapPrefix(p) + "d." + strconv.FormatUint(seq, 10)
}

// readManifest downloads and decodes the manifest on subject.
func (n *Node) readManifest(ctx context.Context, subject string) (*manifest, error) {
	var buf bytes.Buffer
	if err := n.download(ctx, subject, &buf); err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("snapshot %s: manifest: %w", subject, err)
	}
	return &m, nil
}

// knownPieces indexes the pieces of partition p's kept snapshots in the
// files format by digest: an upload references them instead of
// publishing them again. A manifest that does not download is left out
// (its pieces are uploaded again).
func (n *Node) knownPieces(ctx context.Context, snaps []snapshotInfo) map[string]pieceRef {
	known := map[string]pieceRef{}
	for _, s := range snaps {
		if !s.files {
			continue
		}
		m, err := n.readManifest(ctx, s.subject)
		if err != nil {
			n.opts.Logger.Warn("cluster: snapshot manifest unreadable; its pieces are not reused", "subject", s.subject, "err", err)
			continue
		}
		for _, f := range m.Files {
			for _, r := range f.Pieces {
				known[r.SHA] = r
			}
		}
	}
	return known
}

// uploadFiles uploads the copy in dir as partition p's snapshot at seq:
// the pieces not in known, then the manifest on subject.
func (n *Node) uploadFiles(ctx context.Context, p int, seq uint64, subject, dir string, known map[string]pieceRef) (uploadStats, error) {
	var st uploadStats
	m := manifest{Seq: seq}
	data := n.dataSubject(p, seq)
	buf := make([]byte, pieceSize)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			m.Dirs = append(m.Dirs, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		mf := manifestFile{Name: rel}
		for {
			k, err := io.ReadFull(f, buf)
			if k > 0 {
				sum := sha256.Sum256(buf[:k])
				digest := hex.EncodeToString(sum[:])
				ref, ok := known[digest]
				if ok && ref.Size == k {
					st.Reused += int64(k)
				} else {
					ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: data, Data: buf[:k]})
					if err != nil {
						return err
					}
					ref = pieceRef{Seq: ack.Sequence, Size: k, SHA: digest, Data: seq}
					known[digest] = ref
					st.Uploaded += int64(k)
					st.Pieces++
				}
				mf.Pieces = append(mf.Pieces, ref)
				mf.Size += int64(k)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				return err
			}
		}
		m.Files = append(m.Files, mf)
		return nil
	})
	if err != nil {
		return st, err
	}
	body, err := json.Marshal(&m)
	if err != nil {
		return st, err
	}
	st.Manifest = len(body)
	return st, n.upload(ctx, subject, bytes.NewReader(body), formatFiles)
}

// restoreFiles writes the copy the manifest on subject names into dir,
// each piece checked against its digest.
func (n *Node) restoreFiles(ctx context.Context, p int, subject, dir string) error {
	m, err := n.readManifest(ctx, subject)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	local := func(name string) (string, error) {
		name = filepath.FromSlash(name)
		if !filepath.IsLocal(name) {
			return "", fmt.Errorf("snapshot %s: %q leaves the directory", subject, name)
		}
		return filepath.Join(dir, name), nil
	}
	for _, d := range m.Dirs {
		path, err := local(d)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
	}
	// Every piece is a message get: a few at once, each written at its
	// offset.
	type job struct {
		f    *os.File
		name string
		off  int64
		ref  pieceRef
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var jobs []job
	for _, mf := range m.Files {
		path, err := local(mf.Name)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		files = append(files, f)
		var off int64
		for _, r := range mf.Pieces {
			jobs = append(jobs, job{f, mf.Name, off, r})
			off += int64(r.Size)
		}
		if off != mf.Size {
			return fmt.Errorf("snapshot %s: the pieces of %s make %d bytes, its manifest says %d", subject, mf.Name, off, mf.Size)
		}
	}
	prefix := n.snapPrefix(p) + "d."
	errs := make([]error, restoreGets)
	var wg sync.WaitGroup
	for w := range restoreGets {
		wg.Go(func() {
			for i := w; i < len(jobs) && errs[w] == nil; i += restoreGets {
				j := jobs[i]
				errs[w] = n.restorePiece(ctx, prefix, j.f, j.name, j.off, j.ref)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("snapshot %s: %w", subject, err)
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// restoreGets is how many pieces a restore gets at once.
const restoreGets = 4

// restorePiece gets one piece of file name and writes it at off in f,
// after checking where it lies, its size and its digest.
func (n *Node) restorePiece(ctx context.Context, prefix string, f *os.File, name string, off int64, r pieceRef) error {
	msg, err := n.snaps.GetMsg(ctx, r.Seq)
	if err != nil {
		return fmt.Errorf("piece %d of %s: %w", r.Seq, name, err)
	}
	sum := sha256.Sum256(msg.Data)
	switch {
	case !strings.HasPrefix(msg.Subject, prefix):
		return fmt.Errorf("piece %d of %s is on %s", r.Seq, name, msg.Subject)
	case len(msg.Data) != r.Size || hex.EncodeToString(sum[:]) != r.SHA:
		return fmt.Errorf("piece %d of %s does not match its digest", r.Seq, name)
	}
	_, err = f.WriteAt(msg.Data, off)
	return err
}

// prunePieces securely deletes the pieces of partition p's data
// subjects at or below newest that no kept snapshot references. A kept
// manifest that does not download stops the prune (its pieces could be
// deleted): it is tried again at the next snapshot.
func (n *Node) prunePieces(ctx context.Context, p int, newest uint64, kept []snapshotInfo) error {
	referenced := map[uint64]bool{}
	perData := map[uint64]uint64{} // referenced pieces by data subject
	for _, s := range kept {
		if !s.files {
			continue
		}
		m, err := n.readManifest(ctx, s.subject)
		if err != nil {
			return fmt.Errorf("lazymem: cluster: prune partition %d: %w", p, err)
		}
		for _, f := range m.Files {
			for _, r := range f.Pieces {
				if !referenced[r.Seq] {
					referenced[r.Seq] = true
					perData[r.Data]++
				}
			}
		}
	}
	prefix := n.snapPrefix(p) + "d."
	info, err := n.snaps.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	if err != nil {
		return fmt.Errorf("lazymem: cluster: list snapshot pieces: %w", err)
	}
	for subj, count := range info.State.Subjects {
		seq, err := strconv.ParseUint(strings.TrimPrefix(subj, prefix), 10, 64)
		if err != nil || seq > newest {
			continue // an upload in progress (another owner's): left to it
		}
		if perData[seq] == count {
			continue // every piece on it is referenced
		}
		if err := n.erase(ctx, subj, func(s uint64) bool { return referenced[s] }); err != nil {
			return err
		}
	}
	return nil
}
