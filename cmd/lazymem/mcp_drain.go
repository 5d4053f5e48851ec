package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// mcpDrain bounds how long the end of stdin waits for the answers to the
// requests read before it.
const mcpDrain = 30 * time.Second

// drained carries stdin to the MCP server line by line and holds its end
// back until every request read has been answered on stdout (or mcpDrain
// has passed, or ctx ended). Without it a client that writes its requests
// and closes stdin ("printf ... | lazymem mcp") got no answer at all, and
// an add it had sent was not stored: the server ends its session at the
// end of its input and drops the calls in flight.
type drained struct {
	mu      sync.Mutex
	changed chan struct{}       // closed and replaced on every answer
	pending map[string]struct{} // the ids of the requests read and not yet answered
	partial []byte              // stdout's unfinished line
}

func newDrained() *drained {
	return &drained{changed: make(chan struct{}), pending: map[string]struct{}{}}
}

// message is what drained reads of a JSON-RPC message: a request has an
// id and a method, a response an id and no method.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// messages parses line as one JSON-RPC message or a batch of them; what
// does not parse is no message (the server answers it with its error).
func messages(line []byte) []message {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var ms []message
		_ = json.Unmarshal(line, &ms)
		return ms
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []message{m}
}

func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// input returns the server's stdin: in's lines, and in's end only once
// every request among them has its answer.
func (d *drained) input(ctx context.Context, in io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(in)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				d.mu.Lock()
				for _, m := range messages(line) {
					if len(m.ID) > 0 && string(m.ID) != "null" && m.Method != "" {
						d.pending[idKey(m.ID)] = struct{}{}
					}
				}
				d.mu.Unlock()
				if _, werr := pw.Write(line); werr != nil {
					return // the server stopped reading
				}
			}
			if err != nil {
				d.wait(ctx)
				pw.CloseWithError(err) // io.EOF at a clean end
				return
			}
		}
	}()
	return pr
}

// wait returns once every request read has been answered, mcpDrain has
// passed or ctx has ended.
func (d *drained) wait(ctx context.Context) {
	deadline := time.NewTimer(mcpDrain)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		done := len(d.pending) == 0
		ch := d.changed
		d.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// output returns the server's stdout: w, with every answer written noted.
func (d *drained) output(w io.Writer) io.WriteCloser { return drainedWriter{d, w} }

type drainedWriter struct {
	d *drained
	w io.Writer
}

func (dw drainedWriter) Write(p []byte) (int, error) {
	n, err := dw.w.Write(p)
	d := dw.d
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	answered := false
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		for _, m := range messages(d.partial[:i]) {
			if len(m.ID) > 0 && m.Method == "" {
				delete(d.pending, idKey(m.ID))
				answered = true
			}
		}
		d.partial = d.partial[i+1:]
	}
	if answered {
		close(d.changed)
		d.changed = make(chan struct{})
	}
	d.mu.Unlock()
	return n, err
}

// Close leaves w open: the transport closes its writer when the session
// ends, and the process's stdout stays open.
func (dw drainedWriter) Close() error { return nil }
