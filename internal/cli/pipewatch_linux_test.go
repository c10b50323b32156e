//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/internal/tool"
)

// TestReaderGoneStopsTheCall: with a pipe on stdout, a command that only
// reads stops once the pipe's reader has gone, whether or not it has
// more to write (SPEC §3): here grep over a standard input that never
// ends (a pipe the test holds open and never writes to), which without
// the watch would wait for ever. It exits 141, quietly, and its audit
// record says io. The bound is on a hang, not a timing: 10 s.
func TestReaderGoneStopsTheCall(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(base, "audit.jsonl")
	policy := "workdir = \"" + work + "\"\n[audit]\nlog = \"" + log + "\"\n"
	if err := os.WriteFile(filepath.Join(base, "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("a needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		args      []string
		firstLine string // read before the reader goes ("": it goes at once)
	}{
		{"grep text, nothing written yet", []string{"--format", "text", "grep", "needle", "-"}, ""},
		{"grep json, nothing written yet", []string{"grep", "needle", "-"}, ""},
		{"grep -c, nothing written yet", []string{"grep", "-c", "needle", "-"}, ""},
		// The first match goes to the reader while the search waits on
		// standard input (not when 64 KiB are held); the reader then goes.
		{"grep text, a match given, then the reader goes", []string{"--format", "text", "grep", "needle", "a.txt", "-"}, "a.txt:a needle\n"},
		{"grep ndjson, a match given, then the reader goes", []string{"--format", "ndjson", "grep", "needle", "a.txt", "-"}, `{"path":"a.txt","line":1,"column":3,"text":"a needle"}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(auditRecords(t, log))
			cmd := exec.Command(os.Args[0], c.args...)
			cmd.Dir = work
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "FSBOX_") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, runMainEnv+"=1", "FSBOX_CONFIG="+filepath.Join(base, "policy.toml"), "GORACE=atexit_sleep_ms=0")
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inW.Close() // held open, never written: standard input never ends
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			inR.Close()
			outW.Close()
			if c.firstLine != "" {
				type read struct {
					line string
					err  error
				}
				got := make(chan read, 1)
				go func() {
					line, err := bufio.NewReader(outR).ReadString('\n')
					got <- read{line, err}
				}()
				var r read
				select {
				case r = <-got:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill() // the read ends at EOF
					r = <-got
					cmd.Wait()
					t.Fatalf("no line on stdout 10 s after the start: the match waits in a buffer")
				}
				if r.err != nil || r.line != c.firstLine {
					t.Errorf("first line %q (%v), want %q", r.line, r.err, c.firstLine)
				}
			}
			outR.Close() // the reader goes
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("fsbox %v still ran 10 s after its reader went", c.args)
			}
			if code := cmd.ProcessState.ExitCode(); code != tool.ExitClosedPipe {
				t.Errorf("exit %d (%v), want %d", code, err, tool.ExitClosedPipe)
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
			recs := auditRecords(t, log)
			if len(recs) != before+1 {
				t.Fatalf("%d new audit records, want 1", len(recs)-before)
			}
			rec := recs[len(recs)-1]
			e, _ := rec["error"].(map[string]any)
			if rec["verdict"] != "error" || rec["exit"] != float64(tool.ExitClosedPipe) || e == nil || e["code"] != "io" {
				t.Errorf("audit record %v, want verdict error, exit 141, code io", rec)
			}
		})
	}
}
