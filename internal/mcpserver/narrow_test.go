package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// narrowFixture is a workdir with a denied directory, a write-denied
// one, a .git and a subdirectory, under a policy file:
//
//	deny = ["secret/**"], write_deny = ["vendor/**"]
//
// (and the agent_config set every policy has: **/.git/** write-denied).
func narrowFixture(t *testing.T) (work string, p *policy.Policy) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	work = filepath.Join(base, "work")
	for name, content := range map[string]string{
		"secret/key.txt":     secretMarker + "\n",
		"vendor/v.txt":       "vendored\n",
		".git/config":        "[core]\n",
		"sub/a.txt":          "a\n",
		"sub/secret/not.txt": "not the policy's secret/: its rule is anchored at the workdir\n",
	} {
		writeFile(t, filepath.Join(work, filepath.FromSlash(name)), content)
	}
	file := filepath.Join(base, "policy", "p.toml")
	writeFile(t, file, "workdir = \""+work+"\"\n[paths]\ndeny = [\"secret/**\"]\nwrite_deny = [\"vendor/**\"]\n")
	p, err = policy.Load(policy.Env{ConfigFlag: file, ConfigSet: true,
		Getenv: func(string) (string, bool) { return "", false }, Cwd: work, Home: filepath.Join(base, "home"),
		Known: func(string) bool { return true }})
	must(t, err)
	p.Journal.State = filepath.Join(base, "state")
	return work, p
}

// serveDirs is what fsbox mcp [--profile PROFILE] DIR... serves (as
// runMCP builds it): the policy narrowed by the directories, then the
// sandbox. The error is the first refusal, as fsbox mcp reports it.
func serveDirs(t *testing.T, p *policy.Policy, profile string, dirs ...string) (*mcp.ClientSession, error) {
	t.Helper()
	reference := profile == "reference"
	q, err := policy.ServeDirs(p, dirs, func(int) bool { return reference })
	if err != nil {
		return nil, err
	}
	if reference {
		if q, err = policy.ForReferenceProfile(q); err != nil {
			return nil, err
		}
	}
	sb, err := sandbox.New(q, t.TempDir())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { sb.Close() })
	srv := New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: sb, Profile: profile, Stderr: io.Discard})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Server.Connect(ctx, st, nil)
	must(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	must(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// MCP directories narrow the policy in force, never widen it: a served
// directory that a deny rule matches is config at start (under the
// reference profile, also one a write_deny rule matches or a rule holds),
// naming the rule; every rule stays anchored where the policy anchors it.
//
// Fails on c24bc27: the directories replaced the policy's roots and every
// rule was matched relative to them, so `fsbox mcp W/secret` served
// secret/key.txt, `--profile reference W/.git` rewrote .git/config and
// `--profile reference W/vendor` wrote into vendor/.
func TestServedDirsNeverWiden(t *testing.T) {
	work, p := narrowFixture(t)
	for _, c := range []struct {
		profile, dir, rule string
	}{
		{"native", "secret", `"secret/**"`},
		{"native", "secret/deeper/..", `"secret/**"`}, // a name resolved first
		{"reference", "secret", `"secret/**"`},
		{"reference", ".git", `"**/.git/**"`},
		{"reference", "vendor", `"vendor/**"`},
		// The reference profile serves each directory whole: a rule
		// anchored inside it is config too ("holds").
		{"reference", ".", `"secret/**"`},
	} {
		dir := filepath.Join(work, c.dir)
		if c.dir == "secret/deeper/.." {
			must(t, os.MkdirAll(filepath.Join(work, "secret", "deeper"), 0o755))
		}
		cs, err := serveDirs(t, p, c.profile, dir)
		if err == nil {
			res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_read", Arguments: map[string]any{"path": "key.txt"}})
			t.Errorf("%s %s: served (read key.txt: %v); want config naming %s", c.profile, c.dir, res, c.rule)
			continue
		}
		if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConfig || !strings.Contains(e.Msg, c.rule) {
			t.Errorf("%s %s: %v; want config naming %s", c.profile, c.dir, err, c.rule)
		}
	}

	// Native W/.git: served, and .git/config stays write-denied (the
	// rule keeps its anchor at the workdir).
	cs, err := serveDirs(t, p, "native", filepath.Join(work, ".git"))
	must(t, err)
	if c, rule := nativeErr(t, cs, "fsbox_write", map[string]any{"path": "config", "content": "[core]\n\tfsmonitor = evil\n"}); c != "denied" || rule != "write_deny" {
		t.Errorf("native W/.git: write config: %s/%s, want denied/write_deny", c, rule)
	}
	if b, _ := os.ReadFile(filepath.Join(work, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config is now %q", b)
	}
	// Native W/vendor: readable, never written.
	cs, err = serveDirs(t, p, "native", filepath.Join(work, "vendor"))
	must(t, err)
	if got := nativeOK(t, cs, "fsbox_read", map[string]any{"path": "v.txt"}); got["content"] != "vendored\n" {
		t.Errorf("native W/vendor: read v.txt: %v", got)
	}
	if c, rule := nativeErr(t, cs, "fsbox_write", map[string]any{"path": "v.txt", "content": "x"}); c != "denied" || rule != "write_deny" {
		t.Errorf("native W/vendor: write v.txt: %s/%s, want denied/write_deny", c, rule)
	}

	// Native W/sub: relative paths resolve under it and print relative
	// to it; roots reports the bound in force; rules stay anchored at
	// the workdir (sub/secret is not secret/).
	cs, err = serveDirs(t, p, "native", filepath.Join(work, "sub"))
	must(t, err)
	if got := nativeOK(t, cs, "fsbox_read", map[string]any{"path": "a.txt"}); got["path"] != "a.txt" || got["content"] != "a\n" {
		t.Errorf("native W/sub: read a.txt: %v", got)
	}
	if got := nativeOK(t, cs, "fsbox_read", map[string]any{"path": "secret/not.txt"}); got["path"] != "secret/not.txt" {
		t.Errorf("native W/sub: read secret/not.txt (allowed by the policy): %v", got)
	}
	if c, _ := nativeErr(t, cs, "fsbox_read", map[string]any{"path": filepath.Join(work, "secret", "key.txt")}); c != "denied" {
		t.Errorf("native W/sub: read W/secret/key.txt: %s, want denied", c)
	}
	roots := nativeOK(t, cs, "fsbox_roots", nil)
	if roots["workdir"] != filepath.Join(work, "sub") || len(roots["write_roots"].([]any)) != 0 || len(roots["read_roots"].([]any)) != 0 {
		t.Errorf("native W/sub: roots %v %v %v; want the bound in force (workdir W/sub, nothing else)", roots["workdir"], roots["write_roots"], roots["read_roots"])
	}
	// Reference W/sub: list_allowed_directories is the bound.
	cs, err = serveDirs(t, p, "reference", filepath.Join(work, "sub"))
	must(t, err)
	if got := okText(t, cs, "list_allowed_directories", map[string]any{}); got != "Allowed directories:\n"+filepath.Join(work, "sub") {
		t.Errorf("reference W/sub: list_allowed_directories %q", got)
	}
	okText(t, cs, "write_file", map[string]any{"path": "n.txt", "content": "n\n"})
	if b, err := os.ReadFile(filepath.Join(work, "sub", "n.txt")); err != nil || string(b) != "n\n" {
		t.Errorf("reference W/sub: write_file n.txt landed elsewhere: %q %v", b, err)
	}
}

// nativeOK calls a native tool that must succeed and returns its
// structured content.
func nativeOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	return okResult(t, name, args, res, err)
}

// nativeErr calls a native tool that must fail and returns the error's
// code and rule.
func nativeErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (code, rule string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if !res.IsError {
		t.Errorf("%s %v: succeeded, want an error: %s", name, args, textOf(t, res))
		return "", ""
	}
	var env struct {
		Error *errBody `json:"error"`
	}
	if err := json.Unmarshal([]byte(textOf(t, res)), &env); err != nil || env.Error == nil {
		t.Fatalf("%s %v: the error text is not {\"error\":{...}}: %s", name, args, textOf(t, res))
	}
	return env.Error.Code, env.Error.Rule
}
