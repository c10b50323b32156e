package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// sameJSON reports whether a and b are one JSON document each saying the
// same thing, whatever the order of their keys and their indentation.
func sameJSON(a, b string) bool {
	decode := func(s string) (any, bool) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil, false
		}
		_, err := d.Token()
		return v, err == io.EOF
	}
	x, okx := decode(a)
	y, oky := decode(b)
	return okx && oky && reflect.DeepEqual(x, y)
}

type heldResult struct {
	Path  string   `json:"path"`
	Lines []string `json:"lines" fsbox:"items"`
	Count int64    `json:"count"`
	ops.Truncation
}

// heldOp streams lines of about 1 KiB, more than the 64 KiB the output
// buffer holds, then waits for release before it returns: the test reads
// the first lines from stdout while Run is still under way. fail makes
// it return an error after its lines (the call then fails).
func heldOp(n int, release <-chan struct{}, fail error) *spec.Op {
	return &spec.Op{
		Name: "held", Class: spec.Read, Result: heldResult{}, Streams: true,
		Summary:  "stream lines, then wait, to prove JSON streams",
		Help:     "Streams lines, then waits.",
		Text:     "one line a line",
		Examples: []spec.Example{{Cmd: "held", Says: "lines"}},
		Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
			r := heldResult{Path: "held"}
			var sink func(any) error
			if in.Sink != nil {
				sink = in.Sink.Item
			}
			if sink == nil {
				r.Lines = []string{}
			}
			for i := range n {
				line := fmt.Sprintf("%04d %s", i, strings.Repeat("x", 1024))
				if sink == nil {
					r.Lines = append(r.Lines, line)
				} else if err := sink(line); err != nil {
					return nil, err
				}
				r.Count++
			}
			if release != nil {
				select {
				case <-release:
				case <-time.After(20 * time.Second):
				}
			}
			if fail != nil {
				return nil, fail
			}
			r.Truncated, r.Limit = true, "limit"
			return r, nil
		},
	}
}

// TestJSONStreamsItemsBeforeRunEnds: in --format json a streaming
// operation's items reach stdout while the operation is still running
// (memory does not grow with their number), and the whole output is still
// the one object the collected result prints, its list first.
func TestJSONStreamsItemsBeforeRunEnds(t *testing.T) {
	release := make(chan struct{})
	reg := ops.Registry.With(heldOp(200, release, nil))
	fx := newFixture(t, nil, "")
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	code := make(chan int, 1)
	go func() {
		env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
		code <- Run(context.Background(), Call{Args: []string{"fsbox", "held"}, Stdout: pw, Stderr: &errb,
			Ops: reg, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		pw.Close()
	}()
	head := `{"lines":["0000 xxx`
	got := make([]byte, len(head))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(pr, got); read <- err }()
	select {
	case err := <-read:
		if err != nil || string(got) != head {
			t.Errorf("stdout begins %q (%v), want %q", got, err, head)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no item on stdout while the operation runs: the items are held until it returns")
		close(release)
		<-read
		release = nil
	}
	if release != nil {
		close(release)
	}
	rest, _ := io.ReadAll(pr)
	out := string(got) + string(rest)
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	var want heldResult
	if err := json.Unmarshal([]byte(out), &want); err != nil || len(want.Lines) != 200 || want.Count != 200 || !want.Truncated || want.Limit != "limit" {
		t.Fatalf("not the whole result (%v): %.200q...", err, out)
	}
	if tail := `],"path":"held","count":200,"truncated":true,"limit":"limit"}` + "\n"; !strings.HasSuffix(out, tail) {
		t.Errorf("stdout ends %q, want %q", out[max(0, len(out)-80):], tail)
	}
}

// TestJSONStreamFailure: a call whose operation fails after sending items
// fails as a whole, as in ndjson: stdout is empty while the items still
// fit the 64 KiB buffer; past it, stdout has the part already written (no
// complete document: it does not parse) and stderr the error.
func TestJSONStreamFailure(t *testing.T) {
	fail := &fserr.Error{Code: fserr.CodeIO, Msg: "the disk went away"}
	fx := newFixture(t, nil, "")
	for _, c := range []struct {
		n     int
		empty bool
	}{{3, true}, {200, false}} {
		for _, format := range []string{"json", "ndjson"} {
			out, errb, code := fx.run(ops.Registry.With(heldOp(c.n, nil, fail)), "--format", format, "held")
			if code != tool.ExitCode(fserr.CodeIO) || !strings.Contains(errb, "the disk went away") {
				t.Errorf("%s, %d items: exit %d %q, want the io error", format, c.n, code, errb)
			}
			if (out == "") != c.empty {
				t.Errorf("%s, %d items: stdout has %d bytes, want empty %v", format, c.n, len(out), c.empty)
			}
			if format == "json" && out != "" && json.Valid([]byte(out)) {
				t.Errorf("%s, %d items: a failed call printed a complete document", format, c.n)
			}
		}
	}
}

// TestJSONStreamedAsCollected: every streaming command prints in JSON the
// object it prints collected (--jq '.' collects), key for key and byte for
// byte in each item, in the compact and the indented form and with
// --fields; the list member comes first; an empty list is [].
func TestJSONStreamedAsCollected(t *testing.T) {
	files := map[string]string{
		"a.txt":   "beta\nalpha\n\xff\xfebad\tbytes\xff\n",
		"b.txt":   "gamma alpha\n",
		"e.txt":   "",
		"bin.dat": "needle\x00binary\n",
		"t.tsv":   "a\tb\nno tab\n1\t2\n",
		"s/c.csv": "k,v\nx,1\ny,2\n",
	}
	fx := newFixture(t, files, "")
	cuts := newFixture(t, files, "[limits]\nmax_results = 2\n")
	calls := []struct {
		fx   fixture
		args []string
		list string // the list key, first in the streamed object
		code int
	}{
		{fx, []string{"grep", "-n", "a"}, "matches", 0},
		{fx, []string{"grep", "-c", "a"}, "counts", 0},
		{fx, []string{"grep", "-l", "a"}, "paths", 0},
		{fx, []string{"grep", "-o", "-C", "1", "al"}, "matches", 0},
		{fx, []string{"grep", "needle", "bin.dat", "b.txt"}, "matches", 0}, // a binary file's match first
		{fx, []string{"grep", "nothing-matches-this"}, "", 1},
		{fx, []string{"grep", "-c", "nothing-matches-this"}, "", 1},
		{fx, []string{"grep", "-l", "nothing-matches-this"}, "", 1},
		{fx, []string{"find", "."}, "paths", 0},
		{fx, []string{"find", ".", "*.none"}, "", 0},
		{fx, []string{"slice", "a.txt"}, "lines", 0},
		{fx, []string{"slice", "a.txt", "1", "2"}, "lines", 0},
		{fx, []string{"slice", "a.txt", "-2"}, "lines", 0},
		{fx, []string{"slice", "a.txt", "5", "9"}, "", 0},
		{fx, []string{"sort", "a.txt"}, "lines", 0},
		{fx, []string{"sort", "e.txt"}, "", 0},
		{fx, []string{"cut", "-f", "2", "a.txt"}, "rows", 0},
		{fx, []string{"cut", "--csv", "-f", "2", "s/c.csv"}, "rows", 0},
		{fx, []string{"cut", "-f", "1", "e.txt"}, "", 0},
		{fx, []string{"cut", "-f", "9", "t.tsv"}, "rows", 0}, // empty rows: [], not null
		{cuts, []string{"grep", "-n", "a"}, "matches", 9},
		{cuts, []string{"find", "."}, "paths", 9},
		{cuts, []string{"sort", "a.txt"}, "lines", 9},
		{cuts, []string{"cut", "-f", "1", "a.txt"}, "rows", 9},
		{fx, []string{"grep", "-n", "a", "--limit", "1"}, "matches", 0},
		{fx, []string{"grep", "a", "a.txt", "missing.txt"}, "matches", tool.ExitCode(fserr.CodeNotFound)},
	}
	for _, c := range calls {
		fields := "count" // of the result: the list's items are strings
		switch c.args[0] {
		case "grep":
			fields = "path,line"
		case "cut":
			fields = "" // cut's own --fields is -f
		}
		for _, extra := range [][]string{nil, {"--pretty"}, {"--fields", fields}, {"--pretty", "--fields", fields}} {
			if len(extra) > 0 && extra[len(extra)-1] == "" {
				continue
			}
			args := append(append([]string{}, c.args...), extra...)
			out, errb, code := c.fx.run(ops.Registry, args...)
			if code != c.code {
				t.Errorf("%q: exit %d %s, want %d", args, code, errb, c.code)
			}
			collected, errb, _ := c.fx.run(ops.Registry, append(args, "--jq", ".")...)
			if !sameJSON(out, collected) {
				t.Errorf("%q streamed\n%s\nsays something else than collected\n%s%s", args, out, collected, errb)
			}
			if c.list != "" && !strings.HasPrefix(strings.Join(strings.Fields(out), ""), `{"`+c.list+`":[`) {
				t.Errorf("%q: the list %s is not first:\n%s", args, c.list, out)
			}
			pretty := len(extra) > 0 && extra[0] == "--pretty"
			var want bytes.Buffer
			if pretty {
				json.Indent(&want, bytes.TrimSpace([]byte(out)), "", "  ")
			} else {
				json.Compact(&want, []byte(out))
			}
			want.WriteByte('\n')
			if out != want.String() {
				t.Errorf("%q: not laid out as encoding/json lays it out:\n%s\nwant\n%s", args, out, want.String())
			}
		}
	}
	// The empty list is [] in the object's own place, as collected.
	out, _, _ := fx.run(ops.Registry, "grep", "nothing-matches-this")
	if !strings.HasPrefix(out, `{"pattern":"nothing-matches-this","matches":[],"count":0,`) {
		t.Errorf("an empty grep prints %s", out)
	}
}

// TestJSONStreamClosedPipe: a reader that goes away while the items are
// streamed ends the call quietly with 141, as in the other formats.
func TestJSONStreamClosedPipe(t *testing.T) {
	fx := newFixture(t, nil, "")
	pr, pw := io.Pipe()
	pr.CloseWithError(syscall.EPIPE) // what a write to a pipe without a reader gets
	var errb bytes.Buffer
	env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
	code := Run(context.Background(), Call{Args: []string{"fsbox", "held"}, Stdout: pw, Stderr: &errb,
		Ops: ops.Registry.With(heldOp(200, nil, nil)), Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if code != tool.ExitClosedPipe || errb.Len() != 0 {
		t.Errorf("exit %d %q, want %d and nothing on stderr", code, errb.String(), tool.ExitClosedPipe)
	}
}

// TestJSONStreamWithJQCollects: --jq takes the whole document, so the
// items are collected (and the program sees the list as usual).
func TestJSONStreamWithJQCollects(t *testing.T) {
	fx := newFixture(t, nil, "")
	var out, errb bytes.Buffer
	env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
	code := Run(context.Background(), Call{Args: []string{"fsbox", "held", "--jq", ".lines | length"}, Stdout: &out, Stderr: &errb,
		Ops: ops.Registry.With(heldOp(3, nil, nil)), Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Extras: Extras{JQ: jq.Compile}})
	if code != 0 || out.String() != "3\n" {
		t.Errorf("--jq: exit %d %q %s", code, out.String(), errb.String())
	}
}
