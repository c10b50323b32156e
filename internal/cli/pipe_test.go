//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runMainEnv makes the test binary run Main, as the fsbox binary does, when
// a test starts it as a child (the closed-pipe tests need a real process:
// Go's runtime treats a write to fd 1 or 2 specially).
const runMainEnv = "FSBOX_CLI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// pipeEnd says what becomes of a child's stdout or stderr.
type pipeEnd int

const (
	endCapture pipeEnd = iota // read whole into a buffer
	endClosed                 // a pipe whose read end is closed before the child starts
	endEarly                  // a pipe whose reader takes a few bytes, then closes
)

type pipeRun struct {
	exit           int
	stdout, stderr string
}

// runPiped runs fsbox ARGS in dir (a child process), with stdout and
// stderr ending as asked.
func runPiped(t *testing.T, dir string, out, errEnd pipeEnd, stdin string, args ...string) pipeRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FSBOX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, runMainEnv+"=1", "FSBOX_CONFIG="+filepath.Join(dir, "..", "policy.toml"), "GORACE=atexit_sleep_ms=0")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin) // a pipe
	} // else /dev/null
	var res pipeRun
	var bufs [2]bytes.Buffer
	var readers []*os.File
	var early *os.File
	for i, end := range []pipeEnd{out, errEnd} {
		var w io.Writer = &bufs[i]
		if end != endCapture {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			if end == endClosed {
				pr.Close()
			} else {
				early = pr
				readers = append(readers, pr)
			}
			w = pw
		}
		if i == 0 {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The parent's copies of the write ends go, so the reader sees EOF.
	for _, f := range []any{cmd.Stdout, cmd.Stderr} {
		if pw, ok := f.(*os.File); ok {
			pw.Close()
		}
	}
	if early != nil {
		buf := make([]byte, 3)
		if _, err := io.ReadFull(early, buf); err != nil {
			t.Errorf("reading the first bytes: %v", err)
		}
		res.stdout = string(buf)
		early.Close()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.exit = ee.ExitCode() // -1 when a signal killed it
		if ee.ExitCode() < 0 {
			t.Errorf("fsbox %v: killed by a signal (%v), want an exit status", args, err)
		}
	default:
		t.Fatal(err)
	}
	if out == endCapture {
		res.stdout = bufs[0].String()
	}
	if errEnd == endCapture {
		res.stderr = bufs[1].String()
	}
	return res
}

// auditRecords parses the audit log.
func auditRecords(t *testing.T, log string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	return recs
}

// TestClosedPipesKeepTheAuditTrail: every call that reached the sandbox
// leaves its audit record when its stdout or stderr pipe is closed early;
// a closed stdout ends the call quietly (nothing on stderr) with exit
// status 141, after the record is written.
func TestClosedPipesKeepTheAuditTrail(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, logs := filepath.Join(base, "work"), filepath.Join(base, "logs")
	for _, d := range []string{work, logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(logs, "audit.jsonl")
	policy := "workdir = \"" + work + "\"\n[audit]\nlog = \"" + log + "\"\n"
	if err := os.WriteFile(filepath.Join(base, "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	// About 650 KB: one JSON document far over a pipe's 64 KiB buffer, and
	// under max_read_bytes; grep's output as large.
	var big strings.Builder
	for i := range 60000 {
		big.WriteString("match " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name        string
		out, errEnd pipeEnd
		stdin       string
		args        []string
		exit        int
		verdict     string
		errCode     any // the record's error.code, nil for none
		check       func(t *testing.T, rec map[string]any)
	}{
		{name: "read, stdout closed after a few bytes", out: endEarly, args: []string{"read", "big.txt"},
			exit: 141, verdict: "error", errCode: "io",
			check: func(t *testing.T, rec map[string]any) {
				if rec["bytes_read"].(float64) <= 0 {
					t.Errorf("bytes_read %v, want the file's bytes", rec["bytes_read"])
				}
			}},
		{name: "read, stdout closed before the start", out: endClosed, args: []string{"read", "big.txt"},
			exit: 141, verdict: "error", errCode: "io"},
		{name: "read text, stdout closed after a few bytes", out: endEarly, args: []string{"--format", "text", "read", "big.txt"},
			exit: 141, verdict: "error", errCode: "io"},
		{name: "grep, stdout closed after a few bytes", out: endEarly, args: []string{"grep", "match", "."},
			exit: 141, verdict: "error", errCode: "io"},
		{name: "grep ndjson, stdout closed after a few bytes", out: endEarly, args: []string{"--format", "ndjson", "grep", "match", "big.txt"},
			exit: 141, verdict: "error", errCode: "io"},
		{name: "grep text, stdout closed after a few bytes", out: endEarly, args: []string{"--format", "text", "grep", "-n", "match", "."},
			exit: 141, verdict: "error", errCode: "io"},
		{name: "write, stderr closed", errEnd: endClosed, args: []string{"write", "new.txt", "--content", "fresh\n"},
			exit: 0, verdict: "ok",
			check: func(t *testing.T, rec map[string]any) {
				if rec["bytes_written"].(float64) != 6 {
					t.Errorf("bytes_written %v, want 6", rec["bytes_written"])
				}
			}},
		{name: "write from a pipe, stdout and stderr closed", out: endClosed, errEnd: endClosed, stdin: "piped\n",
			args: []string{"write", "piped.txt"}, exit: 141, verdict: "error", errCode: "io",
			check: func(t *testing.T, rec map[string]any) {
				// The write itself was done: its result could not be told.
				if data, err := os.ReadFile(filepath.Join(work, "piped.txt")); err != nil || string(data) != "piped\n" {
					t.Errorf("piped.txt: %q %v", data, err)
				}
			}},
		{name: "denied, stderr closed", errEnd: endClosed, args: []string{"read", "../policy.toml"},
			exit: 3, verdict: "denied", errCode: "denied"},
		{name: "denied write, stderr closed", errEnd: endClosed, args: []string{"write", "/etc/fsbox-nope", "--content", "x"},
			exit: 3, verdict: "denied", errCode: "denied"},
		{name: "usage, stderr closed", errEnd: endClosed, args: []string{"write", "keep.txt"},
			exit: 2, verdict: "error", errCode: "usage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(auditRecords(t, log))
			res := runPiped(t, work, c.out, c.errEnd, c.stdin, c.args...)
			if res.exit != c.exit {
				t.Errorf("exit %d, want %d (stderr %q)", res.exit, c.exit, res.stderr)
			}
			if c.errEnd == endCapture && res.stderr != "" {
				t.Errorf("stderr %q, want nothing", res.stderr)
			}
			recs := auditRecords(t, log)
			if len(recs) != before+1 {
				t.Fatalf("%d new audit records, want 1", len(recs)-before)
			}
			rec := recs[len(recs)-1]
			if rec["command"] != c.args[indexOfCommand(c.args)] || rec["verdict"] != c.verdict || rec["exit"] != float64(c.exit) {
				t.Errorf("record command %v verdict %v exit %v, want %s %s %d", rec["command"], rec["verdict"], rec["exit"], c.args[indexOfCommand(c.args)], c.verdict, c.exit)
			}
			var code any
			if e, ok := rec["error"].(map[string]any); ok {
				code = e["code"]
			}
			if code != c.errCode {
				t.Errorf("record error code %v, want %v", code, c.errCode)
			}
			if c.check != nil {
				c.check(t, rec)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(work, "keep.txt")); string(data) != "keep\n" {
		t.Errorf("keep.txt = %q: a refused write changed it", data)
	}
}

// indexOfCommand finds the command in an argument list whose global flags
// take a value (--format X).
func indexOfCommand(args []string) int {
	for i := 0; i < len(args); i++ {
		if args[i] == "--format" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			return i
		}
	}
	return 0
}
