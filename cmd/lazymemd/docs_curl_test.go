package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestDocCurlExamples runs the curl commands of the README and
// docs/API.md against a daemon, in their order, and fails on any reply
// that is not 200: a newcomer copies them first. A command is a line
// starting "curl -s localhost:7373" in a fenced block, continued while its
// quotes are open; -H and -d are read (a body means POST).
func TestDocCurlExamples(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(newServer(db, defaultLimits()).routes())
	defer ts.Close()
	n := 0
	for _, doc := range []string{"README.md", "docs/API.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range curlCommands(string(b)) {
			n++
			args := shellWords(cmd)
			var url, body string
			hdr := http.Header{}
			for i := 1; i < len(args); i++ {
				switch a := args[i]; {
				case a == "-s":
				case a == "-H" && i+1 < len(args):
					k, v, _ := strings.Cut(args[i+1], ":")
					hdr.Set(strings.TrimSpace(k), strings.TrimSpace(v))
					i++
				case a == "-d" && i+1 < len(args):
					body = args[i+1]
					i++
				case strings.HasPrefix(a, "localhost:7373"):
					url = ts.URL + strings.TrimPrefix(a, "localhost:7373")
				default:
					t.Fatalf("%s: %q: argument %q not understood by this test", doc, cmd, a)
				}
			}
			method := http.MethodGet
			if body != "" {
				method = http.MethodPost
				if hdr.Get("Content-Type") == "" {
					hdr.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
				}
			}
			req, err := http.NewRequest(method, url, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = hdr
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: %q: %d %s", doc, cmd, resp.StatusCode, out)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d curl commands found in the docs, want at least 3: the test no longer reads them", n)
	}
}

// curlCommands returns the curl commands to localhost:7373 of md's fenced
// blocks, each joined into one line (a line ending in a backslash, or
// inside an open quote, continues).
func curlCommands(md string) []string {
	var out []string
	var cur strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			cur.Reset()
			continue
		}
		if !fenced {
			continue
		}
		if cur.Len() == 0 && !strings.HasPrefix(line, "curl -s localhost:7373") {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		cur.WriteString(strings.TrimSuffix(line, "\\"))
		if !cont && strings.Count(cur.String(), "'")%2 == 0 {
			out = append(out, cur.String())
			cur.Reset()
		} else {
			cur.WriteByte('\n')
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the plain
// and single- or double-quoted words these examples use.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// TestDocsNameEveryTool: the README's, OPERATIONS.md's and API.md's
// lists of the MCP tools name every tool the daemon serves (the README
// and OPERATIONS.md named four of the eleven after feedback,
// consolidate and core were added).
func TestDocsNameEveryTool(t *testing.T) {
	lists := []struct{ doc, start string }{
		{"README.md", "`POST /mcp` is a Model Context Protocol endpoint"},
		{"docs/OPERATIONS.md", "Tools: `add`"},
		{"docs/API.md", "| `POST /mcp` | one JSON-RPC 2.0 message |"},
	}
	for _, l := range lists {
		b, err := os.ReadFile(filepath.Join("..", "..", l.doc))
		if err != nil {
			t.Fatal(err)
		}
		_, text, ok := strings.Cut(string(b), l.start)
		if !ok {
			t.Fatalf("%s: no %q: the test no longer finds the list", l.doc, l.start)
		}
		text, _, _ = strings.Cut(text, "\n\n") // the paragraph (or table row and the rest of its table)
		text, _, _ = strings.Cut(text, "\n|")
		for _, tool := range routeTools(registry) {
			if !strings.Contains(text, "`"+tool.Name+"`") {
				t.Errorf("%s: the list of tools (%q...) does not name `%s`", l.doc, l.start, tool.Name)
			}
		}
	}
}
