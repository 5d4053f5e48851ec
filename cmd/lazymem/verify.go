package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/engine"
)

// errDamaged makes the command exit 1 after the report was printed.
type errDamaged struct{ n int }

func (e errDamaged) Error() string {
	return fmt.Sprintf("lazymem: store damaged: %d problem(s); run lazymem repair", e.n)
}

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "verify --db DIR [--json]", stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required; the store must not be open)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *dbDir == "" {
		return usagef("verify: --db is required")
	}
	if len(pos) > 0 {
		return usagef("verify: unexpected argument %q", pos[0])
	}
	prog := stageProgress(stderr, "verify")
	rep, err := engine.Verify(*dbDir, engine.VerifyOptions{Progress: prog.update})
	prog.done()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printVerify(stdout, rep)
	}
	if !rep.OK() {
		return errDamaged{len(rep.Damage)}
	}
	return nil
}

func printVerify(w io.Writer, rep *engine.VerifyReport) {
	fmt.Fprintf(w, "records    %d assigned, %d live and readable\n", rep.Records, rep.Live)
	fmt.Fprintf(w, "log        %d sealed segments\n", rep.Segments)
	fmt.Fprintf(w, "index      %d indexed, %d to index at the next open\n", rep.Indexed, rep.Unindexed)
	if rep.OK() {
		fmt.Fprintln(w, "ok         no damage found")
		return
	}
	for _, d := range rep.Damage {
		fmt.Fprintf(w, "DAMAGED    %s", d.Kind)
		if d.Segment != 0 {
			fmt.Fprintf(w, " segment %d", d.Segment)
		}
		if d.Offset >= 0 {
			fmt.Fprintf(w, " offset %d", d.Offset)
		}
		if d.FirstID != 0 {
			fmt.Fprintf(w, " ids %d..%d (%d)", d.FirstID, d.LastID, d.Count)
		}
		fmt.Fprintf(w, ": %s\n", d.Err)
	}
}

// stages shows engine progress callbacks on a terminal, one progress line
// per stage.
type stages struct {
	w     io.Writer
	label string
	stage string
	p     *progress
}

func stageProgress(w io.Writer, label string) *stages { return &stages{w: w, label: label} }

func (s *stages) update(v engine.VerifyProgress) {
	if s.p == nil || v.Stage != s.stage {
		if s.p != nil {
			s.p.done()
		}
		s.stage = v.Stage
		s.p = newProgress(s.w, s.label+" "+v.Stage, int64(v.Total))
	}
	s.p.update(int64(v.Done), int64(v.Done))
}

func (s *stages) done() {
	if s.p != nil {
		s.p.done()
	}
}
