//go:build unix

package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// TestLoadRefusesWritablePlaces: a policy named by --config is refused
// (config) when it lies where fsbox writes or could have written — the
// workdir of the policy that applies without --config (the user's config
// file, else the built-in default whose workdir is the cwd), an audit
// log's directory (the user's policy's or its own), fsbox's state
// directory — whatever workdir it names, by its real path and by every
// place its name passes through. FSBOX_CONFIG is the host's choice and
// is not second-guessed (beyond its own workdir, which New refuses).
func TestLoadRefusesWritablePlaces(t *testing.T) {
	type lcase struct {
		name    string
		user    bool   // a ~/.config/fsbox/config.toml (workdir w, audit log in logs/)
		broken  bool   // ... that does not load
		garbled bool   // ... that is not even TOML
		plant   string // where the candidate lies, relative to base ("" for none)
		flag    string // --config, relative to base unless absolute or starting with "./" (cwd)
		env     map[string]string
		code    fserr.Code
		msg     string // a substring of the message
	}
	cases := []lcase{
		// The reproduction: the user's workdir, however named.
		{name: "user workdir", user: true, plant: "w/evil.toml", flag: "w/evil.toml", code: fserr.CodeConfig,
			msg: "(the workdir of BASE/home/.config/fsbox/config.toml, the policy that applies without --config)"},
		{name: "user workdir deep", user: true, plant: "w/a/b/evil.toml", flag: "w/a/b/evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "user workdir relative", user: true, plant: "w/evil.toml", flag: "./../w/evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "user workdir dotdot", user: true, plant: "w/evil.toml", flag: "etc/../w/./evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "symlink outside to a file inside", user: true, plant: "w/evil.toml", flag: "etc/link.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "symlinked dir outside into the workdir", user: true, plant: "w/evil.toml", flag: "wlink/evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "symlinked dir inside the workdir to outside", user: true, plant: "out/evil.toml", flag: "w/out/evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "symlinked dir inside, then dotdot", user: true, plant: "evil.toml", flag: "w/out/../evil.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "user workdir named through a symlink", user: true, plant: "w/evil.toml", flag: "w/evil.toml",
			env: map[string]string{"USERWORK": "wlink"}, code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "symlinked dir in the cwd to outside", user: true, plant: "out/evil.toml", flag: "cwd/out/evil.toml", code: fserr.CodeConfig,
			msg: "lies inside BASE/cwd (the current directory)"},
		// fsbox's own state.
		{name: "user audit log dir", user: true, plant: "logs/evil.toml", flag: "logs/evil.toml", code: fserr.CodeConfig,
			msg: "(the directory of the audit log of BASE/home/.config/fsbox/config.toml)"},
		{name: "own audit log dir", user: true, plant: "etc/own/evil.toml", flag: "etc/own/evil.toml", code: fserr.CodeConfig,
			msg: "(the directory of its own audit log)"},
		{name: "state dir default", plant: "home/.local/state/fsbox/journal/x/evil.toml", flag: "home/.local/state/fsbox/journal/x/evil.toml",
			code: fserr.CodeConfig, msg: "lies inside BASE/home/.local/state/fsbox (fsbox's state directory"},
		{name: "state dir XDG", plant: "xstate/fsbox/evil.toml", flag: "xstate/fsbox/evil.toml",
			env: map[string]string{"XDG_STATE_HOME": "BASE/xstate"}, code: fserr.CodeConfig, msg: "lies inside BASE/xstate/fsbox (fsbox's state directory"},
		{name: "XDG state outside fsbox/ is no state", plant: "xstate/evil.toml", flag: "xstate/evil.toml",
			env: map[string]string{"XDG_STATE_HOME": "BASE/xstate"}},
		{name: "relative XDG_STATE_HOME is ignored", plant: "home/.local/state/fsbox/evil.toml", flag: "home/.local/state/fsbox/evil.toml",
			env: map[string]string{"XDG_STATE_HOME": "xstate"}, code: fserr.CodeConfig, msg: "state directory"},
		// The built-in default: its workdir is the cwd.
		{name: "default: cwd", plant: "cwd/evil.toml", flag: "./evil.toml", code: fserr.CodeConfig, msg: "current directory"},
		{name: "default: outside", plant: "etc/ok.toml", flag: "etc/ok.toml"},
		{name: "default: user workdir is no workdir then", plant: "w/ok.toml", flag: "w/ok.toml"},
		// Outside every such place: loaded.
		{name: "user: outside", user: true, plant: "etc/ok.toml", flag: "etc/ok.toml"},
		{name: "user: beside the workdir", user: true, plant: "w2/ok.toml", flag: "w2/ok.toml"},
		{name: "user: through a symlink to outside", user: true, plant: "etc/ok.toml", flag: "etc/oklink.toml"},
		// A user policy that does not load still protects its workdir: the
		// sandboxed side may have broken it after planting a policy there
		// (on 1f42b5c the guard was skipped). One that cannot even be
		// parsed refuses every --config.
		{name: "broken user: workdir", user: true, broken: true, plant: "w/ok.toml", flag: "w/ok.toml", code: fserr.CodeConfig, msg: "the workdir of"},
		{name: "garbled user: anywhere", user: true, garbled: true, plant: "etc/ok.toml", flag: "etc/ok.toml", code: fserr.CodeConfig, msg: "cannot be read"},
		{name: "broken user: cwd", user: true, broken: true, plant: "cwd/evil.toml", flag: "./evil.toml", code: fserr.CodeConfig, msg: "current directory"},
		// FSBOX_CONFIG is the host's: not refused for lying in the user's workdir.
		{name: "host fixed in user workdir", user: true, plant: "w/evil.toml",
			env: map[string]string{"FSBOX_CONFIG": "BASE/w/evil.toml"}},
		{name: "host fixed in state dir", plant: "home/.local/state/fsbox/p.toml",
			env: map[string]string{"FSBOX_CONFIG": "BASE/home/.local/state/fsbox/p.toml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ls := newLoadSetup(t)
			b := ls.base
			for _, d := range []string{"w/out", "w2", "logs", "evilwork", "etc/own", "xstate"} {
				if err := os.MkdirAll(filepath.Join(b, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustSymlink(t, filepath.Join(b, "w"), filepath.Join(b, "wlink"))
			if err := os.Remove(filepath.Join(b, "w/out")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(b, "out"), filepath.Join(b, "w/out"))
			if err := os.MkdirAll(filepath.Join(b, "out"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(b, "out"), filepath.Join(b, "cwd/out"))
			mustSymlink(t, filepath.Join(b, "w/evil.toml"), filepath.Join(b, "etc/link.toml"))
			mustSymlink(t, "ok.toml", filepath.Join(b, "etc/oklink.toml"))
			env := fakeEnv{}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "BASE", b)
			}
			if c.user {
				work := filepath.Join(b, "w")
				if l, ok := c.env["USERWORK"]; ok {
					work = filepath.Join(b, l)
				}
				body := "workdir = \"" + work + "\"\n[audit]\nlog = \"" + b + "/logs/audit.jsonl\"\n"
				if c.broken {
					body += "denny = 1\n"
				}
				if c.garbled {
					body += "[[[\n"
				}
				mustWrite(t, filepath.Join(ls.home, ".config", "fsbox", "config.toml"), body)
			}
			cand := "workdir = \"" + b + "/evilwork\"\nread_roots = [\"/\"]\n[sandbox]\nlandlock = \"off\"\n"
			if strings.HasPrefix(c.plant, "etc/own/") {
				cand += "[audit]\nlog = \"" + b + "/etc/own/log.jsonl\"\n"
			}
			if c.plant != "" {
				mustWrite(t, filepath.Join(b, c.plant), cand)
			}
			flag := c.flag
			switch {
			case strings.HasPrefix(flag, "./"):
				flag = flag[2:]
			case flag != "":
				flag = filepath.Join(b, "") + "/" + flag
			}
			p, err := Load(Env{ConfigFlag: flag, ConfigSet: flag != "", Getenv: env.get, Cwd: ls.cwd, Home: ls.home})
			checkCode(t, err, c.code)
			if err != nil {
				if want := strings.ReplaceAll(c.msg, "BASE", b); !strings.Contains(AsCommandLine(err), want) {
					t.Errorf("message %q lacks %q", AsCommandLine(err), want)
				}
				return
			}
			if p.Source == "" || p.Workdir != filepath.Join(b, "evilwork") {
				t.Errorf("loaded %q with workdir %q, want the candidate", p.Source, p.Workdir)
			}
		})
	}
}

// TestLoadEmptyConfigFlag: an empty --config is usage, never "no flag"
// (which would fall back to the user's policy or the default).
func TestLoadEmptyConfigFlag(t *testing.T) {
	ls := newLoadSetup(t)
	cfg := filepath.Join(ls.cfgDir, "policy.toml")
	mustWrite(t, cfg, "workdir = \""+ls.work+"\"\n")
	for _, env := range []fakeEnv{{}, {"FSBOX_CONFIG": cfg}, {"FSBOX_CONFIG": ""}} {
		_, err := Load(Env{ConfigFlag: "", ConfigSet: true, Getenv: env.get, Cwd: ls.cwd, Home: ls.home})
		checkCode(t, err, fserr.CodeUsage)
	}
	// Absent (not set): discovery as before.
	p, err := Load(Env{Getenv: fakeEnv{"FSBOX_CONFIG": cfg}.get, Cwd: ls.cwd, Home: ls.home})
	checkCode(t, err, "")
	if p.Source != cfg {
		t.Errorf("Source %q, want %q", p.Source, cfg)
	}
}

func TestReach(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "out/sub"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, filepath.Join(base, "out", "sub"), filepath.Join(base, "a", "abs"))
	mustSymlink(t, "../../out/sub", filepath.Join(base, "a", "b", "rel"))
	mustSymlink(t, "loop", filepath.Join(base, "loop"))
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, err := filepath.Rel(base, p)
			if err != nil || strings.HasPrefix(r, "..") {
				continue // the temp dir's own ancestors
			}
			out = append(out, r)
		}
		return out
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{"a/b/f", []string{".", "a", "a/b", "a/b/f", "a/b/f"}},
		// An absolute link restarts at /: the base's ancestors (left out
		// here), the base, and on.
		{"a/abs/f", []string{".", "a", "a/abs", ".", "out", "out/sub", "out/sub/f", "out/sub/f"}},
		// A relative one continues from its directory; ".." after it
		// climbs from where the link led, as the kernel does.
		{"a/b/rel/../f", []string{".", "a", "a/b", "a/b/rel", "out", "out/sub", "out/f", "out/f"}},
		{"a/../missing/x", []string{".", "a", "missing", "missing/x", "missing/x"}},
	} {
		if got := rel(Reach(base + "/" + c.path)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Reach(%s) = %q, want %q", c.path, got, c.want)
		}
	}
	// A loop is followed 40 times, then taken as it is (opening it fails
	// anyway).
	if got := rel(Reach(filepath.Join(base, "loop", "x"))); len(got) != 44 || got[len(got)-1] != "loop/x" {
		t.Errorf("Reach(loop/x) = %q, want the base, 41 visits of loop, then loop/x twice", got)
	}
}

// ServePolicy: never the built-in default alone; directories make a
// policy of their own, or only narrow a policy file's roots.
func TestServePolicy(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, docs, other := filepath.Join(base, "work"), filepath.Join(base, "docs"), filepath.Join(base, "other")
	for _, d := range []string{work + "/sub", docs, other} {
		os.MkdirAll(d, 0o755)
	}
	mustWrite(t, filepath.Join(base, "file"), "x")
	os.Symlink(work, filepath.Join(base, "worklink"))
	builtin := DefaultPolicy(base)
	file := DefaultPolicy(work)
	file.ReadRoots, file.Source = []string{docs}, filepath.Join(base, "p.toml")
	// A policy with a write root: DIRs narrow it, and the served policy
	// keeps no write root it was not given (the first DIR is the one
	// writable root). Fails on the door's first cut: q := *p kept them.
	wr := DefaultPolicy(work)
	wr.WriteRoots, wr.Source = []string{other}, filepath.Join(base, "w.toml")
	for _, c := range []struct {
		name  string
		p     *Policy
		dirs  []string
		work  string   // "" = refused (config)
		reads []string // read roots wanted
	}{
		{"built-in alone", builtin, nil, "", nil},
		{"dirs make a policy", builtin, []string{filepath.Join(base, "worklink"), docs}, work, []string{docs}},
		{"not a directory", builtin, []string{filepath.Join(base, "file")}, "", nil},
		{"missing", builtin, []string{filepath.Join(base, "nope")}, "", nil},
		{"a file's policy as it is", file, nil, work, []string{docs}},
		{"narrowed", file, []string{work + "/sub", docs}, work + "/sub", []string{docs}},
		{"workdir outside the policy's", file, []string{other}, "", nil},
		{"read root outside the policy's roots", file, []string{work, other}, "", nil},
		{"narrowed to the workdir: no write root left", wr, []string{work}, work, nil},
		{"served from a write root", wr, []string{other, work}, other, []string{work}},
	} {
		q, err := ServePolicy(c.p, c.dirs)
		if c.work == "" {
			if err == nil || fserr.AsError(err).Code != fserr.CodeConfig {
				t.Errorf("%s: %v, want config", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		work, writes, reads := servedRoots(q)
		if len(c.dirs) > 0 && len(writes) > 0 {
			t.Errorf("%s: served with write roots %v: directories only narrow", c.name, writes)
		}
		if work != c.work || fmt.Sprint(reads) != fmt.Sprint(c.reads) {
			t.Errorf("%s: workdir %s, read roots %v; want %s, %v", c.name, work, reads, c.work, c.reads)
		}
		if c.p.Source != "" && (q.Workdir != c.p.Workdir || fmt.Sprint(q.WriteRoots) != fmt.Sprint(c.p.WriteRoots) || fmt.Sprint(q.ReadRoots) != fmt.Sprint(c.p.ReadRoots)) {
			t.Errorf("%s: the policy's roots became %s %v %v: directories bound a policy, they never replace its roots", c.name, q.Workdir, q.WriteRoots, q.ReadRoots)
		}
	}
}

// TestServePolicyWritable: the reference profile makes every directory
// writable: without a policy the first is the workdir and the rest write
// roots (one inside a directory listed before it is writable with it;
// one holding a directory listed before it is config); with a policy
// each must lie in a writable root of it. (That each served policy opens
// a sandbox is pkg/sandbox's TestServePolicyWritableOpens.)
func TestServePolicyWritable(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, docs, other := filepath.Join(base, "work"), filepath.Join(base, "docs"), filepath.Join(base, "other")
	for _, d := range []string{work + "/sub", docs, other} {
		os.MkdirAll(d, 0o755)
	}
	builtin := DefaultPolicy(base)
	file := DefaultPolicy(work)
	file.ReadRoots, file.WriteRoots, file.Source = []string{docs}, []string{other}, filepath.Join(base, "p.toml")
	for _, c := range []struct {
		name   string
		p      *Policy
		dirs   []string
		work   string   // "" = refused (config)
		writes []string // write roots wanted
	}{
		{"one directory", builtin, []string{work}, work, nil},
		{"two directories, both writable", builtin, []string{work, docs}, work, []string{docs}},
		{"three", builtin, []string{work, docs, other}, work, []string{docs, other}},
		{"one inside the first: writable with it", builtin, []string{work, work + "/sub", docs}, work, []string{docs}},
		{"one holding the first: config", builtin, []string{work + "/sub", work}, "", nil},
		{"a policy: both in writable roots", file, []string{work + "/sub", other}, work + "/sub", []string{other}},
		{"a policy: a read root is not writable", file, []string{work, docs}, "", nil},
		{"a policy: outside every root", file, []string{work, base}, "", nil},
	} {
		q, err := ServePolicyWritable(c.p, c.dirs, true)
		if c.work == "" {
			if err == nil || fserr.AsError(err).Code != fserr.CodeConfig {
				t.Errorf("%s: %v, want config", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if work, writes, reads := servedRoots(q); work != c.work || fmt.Sprint(writes) != fmt.Sprint(c.writes) || len(reads) > 0 {
			t.Errorf("%s: workdir %s, write roots %v, read roots %v; want %s, %v, none", c.name, work, writes, reads, c.work, c.writes)
		}
	}
}

// TestServeDirsWrite: fsbox mcp --write DIR (native) serves DIR as a
// write root while the other directories stay read roots; with a policy
// a writable DIR must be writable under it.
func TestServeDirsWrite(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, docs, other := filepath.Join(base, "work"), filepath.Join(base, "docs"), filepath.Join(base, "other")
	for _, d := range []string{work, docs, other} {
		os.MkdirAll(d, 0o755)
	}
	third := func(i int) bool { return i == 2 }
	q, err := ServeDirs(DefaultPolicy(base), []string{work, docs, other}, third)
	if err != nil || fmt.Sprint(q.WriteRoots) != fmt.Sprint([]string{other}) || fmt.Sprint(q.ReadRoots) != fmt.Sprint([]string{docs}) {
		t.Fatalf("work, docs, --write other: %v, write roots %v, read roots %v", err, q.WriteRoots, q.ReadRoots)
	}
	file := DefaultPolicy(work)
	file.ReadRoots, file.Source = []string{docs, other}, filepath.Join(base, "p.toml")
	if _, err := ServeDirs(file, []string{work, docs, other}, third); err == nil || fserr.AsError(err).Code != fserr.CodeConfig {
		t.Errorf("--write on a read root of the policy: %v, want config", err)
	}
	if q, err := ServeDirs(file, []string{work, docs, other}, nil); err != nil || len(q.Serve.WriteRoots) != 0 || len(q.Serve.ReadRoots) != 2 {
		t.Errorf("no --write under a policy: %v, %+v", err, q)
	}
}

// servedRoots are the roots a served policy opens: the directories
// served (Policy.Serve), or the policy's own.
func servedRoots(q *Policy) (work string, writes, reads []string) {
	if q.Serve != nil {
		return q.Serve.Workdir, q.Serve.WriteRoots, q.Serve.ReadRoots
	}
	return q.Workdir, q.WriteRoots, q.ReadRoots
}

// ---- helpers (as pkg/sandbox's tests spell them) ----

type fakeEnv map[string]string

func (e fakeEnv) get(k string) (string, bool) { v, ok := e[k]; return v, ok }

// loadSetup makes a workdir, a read root, a cwd and a config directory,
// all distinct, below one temp dir.
type loadSetup struct {
	base, work, ro, cwd, cfgDir, home string
}

func newLoadSetup(t *testing.T) *loadSetup {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ls := &loadSetup{base: base, work: filepath.Join(base, "work"), ro: filepath.Join(base, "ro"),
		cwd: filepath.Join(base, "cwd"), cfgDir: filepath.Join(base, "etc"), home: filepath.Join(base, "home")}
	for _, d := range []string{ls.work, ls.ro, ls.cwd, ls.cfgDir, ls.home, filepath.Join(base, "tenants", "alice")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ls
}

func mustWrite(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// checkCode asserts err is an *fserr.Error with code, or (code "") that
// there is no error.
func checkCode(t *testing.T, err error, code fserr.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("succeeded, want %s", code)
	}
	var e *fserr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not an *fserr.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("got %s (%v), want %s", e.Code, e, code)
	}
}
