package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress prints a one-line, self-overwriting progress report to a
// terminal, at most ten times a second. On anything but a terminal it
// stays silent: logs and pipes get the final summary only.
type progress struct {
	w     io.Writer
	tty   bool
	label string
	total int64 // 0: unknown
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer, label string, total int64) *progress {
	return &progress{w: w, tty: isTerminal(w), label: label, total: total, start: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update reports done units (and optionally the bytes read so far when the
// total is in bytes).
func (p *progress) update(done, pos int64) {
	if !p.tty {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	rate := float64(done) / now.Sub(p.start).Seconds()
	if p.total > 0 {
		frac := float64(pos) / float64(p.total)
		const width = 30
		bar := make([]byte, width)
		for i := range bar {
			if float64(i) < frac*width {
				bar[i] = '='
			} else {
				bar[i] = ' '
			}
		}
		fmt.Fprintf(p.w, "\r%s [%s] %5.1f%% %d records, %.0f/s ", p.label, bar, 100*frac, done, rate)
		return
	}
	fmt.Fprintf(p.w, "\r%s %d records, %.0f/s ", p.label, done, rate)
}

// done clears the progress line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
