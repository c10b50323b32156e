//go:build unix

package policy

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// validBase is a policy Validate accepts on every platform: the built-in
// default with [sandbox] require lowered to nothing (what the platform
// gives is TestDefaultPolicy's and TestCheckRequire's).
func validBase() *Policy {
	p := DefaultPolicy("/w")
	p.Sandbox.Require = []string{}
	return p
}

// TestValidate: one case per refusal Validate makes, each from a policy
// it accepts with one thing changed, and the values next to each refusal
// that it accepts.
func TestValidate(t *testing.T) {
	type vcase struct {
		name string
		mod  func(p *Policy)
		want []string // parts of the error; nil: accepted
	}
	cases := []vcase{
		{"the base", func(p *Policy) {}, nil},
		// checkNamed.
		{"unknown preset", func(p *Policy) { p.Preset = "agnet" }, []string{`preset must be "agent" or left out, got "agnet"`}},
		{"preset's case", func(p *Policy) { p.Preset = "Agent" }, []string{`got "Agent"`}},
		{"agent preset", func(p *Policy) { p.Preset = PresetAgent }, nil},
		{"unknown rule set", func(p *Policy) { p.DefaultsOff = []string{"secret"} },
			[]string{`defaults_off: unknown rule set "secret"`, `(the built-in rule sets are "agent_config", "secrets")`}},
		{"a known rule set, then an unknown one", func(p *Policy) { p.DefaultsOff = []string{"secrets", ""} }, []string{`unknown rule set ""`}},
		{"known rule sets", func(p *Policy) { p.DefaultsOff = []string{"secrets", "agent_config"} }, nil},
		// [journal].
		{"journal max_bytes below the least", func(p *Policy) { p.Journal.MaxBytes = MinJournalBytes - 1 },
			[]string{"[journal] max_bytes must be at least 65536", "got 65535"}},
		{"journal max_bytes 0", func(p *Policy) { p.Journal.MaxBytes = 0 }, []string{"[journal] max_bytes must be at least 65536", "got 0"}},
		{"journal max_bytes negative", func(p *Policy) { p.Journal.MaxBytes = -1 }, []string{"[journal] max_bytes", "got -1"}},
		{"journal max_bytes the least", func(p *Policy) { p.Journal.MaxBytes = MinJournalBytes }, nil},
		{"journal off still bounded", func(p *Policy) { p.Journal.Enabled, p.Journal.MaxBytes = false, 1 }, []string{"[journal] max_bytes"}},
		{"journal dir relative", func(p *Policy) { p.Journal.Dir = "state/j" }, []string{`[journal] dir must be an absolute path or an s3:// URL, got "state/j"`}},
		{"journal dir ~ (unexpanded)", func(p *Policy) { p.Journal.Dir = "~/j" }, []string{`[journal] dir must be an absolute path or an s3:// URL, got "~/j"`}},
		{"journal dir absolute", func(p *Policy) { p.Journal.Dir = "/var/j" }, nil},
		// [sandbox] landlock.
		{"landlock empty", func(p *Policy) { p.Sandbox.Landlock = "" },
			[]string{`[sandbox] landlock must be "best-effort", "required" or "off", got ""`}},
		{"landlock unknown", func(p *Policy) { p.Sandbox.Landlock = "on" }, []string{`[sandbox] landlock must be`, `got "on"`}},
		{"landlock's case", func(p *Policy) { p.Sandbox.Landlock = "Required" }, []string{`got "Required"`}},
		{"landlock off", func(p *Policy) { p.Sandbox.Landlock = "off" }, nil},
		{"landlock required", func(p *Policy) { p.Sandbox.Landlock = "required" }, nil},
		// [sandbox] require (checkRequire).
		{"require unknown", func(p *Policy) { p.Sandbox.Require = []string{"landlock"} },
			[]string{`[sandbox] require: unknown guarantee "landlock"`, "(known: descriptor_path_check, dir_lock, no_follow, no_replace_rename)"}},
		// [paths] globs: invalid.
		{"deny empty glob", func(p *Policy) { p.Paths.Deny = []string{""} }, []string{`[paths] deny: invalid glob ""`}},
		{"deny glob of only slashes", func(p *Policy) { p.Paths.Deny = []string{"/"} }, []string{`[paths] deny: invalid glob "/"`}},
		{"deny glob of only dots", func(p *Policy) { p.Paths.Deny = []string{"./."} }, []string{`[paths] deny: invalid glob "./."`}},
		{"deny unclosed class", func(p *Policy) { p.Paths.Deny = []string{"a["} }, []string{`[paths] deny: invalid glob "a["`}},
		{"allow unclosed brace", func(p *Policy) { p.Paths.Allow = []string{"**/{a,b"} }, []string{`[paths] allow: invalid glob "**/{a,b"`}},
		{"write_deny trailing escape", func(p *Policy) { p.Paths.WriteDeny = []string{`a\`} }, []string{`[paths] write_deny: invalid glob "a\\"`}},
		{"the second glob", func(p *Policy) { p.Paths.Deny = []string{"ok/**", "["} }, []string{`[paths] deny: invalid glob "["`}},
		// [paths] globs: '..'.
		{"deny ..", func(p *Policy) { p.Paths.Deny = []string{".."} }, []string{`[paths] deny: glob ".." holds '..'`, "could never match"}},
		{"deny /.. (anchored)", func(p *Policy) { p.Paths.Deny = []string{"/.."} }, []string{`[paths] deny: glob "/.." holds '..'`}},
		{"allow leading ..", func(p *Policy) { p.Paths.Allow = []string{"../x"} }, []string{`[paths] allow: glob "../x" holds '..'`}},
		{"allow ./.. (normalized to a leading ..)", func(p *Policy) { p.Paths.Allow = []string{"./../x"} }, []string{`[paths] allow: glob "./../x" holds '..'`}},
		{"write_deny trailing ..", func(p *Policy) { p.Paths.WriteDeny = []string{"x/.."} }, []string{`[paths] write_deny: glob "x/.." holds '..'`}},
		{"write_deny trailing ../", func(p *Policy) { p.Paths.WriteDeny = []string{"x/../"} }, []string{`[paths] write_deny: glob "x/../" holds '..'`}},
		{"deny inner ..", func(p *Policy) { p.Paths.Deny = []string{"a/../b"} }, []string{`[paths] deny: glob "a/../b" holds '..'`}},
		// Dots inside a component are no '..' component.
		{"dots inside names", func(p *Policy) { p.Paths.Deny = []string{"..x", "x..", "a/..b/c", "a/b../c", "**/.env.*"} }, nil},
		{"gitignore-style globs", func(p *Policy) {
			p.Paths.Deny = []string{"secrets/", "/vault/**", "./k//*.pem"}
			p.Paths.Allow = []string{"**/*.md"}
			p.Paths.WriteDeny = []string{"**/.git/**", "{a,b}/[xy]?"}
		}, nil},
		// [paths] regular expressions.
		{"deny_regex invalid", func(p *Policy) { p.Paths.DenyRegex = []string{`(^|/)\.ssh$`, "("} },
			[]string{`[paths] deny_regex: invalid regular expression "("`, "missing closing )"}},
		{"allow_regex invalid", func(p *Policy) { p.Paths.AllowRegex = []string{"[a"} },
			[]string{`[paths] allow_regex: invalid regular expression "[a"`, "missing closing ]"}},
		{"regexes valid", func(p *Policy) { p.Paths.DenyRegex = []string{`\.pem$`}; p.Paths.AllowRegex = []string{`(?i)^docs/`} }, nil},
	}
	// [limits]: every field by its key, 0 and -1 refused, 1 accepted;
	// max_results is checked as Items (0 and below are no cap, refused
	// only in a file: TestStrictDecoding).
	lt := reflect.TypeOf(Limits{})
	for i := 0; i < lt.NumField(); i++ {
		key := lt.Field(i).Tag.Get("toml")
		for _, v := range []int64{0, -1, 1} {
			var want []string
			if v <= 0 && key != "max_results" {
				want = []string{fmt.Sprintf("[limits] %s must be a positive number, got %d", key, v)}
			}
			cases = append(cases, vcase{fmt.Sprintf("limits %s = %d", key, v), func(p *Policy) {
				reflect.ValueOf(&p.Limits).Elem().Field(i).SetInt(v)
			}, want})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validBase()
			c.mod(p)
			err := p.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error with %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if lt.NumField() != 7 {
		t.Errorf("Limits has %d fields; Validate and Get know 7", lt.NumField())
	}
}

func TestExpandRoot(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "beta", "EMPTY": "", "SLASH": "a/b", "DOTS": "a..b", "DOT": ".",
		"TILDE": "~x", "NUL": "a\x00b"}
	getenv := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, c := range []struct {
		in, home string
		want     string // the path, or a part of the error
		err      bool
	}{
		{"/data/work", "/home/u", "/data/work", false},
		{"/data//work/./x/../y/", "/home/u", "/data/work/y", false},
		{"~", "/home/u", "/home/u", false},
		{"~/", "/home/u", "/home/u", false},
		{"~/x", "/home/u", "/home/u/x", false},
		{"~/x/../../y", "/home/u", "/home/y", false},
		{"~", "", `"~" needs a home directory and $HOME is unset`, true},
		{"~/x", "", `"~/x" needs a home directory`, true},
		{"~user/x", "/home/u", `"~user/x" is not an absolute path (write it absolute, or start it with ~/)`, true},
		{"/srv/$A", "/home/u", "/srv/alpha", false},
		{"/srv/${A}/x", "/home/u", "/srv/alpha/x", false},
		{"/srv/${A}-$B", "/home/u", "/srv/alpha-beta", false},
		{"~/$A", "/home/u", "/home/u/alpha", false},
		{"$A", "/home/u", `"alpha" is not an absolute path`, true},
		{"/srv/$UNSET", "/home/u", "environment variable UNSET is unset or empty", true},
		{"/srv/${UNSET}/x", "/home/u", "environment variable UNSET is unset or empty", true},
		{"/srv/$EMPTY", "/home/u", "environment variable EMPTY is unset or empty", true},
		{"/srv/$SLASH", "/home/u", `environment variable SLASH holds "a/b": a value may not hold '/' or '..', start with '~', or be '.'`, true},
		{"/srv/$DOTS", "/home/u", `environment variable DOTS holds "a..b"`, true},
		{"/srv/$DOT", "/home/u", `environment variable DOT holds "."`, true},
		{"$TILDE/x", "/home/u", `environment variable TILDE holds "~x"`, true},
		{"/srv/$NUL", "/home/u", `environment variable NUL holds "a\x00b"`, true},
		{"work", "/home/u", `"work" is not an absolute path`, true},
		{"./work", "/home/u", `"./work" is not an absolute path`, true},
		{"", "/home/u", `"" is not an absolute path`, true},
	} {
		got, err := ExpandRoot(c.in, c.home, getenv)
		switch {
		case c.err && err == nil:
			t.Errorf("ExpandRoot(%q, %q) = %q, want an error with %q", c.in, c.home, got, c.want)
		case c.err && !strings.Contains(err.Error(), c.want):
			t.Errorf("ExpandRoot(%q, %q): %v, want an error with %q", c.in, c.home, err, c.want)
		case c.err && got != "":
			t.Errorf("ExpandRoot(%q, %q) = %q with an error, want \"\"", c.in, c.home, got)
		case !c.err && (err != nil || got != c.want):
			t.Errorf("ExpandRoot(%q, %q) = %q, %v; want %q", c.in, c.home, got, err, c.want)
		}
	}
}

func TestNormalizeGlob(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"secrets", "secrets"},
		{"secrets/", "secrets"},
		{"/secrets/", "secrets"},
		{"secrets//k", "secrets/k"},
		{"secrets/./k", "secrets/k"},
		{"./a/b", "a/b"},
		{"//a///b//", "a/b"},
		{"**/.git/**", "**/.git/**"},
		{"**/*.pem", "**/*.pem"},
		{"..", ".."},         // kept: Validate refuses it
		{"a/../b", "a/../b"}, // kept: Validate refuses it
		{"./..", ".."},
		{".env", ".env"},
		{"", ""},
		{"/", ""},
		{".", ""},
		{"./", ""},
	} {
		if got := NormalizeGlob(c.in); got != c.want {
			t.Errorf("NormalizeGlob(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLimitsItems(t *testing.T) {
	for _, c := range []struct{ max, want int64 }{
		{0, math.MaxInt64},
		{-1, math.MaxInt64},
		{math.MinInt64, math.MaxInt64},
		{1, 1},
		{2000, 2000},
		{HostMaxResults, 10000},
		{math.MaxInt64, math.MaxInt64},
	} {
		if got := (Limits{MaxResults: c.max}).Items(); got != c.want {
			t.Errorf("Items with max_results %d = %d, want %d", c.max, got, c.want)
		}
	}
	if got := DefaultLimits.Items(); got != math.MaxInt64 {
		t.Errorf("the default's Items = %d, want no cap", got)
	}
}

// TestLimitsGet: Get knows every [limits] key (each field by its TOML
// tag, with a value no other field holds) and nothing else.
func TestLimitsGet(t *testing.T) {
	var l Limits
	v := reflect.ValueOf(&l).Elem()
	for i := 0; i < v.NumField(); i++ {
		v.Field(i).SetInt(int64(100 + i))
	}
	for i := 0; i < v.NumField(); i++ {
		key := v.Type().Field(i).Tag.Get("toml")
		if got, ok := l.Get(key); !ok || got != int64(100+i) {
			t.Errorf("Get(%q) = %d, %v; want %d, true", key, got, ok, 100+i)
		}
	}
	for key, want := range map[string]int64{"max_read_bytes": 1 << 20, "max_write_bytes": 16 << 20, "max_results": 0,
		"max_sort_bytes": 512 << 20, "max_line_bytes": 64 << 10, "max_call_seconds": 86400, "max_result_bytes": 1 << 30} {
		if got, ok := DefaultLimits.Get(key); !ok || got != want {
			t.Errorf("DefaultLimits.Get(%q) = %d, %v; want %d, true", key, got, ok, want)
		}
	}
	for _, key := range []string{"", "max_read", "MAX_READ_BYTES", "limits.max_read_bytes", " max_results", "MaxReadBytes", "max_bytes"} {
		if got, ok := l.Get(key); ok || got != 0 {
			t.Errorf("Get(%q) = %d, %v; want 0, false", key, got, ok)
		}
	}
}

func TestLimitsCallTimeout(t *testing.T) {
	const maxSec = int64(math.MaxInt64 / time.Second) // 9223372036
	for _, c := range []struct {
		secs int64
		flag time.Duration
		want time.Duration
	}{
		{30, 0, 30 * time.Second},
		{30, -time.Second, 30 * time.Second},
		{30, 10 * time.Second, 10 * time.Second},
		{30, 30 * time.Second, 30 * time.Second},
		{30, time.Minute, 30 * time.Second}, // the flag only lowers it
		{30, 1, 1},
		{86400, 0, 24 * time.Hour},
		{1, 1500 * time.Millisecond, time.Second},
		{maxSec - 1, 0, time.Duration(maxSec-1) * time.Second},
		{maxSec, 0, time.Duration(math.MaxInt64)},
		{math.MaxInt64, 0, time.Duration(math.MaxInt64)},
		{math.MaxInt64, 5 * time.Second, 5 * time.Second},
	} {
		if got := (Limits{MaxCallSeconds: c.secs}).CallTimeout(c.flag); got != c.want {
			t.Errorf("CallTimeout(max_call_seconds %d, flag %v) = %v, want %v", c.secs, c.flag, got, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a", "/a", true},
		{"/a/b", "/a", true},
		{"/a/b/c", "/a", true},
		{"/ab", "/a", false}, // whole components
		{"/a", "/a/b", false},
		{"/b", "/a", false},
		{"/", "/", true},
		{"/x", "/", true},
		{"/x/y", "/", true},
		{"a/b", "a", true},
		{"a", "/a", false},
		{"/a.b", "/a", false},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

func TestUnderAny(t *testing.T) {
	for _, c := range []struct {
		abs  string
		dirs []string
		want bool
	}{
		{"/a", []string{"/a"}, true},
		{"/a/b", []string{"/x", "/a"}, true},
		{"/a/b", []string{"/a/"}, true},
		{"/ab", []string{"/a"}, false},
		{"/ab", []string{"/a", "/b"}, false},
		{"/x", []string{"/"}, true},
		{"/", []string{"/"}, true},
		{"/a", nil, false},
		{"/a", []string{}, false},
		{"/a", []string{"/a/b"}, false},
	} {
		if got := UnderAny(c.abs, c.dirs); got != c.want {
			t.Errorf("UnderAny(%q, %q) = %v, want %v", c.abs, c.dirs, got, c.want)
		}
	}
}

// TestReachesInto: the first of dirs met on the way, a symlink that lies
// in one counting even when it leads out.
func TestReachesInto(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r1, r2, out := filepath.Join(base, "r1"), filepath.Join(base, "r2"), filepath.Join(base, "out")
	for _, d := range []string{r1 + "/sub", r2, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, r1+"/sub", filepath.Join(out, "in")) // outside, into r1
	mustSymlink(t, out, filepath.Join(r2, "away"))      // in r2, out of every root
	mustSymlink(t, "../r1", filepath.Join(r2, "to1"))   // in r2, into r1
	mustSymlink(t, filepath.Join(base, "gone"), filepath.Join(out, "dangling"))
	roots := []string{r1, r2}
	for _, c := range []struct {
		path string
		dirs []string
		want string
	}{
		{out + "/f", roots, ""},
		{r1 + "/f", roots, r1},
		{r1, roots, r1},
		{r2 + "/x/y", roots, r2},
		{out + "/in/f", roots, r1},
		{out + "/in/f", []string{r2}, ""},
		{r2 + "/away/f", roots, r2},
		{r2 + "/away/f", []string{r1}, ""},
		{r2 + "/to1/f", roots, r2},        // r2 is met first
		{r2 + "/to1/f", []string{r1}, r1}, // then r1
		{out + "/dangling/f", roots, ""},
		{out + "/dangling/f", []string{filepath.Join(base, "gone")}, filepath.Join(base, "gone")},
		{base + "/r1x/f", roots, ""},  // whole components
		{r1 + "/../out/f", roots, r1}, // r1 is passed through
		{out + "/f", nil, ""},
		{out + "/f", []string{"/"}, "/"}, // below /, though / is no component
	} {
		if got := ReachesInto(c.path, c.dirs); got != c.want {
			t.Errorf("ReachesInto(%s, %q) = %q, want %q", c.path, c.dirs, got, c.want)
		}
	}
}

func TestCanonical(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(real+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, real, filepath.Join(base, "link"))
	mustSymlink(t, "real/sub", filepath.Join(base, "rel"))
	mustSymlink(t, filepath.Join(base, "notyet"), filepath.Join(base, "dangling"))
	t.Chdir(base)
	for _, c := range []struct{ in, want string }{
		{real, real},
		{base + "/link", real},
		{base + "/link/sub", real + "/sub"},
		{base + "/rel", real + "/sub"},
		{base + "/real/./sub/../sub/", real + "/sub"},
		// Relative: from the current directory.
		{"link/sub", real + "/sub"},
		{".", base},
		// Missing: followed component by component.
		{base + "/link/missing/x", real + "/missing/x"},
		{base + "/dangling", base + "/notyet"},
		{base + "/dangling/x", base + "/notyet/x"},
		{base + "/missing/../real", real},
		{"nope", base + "/nope"},
	} {
		if got := Canonical(c.in); got != c.want {
			t.Errorf("Canonical(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKindName(t *testing.T) {
	for _, c := range []struct {
		m    fs.FileMode
		want string
	}{
		{fs.ModeNamedPipe, "FIFO"},
		{fs.ModeNamedPipe | 0o644, "FIFO"},
		{fs.ModeSocket, "socket"},
		{fs.ModeDevice, "device"},
		{fs.ModeDevice | fs.ModeCharDevice, "device"},
		{fs.ModeCharDevice, "device"},
		{fs.ModeIrregular, "special file"},
		{fs.ModeSymlink, "special file"},
		{0, "special file"},
	} {
		if got := KindName(c.m); got != c.want {
			t.Errorf("KindName(%v) = %q, want %q", c.m, got, c.want)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy("/srv/work")
	if p.Workdir != "/srv/work" || p.Source != "" || p.Link != "" || p.CwdWorkdir || p.Preset != "" {
		t.Errorf("workdir %q, source %q, link %q, cwd workdir %v, preset %q", p.Workdir, p.Source, p.Link, p.CwdWorkdir, p.Preset)
	}
	if p.ReadRoots != nil || p.WriteRoots != nil || p.DefaultsOff != nil {
		t.Errorf("roots %v %v, defaults_off %v; want none", p.ReadRoots, p.WriteRoots, p.DefaultsOff)
	}
	if want := (Paths{WriteDeny: []string{"**/.git/**"}}); !reflect.DeepEqual(p.Paths, want) {
		t.Errorf("paths %+v, want %+v", p.Paths, want)
	}
	want := Limits{MaxReadBytes: 1 << 20, MaxWriteBytes: 16 << 20, MaxResults: 0, MaxSortBytes: 512 << 20,
		MaxLineBytes: 64 << 10, MaxCallSeconds: 86400, MaxResultBytes: 1 << 30}
	if p.Limits != want || DefaultLimits != want {
		t.Errorf("limits %+v (DefaultLimits %+v), want %+v", p.Limits, DefaultLimits, want)
	}
	if p.Journal != (Journal{Enabled: true, MaxBytes: 1 << 30}) || p.Journal != DefaultJournal {
		t.Errorf("journal %+v, want enabled, 1 GiB", p.Journal)
	}
	if p.Sandbox.Landlock != "best-effort" || !slices.Equal(p.Sandbox.Require, []string{"descriptor_path_check", "dir_lock", "no_follow", "no_replace_rename"}) {
		t.Errorf("sandbox %+v", p.Sandbox)
	}
	if p.Write.RequirePrecondition || p.PreconditionByPreset || p.Audit.Log != "" || p.Paths.DenyHardlinks {
		t.Errorf("write %+v, by preset %v, audit %+v, deny_hardlinks %v", p.Write, p.PreconditionByPreset, p.Audit, p.Paths.DenyHardlinks)
	}
	if p.Commands == nil || len(p.Commands) != 0 {
		t.Errorf("commands %v, want an empty table", p.Commands)
	}
	// Each call is its own: changing one changes no other, nor the
	// package's names.
	p.Commands["rm"] = true
	p.Sandbox.Require[0] = "changed"
	p.Paths.WriteDeny[0] = "changed"
	q := DefaultPolicy("/srv/work")
	if len(q.Commands) != 0 || q.Sandbox.Require[0] != "descriptor_path_check" || q.Paths.WriteDeny[0] != "**/.git/**" ||
		GuaranteeNames()[0] != "descriptor_path_check" {
		t.Errorf("a second DefaultPolicy shares the first's: %+v", q)
	}
	// It validates exactly when the platform gives all four guarantees.
	g := platformGuarantees()
	all := g.DescriptorPathCheck && g.DirLock && g.NoFollow && g.NoReplaceRename
	if err := DefaultPolicy("/srv/work").Validate(); (err == nil) != all {
		t.Errorf("guarantees %+v: Validate = %v", g, err)
	}
}

func TestWritableDirs(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, w2, w3 := filepath.Join(base, "work"), filepath.Join(base, "w2"), filepath.Join(base, "w3")
	for _, d := range []string{work, w2, w3} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, work, filepath.Join(base, "worklink"))
	mustSymlink(t, w3, filepath.Join(base, "w3link"))
	for _, c := range []struct {
		work   string
		writes []string
		want   []string
	}{
		{work, nil, []string{work}},
		{base + "/worklink", nil, []string{work}},
		{base + "/worklink/", []string{w2, base + "/w3link"}, []string{work, w2, w3}},
		{work, []string{base + "/w3link", w2}, []string{work, w3, w2}},                                 // in order
		{work, []string{base + "/gone/../w2", base + "/gone/x"}, []string{work, w2, base + "/gone/x"}}, // unresolved: cleaned
	} {
		p := DefaultPolicy(c.work)
		p.WriteRoots = c.writes
		if got := p.WritableDirs(); !slices.Equal(got, c.want) {
			t.Errorf("WritableDirs(workdir %s, write roots %q) = %q, want %q", c.work, c.writes, got, c.want)
		}
	}
}
