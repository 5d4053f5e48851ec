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
	rep, err := runStoreCheck("verify", args, stdout, stderr, engine.Verify, printVerify)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return errDamaged{len(rep.Damage)}
	}
	return nil
}

// runStoreCheck is what verify and repair share: the flags (--db DIR,
// --json), the stage progress on a terminal, and the report printed as
// JSON or as text whenever run returned one (a repair that failed half
// way still reports what it did). The error is run's, else the printing's.
func runStoreCheck[R any](name string, args []string, stdout, stderr io.Writer,
	run func(string, engine.VerifyOptions) (*R, error), text func(io.Writer, *R)) (*R, error) {
	fs := newFlags(name, name+" --db DIR [--json]", stderr)
	dbDir := fs.String("db", "", "store directory `DIR` (required; the store must not be open)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if *dbDir == "" {
		return nil, usagef("%s: --db is required", name)
	}
	if len(pos) > 0 {
		return nil, usagef("%s: unexpected argument %q", name, pos[0])
	}
	prog := stageProgress(stderr, name)
	rep, err := run(*dbDir, engine.VerifyOptions{Progress: prog.update})
	prog.done()
	if rep == nil {
		return nil, err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		text(stdout, rep)
	}
	return rep, err
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
