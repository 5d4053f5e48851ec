// Command lazymem is the command-line interface to a lazymem store: ingest
// JSONL histories, recall memories, show statistics, and run a demo.
//
// Run "lazymem help" for the commands and "lazymem COMMAND -h" for the
// flags of one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/version"
)

const usage = `lazymem: long-term memory for AI agents.

Usage:
  lazymem <command> [flags] [arguments]

Commands:
  demo      the meeting assistant: stream a 5,000-utterance meeting in, ask
            live questions, consolidate it into core memory, answer the
            follow-up questions, compare with eager RAG (demo synthetic: the
            100k-record multi-agent history)
  ingest    append records from a JSONL file (or - for standard input)
  recall    find the memories that answer a query
  consolidate  turn an agent's high-value records into core memory units
  core      list an agent's core memory
  feedback  mark recalled records as useful or not
  stats     show what a store holds
  mcp       serve one agent's memory as MCP tools over stdio (for desktop agents)
  forget    forget an agent's records (all, or by session, role or id)
  compact   purge forgotten and expired records' bytes from the files
  export    write live records as JSONL (the format ingest reads)
  backup    write a consistent copy of a store
  bench     compare lazymem with eager-RAG baselines on a generated history
  eval      evaluate recall on a dataset (eval locomo --data DIR)
  evalzh    evaluate recall on the Chinese memory set (bench/zhmem)
  verify    check a closed store's log and index; exits 1 naming any damage
  repair    set aside what cannot be read (under DIR/quarantine) and rebuild
  version   print the version (also --version)

Run "lazymem <command> -h" for a command's flags.

Examples:
  lazymem demo
  lazymem ingest --db ./mem history.jsonl
  lazymem recall --db ./mem --agent a1 "what did we decide about the connection pool yesterday?"
  lazymem recall --db ./mem --agent a1 --context 2000 "connection pool"
  lazymem stats --db ./mem
  lazymem mcp --db ./mem --agent a1
  lazymem forget --db ./mem --agent a1 --session s7 --json
  lazymem export --db ./mem --agent a1 > a1.jsonl
  lazymem backup --db ./mem --to ./mem-backup
  lazymem bench --scale 100k
  lazymem eval locomo --data DIR --json
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code (0 ok, 1 the
// command failed, 2 bad usage).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		if len(rest) == 1 && (rest[0] == "-h" || rest[0] == "--help") {
			fmt.Fprint(stdout, "Usage: lazymem version\n\nPrints the version of this build of lazymem.\n")
			return 0
		}
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "lazymem: version takes no arguments, got %q\n", rest[0])
			return 2
		}
		fmt.Fprintln(stdout, version.String("lazymem"))
		return 0
	case "demo":
		err = cmdDemo(ctx, rest, stdout, stderr)
	case "ingest":
		err = cmdIngest(ctx, rest, stdin, stdout, stderr)
	case "recall":
		err = cmdRecall(ctx, rest, stdout, stderr)
	case "consolidate":
		err = cmdConsolidate(ctx, rest, stdout, stderr)
	case "core":
		err = cmdCore(ctx, rest, stdout, stderr)
	case "feedback":
		err = cmdFeedback(ctx, rest, stdout, stderr)
	case "stats":
		err = cmdStats(ctx, rest, stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, rest, stdin, stdout, stderr)
	case "forget":
		err = cmdForget(ctx, rest, stdout, stderr)
	case "compact":
		err = cmdCompact(ctx, rest, stdout, stderr)
	case "export":
		err = cmdExport(ctx, rest, stdout, stderr)
	case "backup":
		err = cmdBackup(ctx, rest, stdout, stderr)
	case "bench":
		err = cmdBench(ctx, rest, stdout, stderr)
	case "eval":
		err = cmdEval(ctx, rest, stdout, stderr)
	case "evalzh":
		err = cmdEvalZh(ctx, rest, stdout, stderr)
	case "verify":
		err = cmdVerify(ctx, rest, stdout, stderr)
	case "repair":
		err = cmdRepair(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "lazymem: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "lazymem: %v\n", err)
		return 2
	default:
		// Library errors already start with "lazymem: ".
		fmt.Fprintf(stderr, "lazymem: %s\n", strings.TrimPrefix(err.Error(), "lazymem: "))
		return 1
	}
}

// usageError is a mistake in the command line, as opposed to a failure.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// newFlags returns a flag set that prints its usage to stderr and returns
// errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: lazymem %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors. It allows
// flags after positional arguments ("recall 'query' --agent a").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// stringList is a repeatable flag; each use may also hold comma-separated
// values.
type stringList []string

func (s *stringList) String() string { return fmt.Sprint([]string(*s)) }
func (s *stringList) Set(v string) error {
	for _, p := range splitComma(v) {
		*s = append(*s, p)
	}
	return nil
}

func splitComma(v string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ',' {
			if p := trimSpace(v[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	return out
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// kvList is a repeatable key=value flag building a map of lists.
type kvList map[string][]string

func (m kvList) String() string { return fmt.Sprint(map[string][]string(m)) }
func (m kvList) Set(v string) error {
	for i := 0; i < len(v); i++ {
		if v[i] == '=' {
			k, val := trimSpace(v[:i]), trimSpace(v[i+1:])
			if k == "" || val == "" {
				break
			}
			m[k] = append(m[k], val)
			return nil
		}
	}
	return fmt.Errorf("want key=value, got %q", v)
}
