//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/fsbox/fsbox/pkg/fserr"
)

// TestStrictDecoding: a policy file is decoded strictly: an unknown key,
// a value of the wrong type or a syntax error is config, naming the file
// and the line.
func TestStrictDecoding(t *testing.T) {
	for _, c := range []struct {
		name, body string
		user       bool
		msg        []string
	}{
		{"unknown top-level key", "workdir = \"$WORK\"\nwork_dir = \"/x\"\n", false, []string{`line 2: unknown key "work_dir"`}},
		{"after a blank line", "workdir = \"$WORK\"\n\ndenny = 1\n", false, []string{`line 3: unknown key "denny"`}},
		{"quoted", "workdir = \"$WORK\"\n\"denny\" = 1\n", false, []string{`line 2: unknown key "denny"`}},
		{"in a table, indented", "workdir = \"$WORK\"\n[paths]\ndeny = []\n  denyy = [\"x\"]\n", false, []string{`line 4: unknown key "paths.denyy"`}},
		{"a table's key at the top", "workdir = \"$WORK\"\nmax_results = 5\n", false, []string{`line 2: unknown key "max_results"`}},
		{"unknown table", "workdir = \"$WORK\"\n\n[foo]\nx = 1\n", false, []string{`line 3: unknown key "foo"`}},
		{"unknown subtable", "workdir = \"$WORK\"\n[limits.sub]\nx = 1\n", false, []string{`line 2: unknown key "limits.sub"`}},
		{"dotted key", "workdir = \"$WORK\"\npaths.denyy = [\"x\"]\n", false, []string{`unknown key "paths.denyy"`}},
		{"the discovered user config too", "preset = \"agent\"\ndenny = 1\n", true, []string{`line 2: unknown key "denny"`, "config.toml"}},
		{"wrong type", "workdir = \"$WORK\"\n[limits]\nmax_read_bytes = \"big\"\n", false,
			[]string{"line 3", "limits.max_read_bytes", "incompatible types"}},
		{"syntax", "workdir = \n", false, []string{"line 1, column 11:"}},
		{"unclosed table", "workdir = \"$WORK\"\n[paths\n", false, []string{"line ", ", column 7: ", "to end table name"}},
		{"max_results 0 in a file", "workdir = \"$WORK\"\n[limits]\nmax_results = 0\n", false,
			[]string{"line 3: [limits] max_results must be a positive number, got 0 (leave it out for no cap)"}},
		{"a Validate refusal names its line", "workdir = \"$WORK\"\n[journal]\nmax_bytes = 10\n", false,
			[]string{"line 3: [journal] max_bytes must be at least 65536"}},
		{"host policy without workdir", "[limits]\nmax_results = 5\n", false, []string{"workdir is not set"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadBody(t, c.body, c.user)
			checkCode(t, err, fserr.CodeConfig)
			msg := fserr.AsError(err).Msg
			for _, m := range append(c.msg, ".toml: ") {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q lacks %q", msg, m)
				}
			}
		})
	}
	// What the file sets, it gets.
	p, err := loadBody(t, "workdir = \"$WORK\"\n\"deny_hardlinks\" = true\n[limits]\nmax_results = 7\n[paths]\ndeny = [\"x/\"]\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Limits.MaxResults != 7 || !p.Paths.DenyHardlinks || len(p.Paths.Deny) != 1 || p.Paths.Deny[0] != "x/" {
		t.Errorf("limits %+v, paths %+v", p.Limits, p.Paths)
	}
}

// TestUnknownCommand: Env.Known refuses a [commands] name it does not
// know, naming its line; a known one is kept.
func TestUnknownCommand(t *testing.T) {
	ls := newLoadSetup(t)
	file := filepath.Join(ls.cfgDir, "p.toml")
	mustWrite(t, file, "workdir = \""+ls.work+"\"\n[commands]\nls = true\nrm = false\n")
	env := Env{Getenv: fakeEnv{"FSBOX_CONFIG": file}.get, Cwd: ls.cwd, Home: ls.home}
	env.Known = func(name string) bool { return name == "ls" || name == "rm" }
	p, err := Load(env)
	if err != nil || !p.Commands["ls"] || p.Commands["rm"] || len(p.Commands) != 2 {
		t.Fatalf("known commands: %v, %v", err, p)
	}
	mustWrite(t, file, "workdir = \""+ls.work+"\"\n[commands]\nls = true\nnope = false\n")
	env.Known = func(name string) bool { return name == "ls" }
	_, err = Load(env)
	checkCode(t, err, fserr.CodeConfig)
	if want := `line 4: [commands]: unknown command "nope"`; !strings.Contains(err.Error(), want) {
		t.Errorf("%v lacks %q", err, want)
	}
	// Without Known, any name is kept (the caller checks).
	env.Known = nil
	if p, err := Load(env); err != nil || len(p.Commands) != 2 {
		t.Errorf("without Known: %v, %v", err, p)
	}
}

func TestKeyLine(t *testing.T) {
	data := "workdir = \"/w\"\n" + // 1
		"# [paths] in a comment\n" + // 2
		"[paths]\n" + // 3
		"deny = [\"x\"]\n" + // 4
		"  'allow' = []\n" + // 5
		"[limits] # trailing comment\n" + // 6
		"max_results = 5\n" + // 7
		"max_results_x = 5\n" + // 8
		"[ journal ]\n" + // 9
		"dir = \"/j\"\n" // 10
	for _, c := range []struct {
		key  toml.Key
		want int
	}{
		{toml.Key{"workdir"}, 1},
		{toml.Key{"paths"}, 3},
		{toml.Key{"paths", "deny"}, 4},
		{toml.Key{"paths", "allow"}, 5},
		{toml.Key{"limits"}, 6},
		{toml.Key{"limits", "max_results"}, 7},
		{toml.Key{"limits", "max_results_x"}, 8},
		{toml.Key{"journal"}, 9},
		{toml.Key{"journal", "dir"}, 10},
		{toml.Key{"journal", "max_bytes"}, 0},
		{toml.Key{"deny"}, 0}, // the deny on line 4 is [paths]'s
		{toml.Key{"max_results"}, 0},
		{toml.Key{"sandbox"}, 0},
		{toml.Key{}, 0},
	} {
		if got := keyLine(data, c.key); got != c.want {
			t.Errorf("keyLine(%q) = %d, want %d", c.key.String(), got, c.want)
		}
	}
}

func TestStateDir(t *testing.T) {
	for _, c := range []struct {
		name string
		env  fakeEnv // nil: no Getenv
		home string
		want string
	}{
		{"XDG_STATE_HOME", fakeEnv{"XDG_STATE_HOME": "/xs"}, "/h", "/xs/fsbox"},
		{"XDG_STATE_HOME without a home", fakeEnv{"XDG_STATE_HOME": "/xs"}, "", "/xs/fsbox"},
		{"relative XDG_STATE_HOME", fakeEnv{"XDG_STATE_HOME": "xs"}, "/h", "/h/.local/state/fsbox"},
		{"empty XDG_STATE_HOME", fakeEnv{"XDG_STATE_HOME": ""}, "/h", "/h/.local/state/fsbox"},
		{"unset", fakeEnv{}, "/h", "/h/.local/state/fsbox"},
		{"HOME in the env is not Home", fakeEnv{"HOME": "/other"}, "/h", "/h/.local/state/fsbox"},
		{"unset, no home", fakeEnv{}, "", ""},
		{"relative, no home", fakeEnv{"XDG_STATE_HOME": "xs"}, "", ""},
		{"no Getenv", nil, "/h", "/h/.local/state/fsbox"},
		{"no Getenv, no home", nil, "", ""},
	} {
		env := Env{Home: c.home}
		if c.env != nil {
			env.Getenv = c.env.get
		}
		if got := StateDir(env); got != c.want {
			t.Errorf("%s: StateDir = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestDiscovered: the user's policy is $XDG_CONFIG_HOME/fsbox/config.toml
// when XDG_CONFIG_HOME is absolute (and nothing else then), else
// ~/.config/fsbox/config.toml, from Env only.
func TestDiscovered(t *testing.T) {
	for _, c := range []struct {
		name          string
		xdg           string // XDG_CONFIG_HOME: "BASE" is the temp dir; "-" unset
		noHome        bool
		xdgCfg, hmCfg bool   // which config files exist
		want          string // "xdg", "home" or ""
	}{
		{"XDG", "BASE/xdg", false, true, true, "xdg"},
		{"XDG without a home", "BASE/xdg", true, true, false, "xdg"},
		{"XDG without its config: no fallback", "BASE/xdg", false, false, true, ""},
		{"relative XDG is ignored", "xdg", false, true, true, "home"},
		{"empty XDG", "", false, true, true, "home"},
		{"unset XDG", "-", false, true, true, "home"},
		{"unset XDG, no config", "-", false, true, false, ""},
		{"no XDG, no home", "-", true, true, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			xdgFile := filepath.Join(base, "xdg", "fsbox", "config.toml")
			homeFile := filepath.Join(base, "home", ".config", "fsbox", "config.toml")
			if c.xdgCfg {
				mustWrite(t, xdgFile, "")
			}
			if c.hmCfg {
				mustWrite(t, homeFile, "")
			}
			env := Env{Getenv: fakeEnv{"HOME": filepath.Join(base, "home")}.get, Home: filepath.Join(base, "home")}
			if c.xdg != "-" {
				env.Getenv = fakeEnv{"XDG_CONFIG_HOME": strings.ReplaceAll(c.xdg, "BASE", base)}.get
			}
			if c.noHome {
				env.Home = ""
			}
			want := map[string]string{"xdg": xdgFile, "home": homeFile, "": ""}[c.want]
			if got := discovered(env); got != want {
				t.Errorf("discovered = %q, want %q", got, want)
			}
		})
	}
}

// TestLoadDiscovers: Load without FSBOX_CONFIG or --config takes the
// discovered user config (its workdir the current directory when it
// leaves it out), else the built-in default for the current directory.
func TestLoadDiscovers(t *testing.T) {
	ls := newLoadSetup(t)
	xdg := filepath.Join(ls.base, "xdg")
	env := Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg, "XDG_STATE_HOME": filepath.Join(ls.base, "state")}.get, Cwd: ls.cwd, Home: ls.home}
	p, err := Load(env)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultPolicy(ls.cwd)
	want.Journal.State = filepath.Join(ls.base, "state", "fsbox")
	if p.Source != "" || p.Workdir != ls.cwd || p.Journal != want.Journal || p.Limits != want.Limits || p.CwdWorkdir {
		t.Errorf("no config: %+v, want the built-in default for %s", p, ls.cwd)
	}
	cfg := filepath.Join(xdg, "fsbox", "config.toml")
	mustWrite(t, cfg, "preset = \"agent\"\n")
	if p, err = Load(env); err != nil {
		t.Fatal(err)
	}
	if p.Source != cfg || p.Workdir != ls.cwd || !p.CwdWorkdir || p.Preset != PresetAgent || p.Journal.State != want.Journal.State ||
		p.Limits.MaxResults != AgentMaxResults {
		t.Errorf("user config: source %q, workdir %q (cwd %v), preset %q, state %q, max_results %d",
			p.Source, p.Workdir, p.CwdWorkdir, p.Preset, p.Journal.State, p.Limits.MaxResults)
	}
	// The user config leaves [paths] write_deny out: the built-in's.
	if len(p.Paths.WriteDeny) != 1 || p.Paths.WriteDeny[0] != "**/.git/**" {
		t.Errorf("user config's write_deny %q", p.Paths.WriteDeny)
	}
	// The process's environment is not read: XDG_CONFIG_HOME set there
	// changes nothing.
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(ls.base, "elsewhere"))
	if p, err = Load(env); err != nil || p.Source != cfg {
		t.Errorf("with the process's XDG_CONFIG_HOME elsewhere: %v, %v", err, p)
	}
	// Gone again: the built-in default.
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if p, err = Load(env); err != nil || p.Source != "" || p.Workdir != ls.cwd || p.CwdWorkdir {
		t.Errorf("config removed: %v, %+v", err, p)
	}
}
