package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/internal/toyop"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// fixture is a workdir and a policy outside it, handed to Run through the
// call's own environment (FSBOX_CONFIG), so calls need no process state.
type fixture struct {
	work, policy string
	state        string // $XDG_STATE_HOME of the calls: the journal lives below it
}

func newFixture(t testing.TB, files map[string]string, policy string) fixture {
	t.Helper()
	base := t.TempDir()
	fx := fixture{work: filepath.Join(base, "work"), policy: filepath.Join(base, "policy.toml"), state: filepath.Join(base, "state")}
	for name, body := range files {
		p := filepath.Join(fx.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(fx.work, 0o755)
	body := "workdir = \"" + fx.work + "\"\n[sandbox]\nlandlock = \"off\"\n" + policy
	if err := os.WriteFile(fx.policy, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return fx
}

// run calls Run in the fixture with the operations of reg.
func (fx fixture) run(reg *spec.Registry, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
	code = Run(context.Background(), Call{Args: append([]string{"fsbox"}, args...), Stdout: &out, Stderr: &errb,
		Ops: reg, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Extras: Extras{JQ: jq.Compile}})
	return out.String(), errb.String(), code
}

// TestToyOperationInEveryFace adds an operation to a test registry and
// finds it, with its flags, in every face: the command line and its help,
// the man pages, the three completions, the tools, explain, the policy's
// [commands] table and the README's command table.
func TestToyOperationInEveryFace(t *testing.T) {
	reg := ops.Registry.With(toyop.Op)
	fx := newFixture(t, map[string]string{"notes.txt": "hi\n"}, "")

	out, errb, code := fx.run(reg, "toy", "-S", "notes.txt", "--times", "2")
	if code != 0 || strings.TrimSpace(out) != `{"path":"notes.txt","loud":true,"times":2}` {
		t.Errorf("fsbox toy: %d %q %q", code, out, errb)
	}
	if _, errb, code := fx.run(reg, "toy", "notes.txt", "--times", "0"); code != 2 || !strings.Contains(errb, "times must be 1 or more") {
		t.Errorf("--times 0: %d %q, want usage from the descriptor's minimum", code, errb)
	}
	if _, _, code := fx.run(ops.Registry, "toy", "notes.txt"); code != 2 {
		t.Errorf("without the descriptor toy is no command: exit %d", code)
	}
	help, _, _ := fx.run(reg, "toy", "--help")
	for _, want := range []string{"fsbox toy - greet a file", "-S, --shout-loud", "--times N", "fsbox toy notes.txt --times 2", "Global flags:", "Exit status:"} {
		if !strings.Contains(help, want) {
			t.Errorf("toy --help lacks %q:\n%s", want, help)
		}
	}
	if main, _, _ := fx.run(reg, "--help"); !strings.Contains(main, "  toy ") {
		t.Errorf("fsbox --help does not list toy:\n%s", main)
	}
	page, err := ManPage(reg, "toy")
	if err != nil || !strings.Contains(page, `\-\-shout\-loud`) || !strings.Contains(page, ".SH EXIT STATUS") || !strings.Contains(page, ".SH EXAMPLES") {
		t.Errorf("man toy: %v\n%s", err, page)
	}
	if page, _ := ManPage(reg, ""); !strings.Contains(page, "fsbox-toy") || !strings.Contains(page, "toy  ") {
		t.Errorf("fsbox.1 does not list toy or its [commands] entry")
	}
	for shell, want := range map[string][]string{
		"bash": {"    toy)", "--shout-loud", `"toy --times"`},
		"zsh":  {"    toy) _arguments", "'--shout-loud[greet loudly]'", "'toy:greet a file"},
		"fish": {"-a toy ", "-l shout-loud -s S", "complete -c fsbox-toy"},
	} {
		s, err := Completion(reg, shell)
		for _, w := range want {
			if err != nil || !strings.Contains(s, w) {
				t.Errorf("%s completion lacks %q (%v)", shell, w, err)
			}
		}
	}
	var doc tool.ToolsDoc
	out, _, _ = fx.run(reg, "tools")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var tl *tool.Tool
	for i := range doc.Tools {
		if doc.Tools[i].Name == "fsbox_toy" {
			tl = &doc.Tools[i]
		}
	}
	if tl == nil {
		t.Fatal("fsbox tools has no fsbox_toy")
	}
	if p := tl.InputSchema.Properties["shout_loud"]; p == nil || p.Type != "boolean" {
		t.Errorf("toy's shout_loud property: %+v", p)
	}
	if p := tl.InputSchema.Properties["times"]; p == nil || p.Minimum == nil || *p.Minimum != 1 {
		t.Errorf("toy's times property: %+v", p)
	}
	if tl.OutputSchema.Properties["loud"] == nil || !tl.Annotations.ReadOnlyHint {
		t.Errorf("toy's output schema or annotations: %+v", tl)
	}
	out, _, _ = fx.run(reg, "explain", "toy", "notes.txt")
	if !strings.Contains(out, `"allowed":true`) || !strings.Contains(out, `"op":"toy"`) {
		t.Errorf("explain toy: %s", out)
	}
	if !strings.Contains(CommandsTOML(reg), "toy ") || !strings.Contains(CommandTable(reg), "| `toy` | `PATH` | read |") {
		t.Error("the [commands] table or the README table lacks toy")
	}

	// The policy's [commands] table switches it like any command, and
	// explain asks the same check the call runs.
	off := newFixture(t, map[string]string{"notes.txt": "hi\n"}, "[commands]\ntoy = false\n")
	if _, errb, code := off.run(reg, "toy", "notes.txt"); code != 3 || !strings.Contains(errb, `"rule":"command"`) {
		t.Errorf("toy switched off: %d %s", code, errb)
	}
	if out, _, _ := off.run(reg, "explain", "toy", "notes.txt"); !strings.Contains(out, `"allowed":false,"rule":"command"`) {
		t.Errorf("explain toy, switched off: %s", out)
	}
	if _, errb, code := off.run(ops.Registry, "read", "notes.txt"); code != 8 || !strings.Contains(errb, `unknown command \"toy\"`) {
		t.Errorf("a policy naming toy, without its descriptor: %d %s", code, errb)
	}
}

// TestNoStateBetweenCalls: a call leaves nothing behind for the next one
// in the same process (once, grep's -v made man -v --invert-match).
func TestNoStateBetweenCalls(t *testing.T) {
	fx := newFixture(t, map[string]string{"notes.txt": "hi\n"}, "")
	fx.run(ops.Registry, "grep", "-v", "x", "notes.txt")
	_, errb, code := fx.run(ops.Registry, "man", "-v")
	if code != 2 || strings.Contains(errb, "invert") {
		t.Errorf("man -v after grep -v: %d %s", code, errb)
	}
}

// TestManPagesAreSafeRoff: no text line of a page starts with a request
// roff does not know (".gitignore ..." would vanish).
func TestManPagesAreSafeRoff(t *testing.T) {
	for _, name := range append([]string{""}, ops.Registry.Names()...) {
		page, err := ManPage(ops.Registry, name)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(page, "\n") {
			if len(l) > 1 && (l[0] == '.' || l[0] == '\'') {
				macro, _, _ := strings.Cut(l[1:], " ")
				if !roffMacros[macro] || l[0] == '\'' {
					t.Errorf("fsbox-%s.1 line %d would be read as a request: %q", name, i+1, l)
				}
			}
		}
		for _, sec := range []string{".SH EXIT STATUS", ".SH EXAMPLES"} {
			if !strings.Contains(page, sec) {
				t.Errorf("man page %q lacks %s", name, sec)
			}
		}
	}
	if page, _ := ManPage(ops.Registry, ""); !strings.Contains(page, "\\&.git is never entered") {
		t.Error("fsbox.1's .git line is not escaped")
	}
}

// TestToolCallAsArgv: the README's rule for running a tool call through
// the command line (each non-args property as a flag with '-' for '_',
// an array of objects as JSON text to --NAME-json, then -- and the args)
// gives the same result as the call run through spec.FromJSON.
func TestToolCallAsArgv(t *testing.T) {
	fx := newFixture(t, map[string]string{"f.txt": "alpha\nbeta\n"}, "")
	calls := map[string]string{
		"edit": `{"path":"f.txt","edits":[{"old":"alpha","new":"ALPHA"}],"dry_run":true}`,
		"grep": `{"pattern":"a","paths":["f.txt"],"ignore_case":true,"max_count":1}`,
		"read": `{"path":"f.txt","offset":1,"limit":1}`,
	}
	for name, call := range calls {
		op, _ := ops.Registry.Lookup(name)
		tl := tool.ToolOf(op)
		var props map[string]json.RawMessage
		json.Unmarshal([]byte(call), &props)
		argv := []string{name}
		for prop, raw := range props {
			if slices.Contains(tl.Args, prop) {
				continue
			}
			flag := "--" + strings.ReplaceAll(prop, "_", "-")
			var v any
			json.Unmarshal(raw, &v)
			switch x := v.(type) {
			case bool:
				if x {
					argv = append(argv, flag)
				}
			case []any:
				if _, objs := x[0].(map[string]any); objs {
					argv = append(argv, flag+"-json", string(raw))
				} else {
					for _, e := range x {
						argv = append(argv, flag, fmt.Sprint(e))
					}
				}
			case float64:
				argv = append(argv, flag, fmt.Sprint(int64(x)))
			default:
				argv = append(argv, flag, fmt.Sprint(x))
			}
		}
		argv = append(argv, "--")
		for _, a := range tl.Args {
			var v any
			if raw, ok := props[a]; ok && json.Unmarshal(raw, &v) == nil {
				if list, ok := v.([]any); ok {
					for _, e := range list {
						argv = append(argv, fmt.Sprint(e))
					}
				} else {
					argv = append(argv, fmt.Sprint(v))
				}
			}
		}
		out, errb, code := fx.run(ops.Registry, argv...)
		if code != 0 {
			t.Fatalf("%s %q: exit %d: %s", name, argv, code, errb)
		}
		in, err := spec.FromJSON(op, json.RawMessage(call))
		if err != nil {
			t.Fatal(err)
		}
		home, _ := os.UserHomeDir()
		p, err := policy.Load(policy.Env{Getenv: func(k string) (string, bool) {
			if k == "FSBOX_CONFIG" {
				return fx.policy, true
			}
			return "", false
		}, Cwd: fx.work, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		sb, err := sandbox.New(p, home)
		if err != nil {
			t.Fatal(err)
		}
		v, err := op.Run(context.Background(), sb, in)
		sb.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(v)
		// The same object; a streamed list may come first (jsonList).
		if !sameJSON(out, string(want)) {
			t.Errorf("%s: the command line %q printed\n%s\nthe tool call gave\n%s", name, argv, out, want)
		}
	}
}

type wordsResult struct {
	Words []string `json:"words,omitempty"`
	Count int      `json:"count"`
}

func (wordsResult) Outcome() spec.Outcome { return spec.Outcome{} }

// wordsOp streams a file's words: an operation no fsbox build has, to
// prove that the face chooses the sink (an item a line, the text form as
// items come, or none) and the operation only writes to it.
var wordsOp = &spec.Op{
	Name: "words", Class: spec.Read, Result: wordsResult{}, Streams: true,
	Summary:  "list a file's words, to prove the faces stream from the descriptor",
	Help:     "Lists the words of PATH.",
	Args:     []spec.Arg{{Name: "path", Meta: "PATH", Help: "the file", Use: sandbox.NeedReadFile}},
	Examples: []spec.Example{{Cmd: "words notes.txt --format text", Says: "one word a line"}},
	Text:     "one word a line",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		f, err := sb.Open(in.String("path"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(f); err != nil {
			return nil, err
		}
		var r wordsResult
		for _, w := range strings.Fields(b.String()) {
			r.Count++
			switch s := in.Sink; {
			case s == nil:
				r.Words = append(r.Words, w)
			case s.Text != nil:
				_, err = s.Text.WriteString(s.Text.Name(w) + "\n")
			default:
				err = s.Item(w)
			}
			if err != nil {
				return nil, err
			}
		}
		return r, nil
	},
}

// TestStreamingToyInEveryFormat: a streaming operation known only to this
// test's registry prints in every format through the one runner: JSON
// collects, ndjson gets an item a line and the summary last, text gets
// the operation's lines with names made safe.
func TestStreamingToyInEveryFormat(t *testing.T) {
	reg := ops.Registry.With(wordsOp)
	fx := newFixture(t, map[string]string{"w.txt": "alpha beta\ngam\x01ma\n"}, "")
	for _, c := range []struct{ format, want string }{
		{"json", `{"words":["alpha","beta","gam\u0001ma"],"count":3}` + "\n"},
		{"ndjson", "\"alpha\"\n\"beta\"\n\"gam\\u0001ma\"\n{\"summary\":{\"count\":3}}\n"},
		{"text", "alpha\nbeta\ngam\x01ma\n"},
	} {
		out, errb, code := fx.run(reg, "--format", c.format, "words", "w.txt")
		if code != 0 || out != c.want {
			t.Errorf("--format %s: exit %d %q %s, want %q", c.format, code, out, errb, c.want)
		}
	}
}
