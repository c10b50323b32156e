//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// hangUntilDeadline makes the listing of dir (point "dir.list"), or the
// description of entry dir ("dir.entry"), hang until the call's context
// ends: a directory read stuck until the deadline, as on a hard NFS mount.
func hangUntilDeadline(t *testing.T, point, dir string) {
	t.Helper()
	t.Cleanup(sandbox.SetDirSeam(func(ctx context.Context, p, path string) {
		if p == point && path == dir {
			<-ctx.Done()
		}
	}))
}

// TestDeadlineCutsWalks: past --timeout, find, grep and ls print what
// they found before the read that hung (the entries before it), say
// truncated with limit "timeout" and exit 9 (SPEC §2, §3), in JSON and
// with a stderr note in the text form; soon after the deadline.
func TestDeadlineCutsWalks(t *testing.T) {
	fx := newFixture(t, map[string]string{"a.txt": "needle\n", "b/x.txt": "needle\n", "c.txt": "needle\n"}, "")
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		point, dir string
		args       []string
		want       string // the list in the JSON result
	}{
		{"dir.list", "b", []string{"find", "."}, `"paths":["a.txt"]`},
		{"dir.list", "b", []string{"grep", "needle", "."}, `"matches":[{"path":"a.txt","line":1,"column":1,"text":"needle"}]`},
		{"dir.entry", "b", []string{"ls"}, `"entries":[{"name":"a.txt",`},
	} {
		hangUntilDeadline(t, tc.point, tc.dir)
		start := time.Now()
		out, errb, code := fx.run(ops.Registry, append([]string{"--timeout", timeout.String()}, tc.args...)...)
		took := time.Since(start)
		if code != 9 {
			t.Errorf("%s: exit %d (%s), want 9", tc.args, code, errb)
		}
		if !strings.Contains(out, tc.want) || !strings.Contains(out, `"truncated":true,"limit":"timeout"`) {
			t.Errorf("%s printed\n%s\nwant %s, truncated by the timeout", tc.args, out, tc.want)
		}
		if errb != "" {
			t.Errorf("%s: stderr %q, want nothing in JSON", tc.args, errb)
		}
		// The part is out by the deadline + 100 ms (SPEC §5); a loaded
		// test machine gets more room, a wait for the hung read none.
		if took > timeout+2*time.Second {
			t.Errorf("%s took %v with a %v deadline", tc.args, took, timeout)
		}
		out, errb, code = fx.run(ops.Registry, append([]string{"--timeout", "0.3", "--format", "text"}, tc.args...)...)
		note, hint, _ := strings.Cut(errb, "\n")
		if code != 9 || !strings.HasPrefix(out, "a.txt") || note != "fsbox: truncated: the deadline (300ms: max_call_seconds, --timeout) cut the output after 1 line" ||
			(tc.args[0] != "grep" && !strings.HasPrefix(hint, "fsbox:   the rest: the same command with --cursor ")) {
			t.Errorf("%s --format text: exit %d, stdout %q, stderr %q; want exit 9, a.txt, the cut's note", tc.args, code, out, errb)
		}
	}
}

// slowStdin gives a line every 20 ms, without end: a pipe that never
// closes.
type slowStdin struct{}

func (slowStdin) Read(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return copy(p, "b\na\n"), nil
}

// TestDeadlineSortTimeout: sort cannot print a part: past the deadline
// it fails with timeout, exit 9, stdout empty (SPEC §3).
func TestDeadlineSortTimeout(t *testing.T) {
	fx := newFixture(t, nil, "")
	var out, errb bytes.Buffer
	env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
	code := Run(context.Background(), Call{Args: []string{"fsbox", "--timeout", "200ms", "sort"}, Stdin: io.Reader(slowStdin{}), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if code != 9 || out.Len() != 0 {
		t.Errorf("sort past its deadline: exit %d, stdout %q; want 9 and nothing", code, out.String())
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal(errb.Bytes(), &e) != nil || e.Error.Code != "timeout" {
		t.Errorf("sort past its deadline said %q, want a timeout error", errb.String())
	}
}

// TestTimeoutOnlyLowers: --timeout can only lower max_call_seconds; it
// and the policy's value make one deadline, the shorter.
func TestTimeoutOnlyLowers(t *testing.T) {
	for _, tc := range []struct {
		policy int64
		flag   string
		want   time.Duration
	}{
		{86400, "", 86400 * time.Second},
		{86400, "1.5", 1500 * time.Millisecond},
		{86400, "2m", 2 * time.Minute},
		{30, "1h", 30 * time.Second},              // a larger value is the policy's
		{1<<63 - 1, "", time.Duration(1<<63 - 1)}, // every value works: no overflow
		{1<<63 - 1, "99999999999999999999", time.Duration(1<<63 - 1)},
	} {
		var flag time.Duration
		if tc.flag != "" {
			var err error
			if flag, err = parseTimeout(tc.flag); err != nil {
				t.Fatalf("--timeout %s: %v", tc.flag, err)
			}
		}
		l := policy.Limits{MaxCallSeconds: tc.policy}
		if got := l.CallTimeout(flag); got != tc.want {
			t.Errorf("max_call_seconds %d, --timeout %q: deadline %v, want %v", tc.policy, tc.flag, got, tc.want)
		}
	}
	for _, bad := range []string{"0", "0s", "-1", "-1s", "soon", "", "1e3", "inf", "NaN", "0.0000000001", "1.2.3"} {
		if _, err := parseTimeout(bad); err == nil || fserr.AsError(err).Code != fserr.CodeUsage {
			t.Errorf("--timeout %q: %v, want usage", bad, err)
		}
	}
}

// lateStdin gives its text, then holds the pipe open for wait before it
// ends: a writer that closes the pipe after the call's deadline.
type lateStdin struct {
	text string
	wait time.Duration
}

func (s *lateStdin) Read(p []byte) (int, error) {
	if s.text != "" {
		n := copy(p, s.text)
		s.text = s.text[n:]
		return n, nil
	}
	time.Sleep(s.wait)
	return 0, io.EOF
}

// TestDeadlineWriteFromLateStdin: write fed by a pipe that ends after the
// deadline fails with timeout (exit 9, stdout empty) and writes nothing.
// Fails on c24bc27: exit 0, and slow.txt held the content (the deadline
// was checked before stdin was read).
func TestDeadlineWriteFromLateStdin(t *testing.T) {
	fx := newFixture(t, nil, "")
	var out, errb bytes.Buffer
	env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
	// The call's deadline is 300 ms from its start, which comes before
	// stdin is read: a second of silence after the text passes it.
	code := Run(context.Background(), Call{Args: []string{"fsbox", "--timeout", "300ms", "write", "slow.txt"}, Stdin: &lateStdin{"hello\n", time.Second},
		Stdout: &out, Stderr: &errb, Ops: ops.Registry, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	var e struct{ Error struct{ Code string } }
	if code != 9 || out.Len() != 0 || json.Unmarshal(errb.Bytes(), &e) != nil || e.Error.Code != "timeout" {
		t.Errorf("write from a pipe ending past the deadline: exit %d, stdout %q, stderr %q; want 9, nothing, timeout", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(fx.work, "slow.txt")); !os.IsNotExist(err) {
		t.Errorf("slow.txt was written past the deadline (%v)", err)
	}
}

// TestDeadlineJQ: --jq runs under the call's deadline (plus the 100 ms
// grace of a cut result). A program that never ends stops there: a call
// that changed nothing fails with timeout (exit 9, stdout empty); a change
// that committed prints its result unshaped, with truncated and limit
// "timeout", and exits 9 with nothing on stderr, never as if nothing
// changed. A program that ends in time is unaffected.
// Fails on c24bc27: the jq ran until the process was killed.
func TestDeadlineJQ(t *testing.T) {
	fx := newFixture(t, map[string]string{"a.txt": "a\n"}, "")
	forever := "last(range(1e15))"
	type want struct {
		code          int
		stdout, error string // a prefix of stdout; the error's code ("" none)
	}
	// A change gets a deadline a busy machine cannot miss before it
	// commits; a read's may pass before it starts (timeout all the same).
	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"--timeout", "30s", "stat", "a.txt", "--jq", ".size"}, want{0, "2\n", ""}},
		{[]string{"--timeout", "200ms", "stat", "a.txt", "--jq", forever}, want{9, "", "timeout"}},
		{[]string{"--timeout", "200ms", "grep", "a", ".", "--jq", forever}, want{9, "", "timeout"}},
		{[]string{"--timeout", "200ms", "roots", "--jq", forever}, want{9, "", "timeout"}},
		{[]string{"--timeout", "1s", "write", "b.txt", "--content", "hi", "--jq", forever},
			want{9, `{"path":"b.txt","bytes":2,"created":true,"sha256":"8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4","change_id":"1","truncated":true,"limit":"timeout"}` + "\n", ""}},
		{[]string{"--timeout", "1s", "mkdir", "d", "--jq", forever}, want{9, `{"path":"d","created":true,"truncated":true,"limit":"timeout"}` + "\n", ""}},
	} {
		done := make(chan struct{})
		var out, errb string
		var code int
		go func() {
			defer close(done)
			out, errb, code = fx.run(ops.Registry, tc.args...)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still running 20 s past its deadline", tc.args)
		}
		var e struct{ Error struct{ Code string } }
		json.Unmarshal([]byte(errb), &e)
		if code != tc.want.code || out != tc.want.stdout || e.Error.Code != tc.want.error || (tc.want.error == "") != (errb == "") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, error %q", tc.args, code, out, errb, tc.want.code, tc.want.stdout, tc.want.error)
		}
	}
	if b, err := os.ReadFile(filepath.Join(fx.work, "b.txt")); err != nil || string(b) != "hi" {
		t.Errorf("b.txt holds %q (%v): the write committed before its --jq ran out", b, err)
	}
}
