package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForgetCompactExportBackup drives the maintenance commands end to end.
func TestForgetCompactExportBackup(t *testing.T) {
	tmp := t.TempDir()
	db := filepath.Join(tmp, "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	code, out, errs := runCLI(t, "", "forget", "--db", db, "--agent", "a1", "--session", "s2", "--json")
	if code != 0 || out != "{\"forgotten\":1}\n" {
		t.Fatalf("forget --json: code %d, out %q, stderr %s", code, out, errs)
	}
	if code, out, _ = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "lunch"); code != 0 || strings.Contains(out, "lunch was great") {
		t.Fatalf("recall after forget: code %d\n%s", code, out)
	}
	if code, out, errs = runCLI(t, "", "forget", "--db", db, "--agent", "a1", "--id", "2"); code != 0 || !strings.Contains(out, "forgot 1 records of agent a1") {
		t.Fatalf("forget --id: code %d\n%s%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "", "compact", "--db", db); code != 0 || !strings.Contains(out, "compacted in") {
		t.Fatalf("compact: code %d\n%s%s", code, out, errs)
	}
	// Export round-trips through ingest.
	code, exported, errs := runCLI(t, "", "export", "--db", db)
	if code != 0 || strings.Count(exported, "\n") != 2 || strings.Contains(exported, "lunch") || strings.Contains(exported, "HikariCP") {
		t.Fatalf("export: code %d\n%s%s", code, exported, errs)
	}
	copyDB := filepath.Join(tmp, "copy")
	if code, _, errs = runCLI(t, exported, "ingest", "--db", copyDB, "-"); code != 0 {
		t.Fatalf("ingest of the export: %s", errs)
	}
	if code, again, _ := runCLI(t, "", "export", "--db", copyDB); code != 0 || again != exported {
		t.Fatalf("export of the re-ingested store differs:\n%s\nwant\n%s", again, exported)
	}
	if code, a2, _ := runCLI(t, "", "export", "--db", db, "--agent", "a2"); code != 0 || strings.Count(a2, "\n") != 1 || !strings.Contains(a2, `"agent":"a2"`) {
		t.Fatalf("export --agent a2: %s", a2)
	}
	// Backup, then restore by opening the copy.
	bk := filepath.Join(tmp, "bk")
	if code, out, errs = runCLI(t, "", "backup", "--db", db, "--to", bk); code != 0 || !strings.Contains(out, "backed up 2 records") {
		t.Fatalf("backup: code %d\n%s%s", code, out, errs)
	}
	if code, out, _ = runCLI(t, "", "recall", "--db", bk, "--agent", "a1", "connection pool size"); code != 0 || !strings.Contains(out, "connection pool size to 32") {
		t.Fatalf("recall on the backup: code %d\n%s", code, out)
	}
}

// TestNotAStore: every command but ingest refuses a --db that holds no
// store, and creates nothing.
func TestNotAStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{
		{"recall", "--db", missing, "--agent", "a", "x"},
		{"stats", "--db", missing},
		{"forget", "--db", missing, "--agent", "a"},
		{"compact", "--db", missing},
		{"export", "--db", missing},
		{"backup", "--db", missing, "--to", missing + "2"},
	} {
		code, _, errs := runCLI(t, "", args...)
		if code != 1 || !strings.Contains(errs, "not a lazymem store") || !strings.Contains(errs, missing) {
			t.Errorf("%s on a missing store: code %d, stderr %q", args[0], code, errs)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("%s created %s", args[0], missing)
		}
	}
	if code, _, errs := runCLI(t, "", "forget", "--db", missing); code != 2 || !strings.Contains(errs, "--agent is required") {
		t.Fatalf("forget without --agent: code %d, %s", code, errs)
	}
}

// TestForgetFilters: --where, --since and --until narrow the agent's
// records as in POST /v1/forget; a bad time names its flag.
func TestForgetFilters(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--where", "tags=chitchat"}, `{"forgotten":1}`},                          // the lunch
		{[]string{"--until", "2026-05-01T10:00:30Z"}, `{"forgotten":1}`},                   // the pool statement
		{[]string{"--since", "2026-05-01T10:00:30Z", "--role", "user"}, `{"forgotten":0}`}, // nothing left of that
		{[]string{"--since", "2026-05-01T10:00:30Z"}, `{"forgotten":1}`},                   // the reply
	} {
		args := append([]string{"forget", "--db", db, "--agent", "a1", "--json"}, c.args...)
		if code, out, errs := runCLI(t, "", args...); code != 0 || strings.TrimSpace(out) != c.want {
			t.Fatalf("forget %v: code %d, out %q, want %s\n%s", c.args, code, out, c.want, errs)
		}
	}
	if code, out, _ := runCLI(t, "", "export", "--db", db); code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"agent":"a2"`) {
		t.Fatalf("export after the forgets: code %d\n%s", code, out)
	}
	if code, _, errs := runCLI(t, "", "forget", "--db", db, "--agent", "a1", "--until", "yesterday"); code != 2 || !strings.Contains(errs, "--until") {
		t.Fatalf("bad --until: code %d, %s", code, errs)
	}
}
