package segment

import (
	"bytes"
	"slices"
)

// SealedValuesForTest returns the stored value of every sealed segment of
// l, then flushes Pebble's memtable into sstables (Close flushes only a
// memtable worth it). For tests outside the package.
func SealedValuesForTest(l *Log) ([][]byte, error) {
	l.segMu.RLock()
	segs := slices.Clone(l.segs)
	l.segMu.RUnlock()
	db, err := l.rdb()
	if err != nil {
		return nil, err
	}
	defer l.dbMu.RUnlock()
	var values [][]byte
	for _, m := range segs {
		v, c, err := value(db, m)
		if err != nil {
			return nil, err
		}
		values = append(values, bytes.Clone(v))
		c.Close()
	}
	return values, db.Flush()
}
