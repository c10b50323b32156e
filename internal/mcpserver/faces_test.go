package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/toyop"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSameCallSameResultInEveryFace runs one call through the command
// line and through the MCP server (native tools) under one explicit
// policy and compares the result objects: the faces run one code path
// (issue 27). A toy operation, known only to this test's registry, runs
// through both too.
func TestSameCallSameResultInEveryFace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	for name, body := range map[string]string{
		"notes.txt":  "beta\nalpha\ngamma\nalpha\n",
		"data.csv":   "name,age\nann,31\nbob,42\n",
		"src/a.go":   "package a\n// TODO: tests\n",
		"src/b.go":   "package b\n",
		"fix.patch":  "*** Begin Patch\n*** Update File: notes.txt\n@@\n-beta\n+BETA\n*** End Patch\n",
		".env":       "TOKEN=x\n",
		"bin/.keep":  "",
		"empty/.dir": "",
	} {
		p := filepath.Join(work, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	policyFile := filepath.Join(base, "policy.toml")
	must(t, os.WriteFile(policyFile, []byte("workdir = \""+work+"\"\n[paths]\ndeny = [\"**/.env\"]\n[sandbox]\nlandlock = \"off\"\n[journal]\nenabled = false\n"), 0o644))
	reg := ops.Registry.With(toyop.Op)

	cliRun := func(args ...string) (map[string]any, string) {
		var out, errb bytes.Buffer
		env := map[string]string{"FSBOX_CONFIG": policyFile}
		code := cli.Run(context.Background(), cli.Call{Args: append([]string{"fsbox"}, args...), Stdout: &out, Stderr: &errb, Ops: reg,
			Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if code != 0 {
			return nil, errb.String()
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("fsbox %v: %v\n%s", args, err, out.String())
		}
		return v, ""
	}

	p, err := policy.Load(policy.Env{ConfigFlag: policyFile, ConfigSet: true, Getenv: func(string) (string, bool) { return "", false },
		Cwd: work, Home: base, Known: func(string) bool { return true }})
	must(t, err)
	sb, err := sandbox.New(p, base)
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	// connect serves reg under sb with a profile to an in-memory client.
	connect := func(profile string) *mcp.ClientSession {
		srv := New(&tool.ServeSpec{Reg: reg, Sandbox: sb, Profile: profile, Stderr: &lockedBuf{}, Version: "test"})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), &idTransport{inner: st}, nil)
		must(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
		must(t, err)
		t.Cleanup(func() { cs.Close(); ss.Wait() })
		return cs
	}
	cs := connect("native")
	toolRun := func(name string, args map[string]any) (map[string]any, string) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		must(t, err)
		if res.IsError {
			return nil, textOf(t, res)
		}
		b, err := json.Marshal(res.StructuredContent)
		must(t, err)
		var v map[string]any
		must(t, json.Unmarshal(b, &v))
		return v, ""
	}

	for _, c := range []struct {
		cli  []string
		tool string
		args map[string]any
	}{
		{[]string{"read", "notes.txt"}, "fsbox_read", map[string]any{"path": "notes.txt"}},
		{[]string{"read", "notes.txt", "--offset", "1", "--limit", "2"}, "fsbox_read", map[string]any{"path": "notes.txt", "offset": 1, "limit": 2}},
		{[]string{"ls", "src"}, "fsbox_ls", map[string]any{"path": "src"}},
		{[]string{"ls"}, "fsbox_ls", map[string]any{}},
		{[]string{"stat", "notes.txt", "--sha256"}, "fsbox_stat", map[string]any{"path": "notes.txt", "sha256": true}},
		{[]string{"grep", "-n", "TODO", "."}, "fsbox_grep", map[string]any{"pattern": "TODO", "paths": []string{"."}}},
		{[]string{"grep", "-c", "a", "notes.txt"}, "fsbox_grep", map[string]any{"pattern": "a", "paths": []string{"notes.txt"}, "count": true}},
		{[]string{"find", ".", "*.go"}, "fsbox_find", map[string]any{"dir": ".", "glob": "*.go"}},
		{[]string{"wc", "notes.txt", "data.csv"}, "fsbox_wc", map[string]any{"paths": []string{"notes.txt", "data.csv"}}},
		{[]string{"slice", "notes.txt", "1", "3"}, "fsbox_slice", map[string]any{"path": "notes.txt", "start": 1, "end": 3}},
		{[]string{"sort", "-u", "notes.txt"}, "fsbox_sort", map[string]any{"path": "notes.txt", "unique": true}},
		{[]string{"cut", "--csv", "-f", "1", "data.csv"}, "fsbox_cut", map[string]any{"path": "data.csv", "csv": true, "fields": "1"}},
		{[]string{"edit", "notes.txt", "--old", "gamma", "--new", "GAMMA", "--dry-run"}, "fsbox_edit", map[string]any{"path": "notes.txt", "old": "gamma", "new": "GAMMA", "dry_run": true}},
		{[]string{"patch", "--patch-file", "fix.patch", "--dry-run"}, "fsbox_patch", map[string]any{"patch_file": "fix.patch", "dry_run": true}},
		{[]string{"explain", "read", ".env"}, "fsbox_explain", map[string]any{"command": "read", "path": ".env"}},
		{[]string{"toy", "-S", "notes.txt", "--times", "2"}, "fsbox_toy", map[string]any{"path": "notes.txt", "shout_loud": true, "times": 2}},
		// Errors: the same code, rule and path.
		{[]string{"read", ".env"}, "fsbox_read", map[string]any{"path": ".env"}},
		{[]string{"read", "missing.txt"}, "fsbox_read", map[string]any{"path": "missing.txt"}},
	} {
		fromCLI, cliErr := cliRun(c.cli...)
		fromTool, toolErr := toolRun(c.tool, c.args)
		if (cliErr == "") != (toolErr == "") {
			t.Errorf("%v: the command line says %q, the tool %q", c.cli, cliErr, toolErr)
			continue
		}
		if cliErr != "" {
			var a, b struct {
				Error struct{ Code, Rule, Path string } `json:"error"`
			}
			json.Unmarshal([]byte(cliErr), &a)
			json.Unmarshal([]byte(toolErr), &b)
			if a.Error != b.Error || a.Error.Code == "" {
				t.Errorf("%v: the command line's error %+v, the tool's %+v", c.cli, a.Error, b.Error)
			}
			continue
		}
		if !reflect.DeepEqual(fromCLI, fromTool) {
			t.Errorf("%v: the faces disagree:\n cli  %v\n tool %v", c.cli, fromCLI, fromTool)
		}
	}

	// The reference profile maps its arguments onto the same operations:
	// its answers are the command line's results in the reference's
	// words.
	rcs := connect("reference")
	refText := func(name string, args map[string]any) string {
		res, err := rcs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		must(t, err)
		return textOf(t, res)
	}
	if got, _ := cliRun("read", "notes.txt", "--limit", "2"); refText("read_text_file", map[string]any{"path": "notes.txt", "head": 2}) != got["content"] {
		t.Errorf("read_text_file head 2 and fsbox read --limit 2 disagree: %v", got)
	}
	// search_files matches the path below path, as fsbox find does a
	// glob anchored with '/' (a pattern without one matches base names).
	got, _ := cliRun("find", ".", "/**/*.go")
	var want []string
	for _, p := range got["paths"].([]any) {
		want = append(want, filepath.Join(work, p.(string)))
	}
	if s := refText("search_files", map[string]any{"path": ".", "pattern": "**/*.go"}); len(want) == 0 || s != strings.Join(want, "\n") {
		t.Errorf("search_files **/*.go says %q, fsbox find %q", s, want)
	}
	if s := refText("read_text_file", map[string]any{"path": ".env"}); !strings.Contains(s, "denied") {
		t.Errorf("read_text_file .env: %q, want the policy's denial", s)
	}
}
