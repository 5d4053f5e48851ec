package engine

import (
	"fmt"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// logSource is the log as the index's Source: Open re-indexes the tail the
// persisted index segments lack from it.
type logSource struct{ log *segment.Log }

func (s logSource) LastID() uint64 { return s.log.Next() - 1 }

func (s logSource) Scan(from uint64, fn func(d *index.Doc) error) error {
	var c codec.Record
	return s.log.Scan(from, s.log.Next(), func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		d := new(index.Doc)
		codecToDoc(id, &c, d)
		return fn(d)
	})
}

// Docs calls fn for each live record of ids (ascending): the index reads the
// records it indexes again with it (index.DocSource).
func (s logSource) Docs(ids []uint64, fn func(d *index.Doc) error) error {
	var c codec.Record
	return s.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		d := new(index.Doc)
		codecToDoc(id, &c, d)
		return fn(d)
	})
}

// Text returns the text of record id: the index reads a session's previous
// turn with it (index.Options.SessionContext).
func (s logSource) Text(id uint64) (string, error) {
	p, err := s.log.Get(id, nil)
	if err != nil {
		return "", err
	}
	var c codec.Record
	if _, err := codec.DecodeRecord(p, &c); err != nil {
		return "", fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
	}
	return c.Text, nil
}
