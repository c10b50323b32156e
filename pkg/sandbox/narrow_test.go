//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// verdict is what a sandbox answers for reading or writing a path: "" when
// allowed, else the error's code/rule.
func verdict(s *Sandbox, write bool, p string) string {
	var err error
	if write {
		_, err = s.CheckWrite(p)
	} else {
		var f *File
		if f, err = s.Open(p); err == nil {
			f.Close()
		}
	}
	if err == nil {
		return ""
	}
	e := fserr.AsError(err)
	if e == nil {
		return err.Error()
	}
	return string(e.Code) + "/" + string(e.Rule)
}

// A deny or write_deny glob that begins with **/ also sees the root's
// own name: a root that is itself .git stays write-denied, a root named
// tmp is denied by **/tmp/**. The directories above a root never decide
// (a worktree under ~/.codex/..., a workdir under a directory named tmp),
// and allow rules and regexes never see the root's name.
//
// Fails on c24bc27: a workdir that is .git itself let config be written
// (its rules saw "config" only), and the other roots named by a rule were
// as open.
func TestRootNameRules(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	for _, c := range []struct {
		name      string
		root      string // below base
		deny      []string
		writeDeny []string
		allow     []string
		denyRegex []string
		write     bool
		path      string
		want      string
	}{
		{name: ".git root: written", root: "repo/.git", write: true, path: "config", want: "denied/write_deny"},
		{name: ".git root: read", root: "repo/.git", path: "config"},
		{name: ".git root: a nested dir", root: "repo/.git", write: true, path: "hooks/pre-commit", want: "denied/write_deny"},
		{name: ".codex root: written", root: "home/.codex", write: true, path: "config.toml", want: "denied/write_deny"},
		{name: "a worktree under ~/.codex keeps working", root: "home/.codex/worktrees/x/proj", write: true, path: "main.go"},
		{name: "a workdir under a directory named tmp keeps working", root: "tmp/work", deny: []string{"**/tmp/**"}, path: "a.txt"},
		{name: "a root named tmp under **/tmp/**", root: "tmp", deny: []string{"**/tmp/**"}, path: "a.txt", want: "denied/deny"},
		{name: "a root named tmp: write_deny", root: "tmp", writeDeny: []string{"**/tmp/**"}, write: true, path: "a.txt", want: "denied/write_deny"},
		{name: "a root named x.pem", root: "x.pem", deny: []string{"**/*.pem"}, path: "a.txt", want: "denied/deny"},
		{name: "a root named tmp: a glob anchored at the root does not see it", root: "tmp", deny: []string{"tmp/**"}, path: "a.txt"},
		{name: "allow never sees the root's name", root: "proj", allow: []string{"proj/**"}, path: "a.txt", want: "denied/allow"},
		{name: "regexes never see the root's name", root: "repo/.git", denyRegex: []string{`^\.git/`}, path: "config"},
	} {
		root := filepath.Join(base, c.name, c.root)
		file := filepath.Join(root, filepath.FromSlash(c.path))
		mustWrite(t, file, "x\n")
		p := policy.DefaultPolicy(root)
		p.Paths.Deny, p.Paths.Allow, p.Paths.DenyRegex = c.deny, c.allow, c.denyRegex
		p.Paths.WriteDeny = append(p.Paths.WriteDeny, c.writeDeny...)
		p.Journal.State = filepath.Join(base, c.name, "state")
		s, err := New(p, filepath.Join(base, c.name, "home"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := verdict(s, c.write, c.path); got != c.want {
			t.Errorf("%s: %s %s: %q, want %q", c.name, map[bool]string{false: "read", true: "write"}[c.write], c.path, got, c.want)
		}
		s.Close()
	}
}

// servedFixture is a workdir W, a write root W2 and a read root R under a
// policy "file" (Source set; not loaded, so the test chooses where it
// lies), with files in each.
func servedFixture(t *testing.T) (base, w, w2, r string, p *policy.Policy) {
	t.Helper()
	base, _ = filepath.EvalSymlinks(t.TempDir())
	w, w2, r = filepath.Join(base, "W"), filepath.Join(base, "W2"), filepath.Join(base, "R")
	for _, f := range []string{"W/sub/a.txt", "W/sub/b.md", "W/sub/private/p.txt", "W/sub/deeper/d.txt", "W/top.txt",
		"W/secret/key.txt", "W/vendor/v.txt", "W2/x.txt", "R/r.txt", "etc/p.toml"} {
		mustWrite(t, filepath.Join(base, filepath.FromSlash(f)), "x\n")
	}
	p = policy.DefaultPolicy(w)
	p.WriteRoots, p.ReadRoots = []string{w2}, []string{r}
	p.Source, p.Link = filepath.Join(base, "etc", "p.toml"), filepath.Join(base, "etc", "p.toml")
	p.Journal.State = filepath.Join(base, "state")
	return base, w, w2, r, p
}

// serve is fsbox mcp's served sandbox for dirs (writable: the first, and
// every one when all).
func serve(t *testing.T, p *policy.Policy, all bool, dirs ...string) (*Sandbox, error) {
	t.Helper()
	q, err := policy.ServeDirs(p, dirs, func(int) bool { return all })
	if err != nil {
		return nil, err
	}
	if all {
		if q, err = policy.ForReferenceProfile(q); err != nil {
			return nil, err
		}
	}
	s, err := New(q, filepath.Join(filepath.Dir(p.Workdir), "home"))
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// Directories served narrow a policy by a bound: every rule keeps the
// anchor the policy gives it (an allow or deny rule on sub/... still
// decides below a served W/sub), relative paths resolve under the first
// directory and print relative to it, the roots reported are the bound
// in force, and the policy keeps its roots (a policy file in a write root
// the directories leave out is still its own write root).
//
// Fails on c24bc27: the served directory became the root, so
// deny = ["sub/private/**"] let sub/private/p.txt be read from W/sub, an
// allow rule on sub/*.txt denied sub/a.txt, and a policy file in W2 was
// accepted by fsbox mcp W.
func TestServedAnchors(t *testing.T) {
	_, w, w2, r, p := servedFixture(t)
	sub := filepath.Join(w, "sub")
	for _, c := range []struct {
		name  string
		deny  []string
		allow []string
		write bool
		path  string
		want  string
	}{
		{name: "a deny rule anchored above the served directory", deny: []string{"sub/private/**"}, path: "private/p.txt", want: "denied/deny"},
		{name: "... and written", deny: []string{"sub/private/**"}, write: true, path: "private/new.txt", want: "denied/deny"},
		{name: "an allow rule anchored above it", allow: []string{"sub/*.txt"}, path: "a.txt"},
		{name: "an allow rule anchored above it, not matching", allow: []string{"sub/*.txt"}, path: "b.md", want: "denied/allow"},
		{name: "an allow rule anchored above it: written", allow: []string{"sub/*.txt"}, write: true, path: "a.txt"},
		{name: "an allow rule anchored above it: a new file", allow: []string{"sub/*.txt"}, write: true, path: "new.txt"},
		{name: "a rule anchored at the served directory's own name decides nothing", deny: []string{"a.txt"}, path: "a.txt"},
		{name: "outside the served directory, inside the policy's root", path: filepath.Join(w, "top.txt"), want: "denied/root"},
		{name: "the write root the directories leave out", write: true, path: filepath.Join(w2, "x.txt"), want: "denied/root"},
		{name: "the read root the directories leave out", path: filepath.Join(r, "r.txt"), want: "denied/root"},
		{name: "'..' out of the served directory", path: "../top.txt", want: "denied/root"},
	} {
		q := *p
		q.Paths.Deny, q.Paths.Allow = c.deny, c.allow
		s, err := serve(t, &q, false, sub)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := verdict(s, c.write, c.path); got != c.want {
			t.Errorf("%s: %s: %q, want %q", c.name, c.path, got, c.want)
		}
	}

	// mv and rm match allow rules where the policy anchors them too.
	q := *p
	q.Paths.Allow = []string{"sub/*.txt"}
	s, err := serve(t, &q, false, sub)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ProbeRename("a.txt", "c.txt"); err != nil {
		t.Errorf("mv a.txt c.txt under allow sub/*.txt, serving W/sub: %v", err)
	}
	mustWrite(t, filepath.Join(sub, "gone.txt"), "x\n")
	if w, err := s.OpenEntry("gone.txt"); err != nil {
		t.Errorf("rm gone.txt under allow sub/*.txt, serving W/sub: %v", err)
	} else {
		if err := s.Remove(w, false); err != nil {
			t.Errorf("rm gone.txt under allow sub/*.txt, serving W/sub: %v", err)
		}
		w.Close()
	}

	s, err = serve(t, p, false, sub, r)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Lstat("a.txt"); err != nil || info.Path != "a.txt" || info.Abs != filepath.Join(sub, "a.txt") {
		t.Errorf("a.txt under W/sub: %+v, %v; want it resolved under the first directory and printed relative to it", info, err)
	}
	if info, err := s.Lstat(filepath.Join(sub, "deeper", "d.txt")); err != nil || info.Path != "deeper/d.txt" {
		t.Errorf("W/sub/deeper/d.txt: %+v, %v; want it printed relative to W/sub", info, err)
	}
	if s.Workdir() != sub || len(s.WritableRoots()) != 1 || strings.Join(s.ReadRoots(), ",") != r {
		t.Errorf("roots in force: %s %v %v; want the bound (W/sub, R)", s.Workdir(), s.WritableRoots(), s.ReadRoots())
	}
	// Client roots narrow the served directories further.
	v, kept, _ := s.Narrow([]string{filepath.Join(sub, "deeper")})
	if len(kept) != 1 || verdict(v, false, "deeper/d.txt") != "" || verdict(v, false, "a.txt") != "denied/root" {
		t.Errorf("client roots W/sub/deeper: kept %v, deeper/d.txt %q, a.txt %q", kept, verdict(v, false, "deeper/d.txt"), verdict(v, false, "a.txt"))
	}

	// The policy file in the write root the directories leave out.
	q = *p
	q.Source = filepath.Join(w2, "p.toml")
	q.Link = q.Source
	mustWrite(t, q.Source, "")
	if _, err := serve(t, &q, false, sub); err == nil || fserr.AsError(err).Code != fserr.CodeConfig || !strings.Contains(err.Error(), "lies inside its own write root "+w2) {
		t.Errorf("a policy file in W2, serving W/sub: %v; want config (its own write root)", err)
	}
}

// At start, a served directory a deny rule matches is config, naming the
// rule; under the reference profile so is one a deny or write_deny rule
// matches or holds (could match something below it: a glob whose literal
// prefix lies below it or above it; one that begins with a wildcard holds
// nothing, or every directory would be refused).
//
// Fails on c24bc27: every one of these directories was served.
func TestServedAtStart(t *testing.T) {
	for _, c := range []struct {
		name      string
		deny      []string
		writeDeny []string
		reference bool
		dir       string // below W
		want      string // a substring of the config error, "" for served
	}{
		{name: "denied", deny: []string{"secret/**"}, dir: "secret", want: `deny pattern "secret/**"`},
		{name: "below a denied one", deny: []string{"secret"}, dir: "secret/inner", want: `deny pattern "secret"`},
		{name: "holding a denied one: native serves it", deny: []string{"secret/**"}, dir: "."},
		{name: "holding a denied one: reference", deny: []string{"secret/**"}, reference: true, dir: ".", want: `deny pattern "secret/**" reaches into`},
		{name: "write-denied: native serves it", writeDeny: []string{"vendor/**"}, dir: "vendor"},
		{name: "write-denied: reference", writeDeny: []string{"vendor/**"}, reference: true, dir: "vendor", want: `write_deny pattern "vendor/**"`},
		{name: "held, not matched: reference", writeDeny: []string{"vendor/*/gen"}, reference: true, dir: "vendor", want: `write_deny pattern "vendor/*/gen" reaches into`},
		{name: "a rule elsewhere: reference", writeDeny: []string{"vendor/**"}, reference: true, dir: "src"},
		{name: "**/.git/** holds no directory it does not match", reference: true, dir: "src"},
		{name: ".git: native", dir: ".git"},
		{name: ".git: reference", reference: true, dir: ".git", want: `write_deny pattern "**/.git/**"`},
		{name: "a **/ deny rule", deny: []string{"**/*.pem"}, dir: "certs.pem", want: `deny pattern "**/*.pem"`},
	} {
		base, _ := filepath.EvalSymlinks(t.TempDir())
		w := filepath.Join(base, "W")
		for _, d := range []string{"secret/inner", "vendor/x", "src", ".git", "certs.pem"} {
			if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p := policy.DefaultPolicy(w)
		p.Source, p.Link = filepath.Join(base, "p.toml"), filepath.Join(base, "p.toml")
		p.Journal.State = filepath.Join(base, "state")
		p.Paths.Deny = c.deny
		p.Paths.WriteDeny = append(p.Paths.WriteDeny, c.writeDeny...)
		_, err := serve(t, p, c.reference, filepath.Join(w, c.dir))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want it served", c.name, err)
		case c.want != "" && (err == nil || fserr.AsError(err).Code != fserr.CodeConfig || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want config naming %s", c.name, err, c.want)
		}
	}
	// Without a policy the directories are the roots, checked the same
	// way: the agent preset's secrets set refuses ~/.ssh itself.
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ssh := filepath.Join(base, "home", ".ssh")
	if err := os.MkdirAll(ssh, 0o755); err != nil {
		t.Fatal(err)
	}
	q, err := policy.ServeDirs(policy.DefaultPolicy(base), []string{ssh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q = policy.AgentServed(q)
	q.Journal.State = filepath.Join(base, "state")
	if s, err := New(q, ""); err == nil || fserr.AsError(err).Code != fserr.CodeConfig || !strings.Contains(err.Error(), `"**/.ssh/**"`) {
		if s != nil {
			s.Close()
		}
		t.Errorf("fsbox mcp ~/.ssh without a policy: %v; want config naming **/.ssh/**", err)
	}
}
