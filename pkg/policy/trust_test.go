//go:build unix

package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// trustBase is one temp directory holding a home (home/.config/fsbox for
// the discovered policy), the current directory cwd, the user policy's
// workdir w and write root w2, an outside directory out and a directory
// etc where a policy may lie.
type trustBase struct {
	t    *testing.T
	base string
	env  map[string]string
}

func newTrustBase(t *testing.T) *trustBase {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.config/fsbox", "cwd", "w", "w2/sub", "out", "etc", "evilwork", "xcfg/fsbox", "journals"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trustWrite(t, filepath.Join(base, "out", "s.txt"), "OUTSIDE-SECRET\n")
	return &trustBase{t: t, base: base, env: map[string]string{}}
}

func (b *trustBase) path(rel string) string { return filepath.Join(b.base, rel) }

// load runs Load as the CLI does from cwd, with --config flag ("" for
// none).
func (b *trustBase) load(flag string) (*policy.Policy, error) {
	getenv := func(k string) (string, bool) { v, ok := b.env[k]; return v, ok }
	return policy.Load(policy.Env{ConfigFlag: flag, ConfigSet: flag != "", Getenv: getenv, Cwd: b.path("cwd"), Home: b.path("home")})
}

// evil is the planted policy: it opens everything.
const evil = "workdir = \"BASE/evilwork\"\nread_roots = [\"/\"]\n[sandbox]\nlandlock = \"off\"\n"

func (b *trustBase) plant(rel, body string) string {
	p := b.path(rel)
	trustWrite(b.t, p, strings.ReplaceAll(body, "BASE", b.base))
	return p
}

func trustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks a config error whose message holds each of want
// (BASE stands for the temp directory).
func (b *trustBase) wantRefused(p *policy.Policy, err error, want ...string) {
	b.t.Helper()
	var e *fserr.Error
	if !errors.As(err, &e) || e.Code != fserr.CodeConfig {
		if p != nil {
			b.t.Fatalf("loaded %s (workdir %s, read roots %v), want a config error", p.Source, p.Workdir, p.ReadRoots)
		}
		b.t.Fatalf("error %v, want a config error", err)
	}
	for _, w := range want {
		if w = strings.ReplaceAll(w, "BASE", b.base); !strings.Contains(policy.AsCommandLine(e), w) {
			b.t.Errorf("message %q lacks %q", policy.AsCommandLine(e), w)
		}
	}
}

// TestTrustConfigInFallbackWriteRoot is the red team's finding 3 of
// issue 39: under a discovered policy with write_roots = [W2], fsbox
// may write W2/evil.toml, and --config W2/evil.toml then opened every
// file (by name, through a symlink to it, and as fsbox mcp --config,
// which loads the same way). Every writable root of the policy that
// would otherwise apply is a place a policy is never loaded from, as are
// its journal directory and the candidate's own.
// Fails on c24bc27: the candidate loaded, with read_roots = ["/"].
func TestTrustConfigInFallbackWriteRoot(t *testing.T) {
	for _, c := range []struct {
		name    string
		xdg     bool   // the user's policy in $XDG_CONFIG_HOME/fsbox, not ~/.config/fsbox
		user    string // the user's policy ("" for none)
		plant   string // where the candidate lies
		flag    string // --config, relative to the base
		symlink string // a symlink to the candidate made at flag
		want    []string
	}{
		{name: "user write root", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n", plant: "w2/evil.toml", flag: "w2/evil.toml",
			want: []string{"lies inside BASE/w2 (a write root of BASE/home/.config/fsbox/config.toml, the policy that applies without --config)"}},
		{name: "user write root, XDG", xdg: true, user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n", plant: "w2/evil.toml", flag: "w2/evil.toml",
			want: []string{"lies inside BASE/w2 (a write root of BASE/xcfg/fsbox/config.toml"}},
		{name: "user write root, deep", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n", plant: "w2/sub/evil.toml", flag: "w2/sub/evil.toml",
			want: []string{"(a write root of"}},
		{name: "user write root through a symlink outside", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n", plant: "w2/evil.toml",
			flag: "etc/link.toml", symlink: "w2/evil.toml", want: []string{"lies inside BASE/w2 (a write root of"}},
		{name: "user write root, second of two", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/journals\", \"BASE/w2\"]\n", plant: "w2/evil.toml", flag: "w2/evil.toml",
			want: []string{"(a write root of"}},
		// A user policy that no longer loads (a read root renamed away)
		// still protects its write roots.
		{name: "broken user write root", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\nread_roots = [\"BASE/gone\"]\n", plant: "w2/evil.toml", flag: "w2/evil.toml",
			want: []string{"(a write root of"}},
		{name: "user journal dir", user: "workdir = \"BASE/w\"\n[journal]\ndir = \"BASE/journals\"\n", plant: "journals/evil.toml", flag: "journals/evil.toml",
			want: []string{"lies inside BASE/journals (the journal directory of BASE/home/.config/fsbox/config.toml)"}},
		{name: "own journal dir", plant: "journals/evil.toml", flag: "journals/evil.toml",
			want: []string{"lies inside BASE/journals (its own journal directory)"}},
		// Outside every such place: loaded.
		{name: "beside the user's roots", user: "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n", plant: "etc/ok.toml", flag: "etc/ok.toml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTrustBase(t)
			body := evil
			if c.name == "own journal dir" {
				body += "[journal]\ndir = \"BASE/journals\"\n"
			}
			b.plant(c.plant, body)
			if c.user != "" {
				dir := "home/.config/fsbox"
				if c.xdg {
					dir = "xcfg/fsbox"
					b.env["XDG_CONFIG_HOME"] = b.path("xcfg")
				}
				b.plant(dir+"/config.toml", c.user)
			}
			if c.symlink != "" {
				if err := os.Symlink(b.path(c.symlink), b.path(c.flag)); err != nil {
					t.Fatal(err)
				}
			}
			p, err := b.load(b.path(c.flag))
			if c.want == nil {
				if err != nil || p.Workdir != b.path("evilwork") {
					t.Fatalf("err %v, want the candidate loaded", err)
				}
				return
			}
			b.wantRefused(p, err, c.want...)
		})
	}
}

// TestTrustConfigInOwnRoots: a policy file inside one of its own
// writable roots is refused by Load, whoever names it (FSBOX_CONFIG
// too), by every place its name passes through: a symlinked directory
// there could be re-pointed at a file the sandboxed side wrote.
// Fails on c24bc27: Load took all three (New refused the first two by
// their canonical path, none through the symlinked directory).
func TestTrustConfigInOwnRoots(t *testing.T) {
	for _, c := range []struct{ name, body, plant, name2, want string }{
		{"own workdir", "workdir = \"BASE/w\"\n", "w/p.toml", "w/p.toml", "lies inside its own workdir BASE/w,"},
		{"own write root", "workdir = \"BASE/evilwork\"\nwrite_roots = [\"BASE/w2\"]\n", "w2/sub/p.toml", "w2/sub/p.toml", "lies inside its own write root BASE/w2,"},
		{"through a symlinked directory in its write root", "workdir = \"BASE/evilwork\"\nwrite_roots = [\"BASE/w2\"]\n", "etc/p.toml", "w2/lnk/p.toml", "lies inside its own write root BASE/w2,"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTrustBase(t)
			b.plant(c.plant, c.body)
			if c.plant != c.name2 {
				if err := os.Symlink(b.path("etc"), b.path("w2/lnk")); err != nil {
					t.Fatal(err)
				}
			}
			b.env["FSBOX_CONFIG"] = b.path(c.name2)
			p, err := b.load("")
			b.wantRefused(p, err, c.want)
		})
	}
}

// TestTrustHardLinkedPolicy: a policy file with a second name (a hard
// link, which neither its path nor the identities of the directories
// above it show) is refused, however it is chosen.
// Fails on c24bc27: all three loaded.
func TestTrustHardLinkedPolicy(t *testing.T) {
	for _, how := range []string{"--config", "FSBOX_CONFIG", "discovered"} {
		t.Run(how, func(t *testing.T) {
			b := newTrustBase(t)
			file := b.plant("etc/p.toml", "workdir = \"BASE/evilwork\"\n")
			flag := ""
			switch how {
			case "--config":
				flag = file
			case "FSBOX_CONFIG":
				b.env["FSBOX_CONFIG"] = file
			case "discovered":
				file = b.plant("home/.config/fsbox/config.toml", "workdir = \"BASE/evilwork\"\n")
			}
			if err := os.Link(file, b.path("w2/second.toml")); err != nil {
				t.Fatal(err)
			}
			p, err := b.load(flag)
			b.wantRefused(p, err, "has 2 hard links", "a policy file must have exactly one")
			// One name again: loaded.
			if err := os.Remove(b.path("w2/second.toml")); err != nil {
				t.Fatal(err)
			}
			if p, err = b.load(flag); err != nil || p.Workdir != b.path("evilwork") {
				t.Fatalf("one name: err %v", err)
			}
		})
	}
}
