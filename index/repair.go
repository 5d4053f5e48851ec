package index

import "fmt"

// RepairReason says why Open dropped an index segment.
type RepairReason uint8

// Repair reasons.
const (
	// RepairCorrupt: the segment file was missing, unreadable or damaged,
	// or its id range disagreed with the MANIFEST (Repair.Err says how).
	RepairCorrupt RepairReason = iota + 1
	// RepairAfterCorrupt: the segment was sound but follows a corrupt one;
	// the index keeps a contiguous prefix of segments, so it goes too.
	RepairAfterCorrupt
	// RepairBeyondLog: the segment holds ids the log does not have (the log
	// lost its tail in a crash); the index never claims them.
	RepairBeyondLog
	// RepairAnalyzerChanged: the segments were built with other analysis
	// rules (analyzer or SessionContext) than the options give.
	RepairAnalyzerChanged
)

func (r RepairReason) String() string {
	switch r {
	case RepairCorrupt:
		return "corrupt"
	case RepairAfterCorrupt:
		return "after a corrupt segment"
	case RepairBeyondLog:
		return "beyond the log"
	case RepairAnalyzerChanged:
		return "analyzer changed"
	}
	return fmt.Sprintf("RepairReason(%d)", uint8(r))
}

// Repair is one index segment Open dropped, with the reason. Index files
// are derived data: the dropped ids [Lo, Hi] are re-indexed from the
// Source (the log), up to its last id. Metrics.Repairs lists them so that
// the caller can log what was repaired and why.
type Repair struct {
	File   string // segment file name, e.g. "000004.lzi"
	Lo, Hi uint64 // the segment's id range, inclusive, per the MANIFEST
	Reason RepairReason
	Err    error // the error that condemned the file (RepairCorrupt), else nil
}

func (r Repair) String() string {
	s := fmt.Sprintf("index segment %s (ids %d-%d) dropped and rebuilt from the log: %v", r.File, r.Lo, r.Hi, r.Reason)
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	return s
}

// dropSegments records that Open drops segs for reason (err for the first
// of them, when it is corrupt).
func (x *Index) dropSegments(segs []manifestSeg, reason RepairReason, err error) {
	for i, ms := range segs {
		r := Repair{File: segName(ms.num), Lo: uint64(ms.lo), Hi: uint64(ms.hi), Reason: reason}
		if reason == RepairCorrupt && i > 0 {
			r.Reason = RepairAfterCorrupt
		}
		if r.Reason == RepairCorrupt {
			r.Err = err
		}
		x.repairs = append(x.repairs, r)
	}
}
