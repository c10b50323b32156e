//go:build unix

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

const outsideSecret = "OUTSIDE-SECRET"

// tree is the layout the sandbox tests run against. Every path is canonical
// (t.TempDir may live below a symlink, e.g. /tmp on macOS).
type tree struct {
	base    string // holds everything below
	work    string // the workdir
	evil    string // work_evil: a sibling sharing the workdir's prefix
	outside string // no root: holds the secret
	ro      string // a read root
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

// newTree builds:
//
//	work/      file.txt a/{inner.txt,readme.md,cert.PEM,b/deep.txt} secrets/key
//	           .env upper/.ENV x.lock .git/config ..test fifo hard_secret(hardlink)
//	           symlinks: see below
//	work_evil/ evil.txt
//	outside/   secret.txt sub/more.txt
//	ro/        doc.txt ro_out -> ../outside/secret.txt ro_to_work -> ../work/file.txt
func newTree(t testing.TB, base string) *tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{base: base, work: filepath.Join(base, "work"), evil: filepath.Join(base, "work_evil"),
		outside: filepath.Join(base, "outside"), ro: filepath.Join(base, "ro")}
	w := func(rel, content string) { mustWrite(t, filepath.Join(base, rel), content) }
	w("work/file.txt", "hello")
	w("work/a/inner.txt", "inner")
	w("work/a/readme.md", "md")
	w("work/a/cert.PEM", "pem")
	w("work/a/b/deep.txt", "deep")
	w("work/secrets/key", "k")
	w("work/.env", "E")
	w("work/upper/.ENV", "E2")
	w("work/x.lock", "l")
	w("work/.git/config", "[core]")
	w("work/..test", "dots")
	w("work_evil/evil.txt", "EVIL")
	w("outside/secret.txt", outsideSecret)
	w("outside/sub/more.txt", outsideSecret)
	w("ro/doc.txt", "doc")

	l := func(target, link string) { mustSymlink(t, target, filepath.Join(base, link)) }
	l("secrets", "work/link_secrets")
	l(".env", "work/notes")
	l("upper/.ENV", "work/notes_up")
	l("../outside/secret.txt", "work/out_file")
	l("../outside", "work/out_dir")
	l(filepath.Join(tr.outside, "secret.txt"), "work/abs_out")
	l(filepath.Join(tr.work, "file.txt"), "work/abs_in")
	l(filepath.Join(tr.work, "a"), "work/abs_in_dir")
	l("nope", "work/dangling")
	l("../outside/nope", "work/dangling_out")
	l("chain_b", "work/chain_a")
	l("../outside/secret.txt", "work/chain_b")
	l("chain_in_b", "work/chain_in_a")
	l("a/inner.txt", "work/chain_in_b")
	l("a/inner.txt", "work/in_link")
	l("a", "work/in_dir")
	l("../file.txt", "work/a/up_link")
	l("../../outside/secret.txt", "work/a/esc_link")
	l("../work_evil", "work/evil_link")
	l("loop2", "work/loop1")
	l("loop1", "work/loop2")
	l("x.lock", "work/lock_link")
	l("../outside/secret.txt", "ro/ro_out")
	l("../work/file.txt", "ro/ro_to_work")
	if err := os.Link(filepath.Join(tr.outside, "secret.txt"), filepath.Join(tr.work, "hard_secret")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(tr.work, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

// basePolicy is the default policy for tr plus a read root and deny rules.
func basePolicy(tr *tree) *policy.Policy {
	p := policy.DefaultPolicy(tr.work)
	p.ReadRoots = []string{tr.ro}
	p.Paths.Deny = []string{"secrets/**", "**/.env"}
	p.Paths.DenyRegex = []string{`\.pem$`}
	p.Paths.WriteDeny = append(p.Paths.WriteDeny, "**/*.lock")
	return p
}

func newSandbox(t testing.TB, tr *tree, mod func(*policy.Policy)) *Sandbox {
	t.Helper()
	p := basePolicy(tr)
	if mod != nil {
		mod(p)
	}
	s, err := New(p, tr.base)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkErr asserts err is an *Error with code and (when rule != "") rule.
func checkErr(t *testing.T, err error, code fserr.Code, rule fserr.Rule) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v (rule %q)", err, fserr.AsError(err).Rule)
		}
		return
	}
	if err == nil {
		t.Fatalf("succeeded, want %s/%s", code, rule)
	}
	var e *fserr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not an *Error", err, err)
	}
	if e.Code != code || (rule != "" && e.Rule != rule) {
		t.Fatalf("got %s/%s (%v), want %s/%s", e.Code, e.Rule, e, code, rule)
	}
}

func readAll(t *testing.T, f *File) string {
	t.Helper()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b)
}

type pathCase struct {
	name    string
	op      string // open, opendir, lstat, write
	path    string
	code    fserr.Code // "" = success
	rule    fserr.Rule
	content string // open: expected content; lstat: expected type
	abs     string // expected Info.Abs, if set
	roots   rowRoots
}

// rowRoots says which kinds of root a door row runs on: any, or only a
// posix root, for a row that needs a symlink, a FIFO, a hard link, a
// mode or a descriptor (an object root has none).
type rowRoots bool

const (
	anyRoot   rowRoots = false
	posixOnly rowRoots = true
)

// runs reports whether the row runs on s's workdir's kind of root.
func (r rowRoots) runs(s *Sandbox) bool { return r == anyRoot || s.work.st.kind() == kindPosix }

func runPathCases(t *testing.T, s *Sandbox, cases []pathCase) {
	t.Helper()
	for _, c := range cases {
		if !c.roots.runs(s) {
			continue
		}
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			var info Info
			var err error
			switch c.op {
			case "open":
				var f *File
				if f, err = s.Open(c.path); err == nil {
					info = f.Info
					got := readAll(t, f)
					f.Close()
					if got == outsideSecret {
						t.Fatalf("read the outside secret through %q", c.path)
					}
					if c.content != "" && got != c.content {
						t.Fatalf("content %q, want %q", got, c.content)
					}
				}
			case "opendir":
				var d *Dir
				if d, err = s.OpenDir(c.path); err == nil {
					info = d.Info
					d.Close()
				}
			case "lstat":
				info, err = s.Lstat(c.path)
				if err == nil && c.content != "" && info.Type != c.content {
					t.Fatalf("type %q, want %q", info.Type, c.content)
				}
			case "write":
				info, err = s.CheckWrite(c.path)
			default:
				t.Fatalf("bad op %q", c.op)
			}
			checkErr(t, err, c.code, c.rule)
			if err == nil && c.abs != "" && info.Abs != c.abs {
				t.Fatalf("Abs = %q, want %q", info.Abs, c.abs)
			}
		})
	}
}

// TestResolveAndOpen runs the door's table on each kind of root: every
// row on a posix root, the rows not marked posixOnly (a symlink, a FIFO
// or a hard link they need) on an object root too.
func TestResolveAndOpen(t *testing.T) {
	forEachRoot(t, nil, func(t *testing.T, d *doorRoot) { runPathCases(t, d.s, resolveCases(d.tr)) })
}

// resolveCases is TestResolveAndOpen's table over tr.
func resolveCases(tr *tree) []pathCase {
	W := func(rel string) string { return filepath.Join(tr.work, rel) }
	B := func(rel string) string { return filepath.Join(tr.base, rel) }
	long := strings.Repeat("a/", 2049) + "x" // 4099 bytes
	return []pathCase{
		// Ordinary access.
		{"plain", "open", "file.txt", "", "", "hello", W("file.txt"), anyRoot},
		{"dot slash", "open", "./file.txt", "", "", "hello", W("file.txt"), anyRoot},
		{"dotdot inside", "open", "a/../file.txt", "", "", "hello", W("file.txt"), anyRoot},
		{"double slash", "open", "a//inner.txt", "", "", "inner", W("a/inner.txt"), anyRoot},
		{"absolute inside", "open", W("a/b/deep.txt"), "", "", "deep", W("a/b/deep.txt"), anyRoot},
		{"read root", "open", filepath.Join(tr.ro, "doc.txt"), "", "", "doc", filepath.Join(tr.ro, "doc.txt"), anyRoot},
		{"home", "open", "~/work/file.txt", "", "", "hello", W("file.txt"), anyRoot},
		{"dotdot name", "open", "..test", "", "", "dots", W("..test"), anyRoot},

		// '..' traversal in many spellings.
		{"dotdot", "open", "../outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"dotdot after dir", "open", "a/../../outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"dot dotdot", "open", "./../outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"slashes dotdot", "open", "//..//outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"deep dotdot", "open", "a/b/../../../outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"out and back in", "open", "../work/file.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"bare dotdot dir", "opendir", "..", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"dotdot slash dir", "opendir", "../", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"dotdot of subdir ok", "opendir", "a/..", "", "", "", tr.work, anyRoot},
		{"dotdot dotdot dir", "opendir", "a/../..", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"dotdot sibling", "open", "../work_evil/evil.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"read root dotdot", "open", filepath.Join(tr.ro, "../outside/secret.txt"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"encoded dotdot is a name", "open", "%2e%2e/outside/secret.txt", fserr.CodeNotFound, "", "", "", anyRoot},
		{"backslash is a name", "open", `..\outside\secret.txt`, fserr.CodeNotFound, "", "", "", anyRoot},

		// Absolute paths outside every root.
		{"absolute outside", "open", B("outside/secret.txt"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"absolute root", "opendir", "/", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"absolute etc", "open", "/etc/passwd", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"home outside", "open", "~/outside/secret.txt", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"home itself", "opendir", "~", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"sibling prefix file", "open", B("work_evil/evil.txt"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"sibling prefix dir", "opendir", B("work_evil"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"sibling prefix lstat", "lstat", B("work_evil"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"sibling via dotdot", "open", W("../work_evil/evil.txt"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"trailing space sibling", "open", B("work /x"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"quote sibling", "open", B("work'/x"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},

		// Symlinks leading out.
		{"symlink file out", "open", "out_file", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"symlink dir out", "open", "out_dir/secret.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"symlink dir out opendir", "opendir", "out_dir", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"symlink dir out deeper", "opendir", "out_dir/sub", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"relative symlink out", "open", "a/esc_link", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"absolute symlink out", "open", "abs_out", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"absolute symlink in", "open", "abs_in", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"absolute symlink in dir", "opendir", "abs_in_dir", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"absolute symlink in dir file", "open", "abs_in_dir/inner.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"dangling", "open", "dangling", fserr.CodeNotFound, "", "", "", posixOnly},
		{"dangling out", "open", "dangling_out", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"chained out", "open", "chain_a", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"chained in", "open", "chain_in_a", "", "", "inner", W("a/inner.txt"), posixOnly},
		{"sibling via symlink", "open", "evil_link/evil.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		// '..' is lexical: out_dir/.. is the workdir, never the escaping
		// symlink's target's parent (c24bc27 walked it and refused).
		{"dotdot after escaping symlink", "open", "out_dir/../file.txt", "", "", "hello", W("file.txt"), anyRoot},
		{"dotdot after escaping symlink dir", "opendir", "out_dir/..", "", "", "", tr.work, anyRoot},
		{"loop", "open", "loop1", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"read root symlink out", "open", filepath.Join(tr.ro, "ro_out"), fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"read root symlink to other root", "open", filepath.Join(tr.ro, "ro_to_work"), fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},

		// Symlinks staying inside are fine.
		{"in-root symlink", "open", "in_link", "", "", "inner", W("a/inner.txt"), posixOnly},
		{"in-root symlink up", "open", "a/up_link", "", "", "hello", W("file.txt"), posixOnly},
		{"in-root dir symlink", "opendir", "in_dir", "", "", "", W("a"), posixOnly},
		{"in-root dir symlink file", "open", "in_dir/b/deep.txt", "", "", "deep", W("a/b/deep.txt"), posixOnly},

		// Deny rules on the resolved path.
		{"deny dir", "open", "secrets/key", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny dir listing", "opendir", "secrets", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny via symlinked dir", "open", "link_secrets/key", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"deny via symlinked dir listing", "opendir", "link_secrets", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"deny via symlinked dir lstat", "lstat", "link_secrets/key", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"deny file", "open", ".env", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny via symlinked file", "open", "notes", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"deny case upper", "open", "upper/.ENV", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny case via symlink", "open", "notes_up", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"deny case spelled missing", "open", "./.ENV", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny spelled through missing dir", "open", "nodir/../.env", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny_regex case-insensitive", "open", "a/cert.PEM", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"deny absolute spelling", "open", W(".env"), fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},

		// Shapes and kinds.
		{"NUL", "open", "file.txt\x00x", fserr.CodeUsage, "", "", "", anyRoot},
		{"NUL lstat", "lstat", "\x00", fserr.CodeUsage, "", "", "", anyRoot},
		{"empty", "open", "", fserr.CodeUsage, "", "", "", anyRoot},
		{"path too long", "open", long, fserr.CodeUsage, "", "", "", anyRoot},
		{"component too long", "open", strings.Repeat("c", 256), fserr.CodeUsage, "", "", "", anyRoot},
		{"component 255 ok", "open", strings.Repeat("c", 255), fserr.CodeNotFound, "", "", "", anyRoot},
		{"directory as file", "open", "a", fserr.CodeNotAFile, "", "", "", anyRoot},
		{"file as directory", "opendir", "file.txt", fserr.CodeNotADir, "", "", "", anyRoot},
		{"missing", "open", "nope.txt", fserr.CodeNotFound, "", "", "", anyRoot},
		{"below a file", "open", "file.txt/x", fserr.CodeNotFound, "", "", "", anyRoot},
		{"fifo as dir", "opendir", "fifo", fserr.CodeDenied, fserr.RuleSpecialFile, "", "", posixOnly},

		// Lstat.
		{"lstat symlink out", "lstat", "out_file", "", "", "symlink", W("out_file"), posixOnly},
		{"lstat abs symlink", "lstat", "abs_out", "", "", "symlink", W("abs_out"), posixOnly},
		{"lstat missing", "lstat", "nope", fserr.CodeNotFound, "", "", "", anyRoot},
		{"lstat missing parent", "lstat", "nodir/nope", fserr.CodeNotFound, "", "", "", anyRoot},
		{"lstat through symlink out", "lstat", "out_dir/secret.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"lstat through abs symlink", "lstat", "abs_in_dir/inner.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"lstat denied", "lstat", ".env", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"lstat fifo", "lstat", "fifo", "", "", "other", W("fifo"), posixOnly},
		{"lstat root", "lstat", ".", "", "", "dir", tr.work, anyRoot},
		{"lstat dotdot", "lstat", "a/..", "", "", "dir", tr.work, anyRoot},
		{"lstat outside", "lstat", "../outside", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"lstat in-root dir symlink", "lstat", "in_dir/inner.txt", "", "", "file", W("a/inner.txt"), posixOnly},

		// Writes.
		{"write new", "write", "new.txt", "", "", "", W("new.txt"), anyRoot},
		{"write new deep", "write", "a/new/deeper.txt", "", "", "", W("a/new/deeper.txt"), anyRoot},
		{"write existing", "write", "file.txt", "", "", "", W("file.txt"), anyRoot},
		{"write_deny", "write", "x.lock", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
		{"write_deny new", "write", "a/new.lock", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
		{"write_deny case", "write", "a/NEW.LOCK", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
		{"write_deny via symlink", "write", "lock_link", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", posixOnly},
		{"write_deny git", "write", ".git/config", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
		{"write_deny git new", "write", ".git/hooks/pre-commit", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
		{"write read root", "write", filepath.Join(tr.ro, "doc.txt"), fserr.CodeDenied, fserr.RuleReadOnly, "", "", anyRoot},
		{"write read root new", "write", filepath.Join(tr.ro, "new.txt"), fserr.CodeDenied, fserr.RuleReadOnly, "", "", anyRoot},
		{"write outside", "write", B("outside/x"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"write sibling", "write", B("work_evil/x"), fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"write dotdot", "write", "../outside/x", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"write through symlink out", "write", "out_dir/new.txt", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"write symlink out", "write", "out_file", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		{"write abs symlink in", "write", "abs_in", fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		// A dangling symlink inside the workdir is followed as the real
		// write follows it (it creates nope): CheckWrite is the write's own
		// door, so it cannot say otherwise.
		{"write dangling", "write", "dangling", "", "", "", W("nope"), posixOnly},
		{"write denied", "write", "notes", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"write denied dir", "write", "link_secrets/new", fserr.CodeDenied, fserr.RuleDeny, "", "", posixOnly},
		{"write fifo", "write", "fifo", fserr.CodeDenied, fserr.RuleSpecialFile, "", "", posixOnly},
		{"write workdir", "write", ".", fserr.CodeDenied, fserr.RuleRoot, "", "", anyRoot},
		{"write NUL", "write", "a\x00", fserr.CodeUsage, "", "", "", anyRoot},
	}
}

// TestHardlinks: a hard link shares an inode with a file outside every
// root; only deny_hardlinks can see it.
func TestHardlinks(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, func(p *policy.Policy) { p.Paths.DenyHardlinks = true })
	// A hard link inside the root to a denied file: its name is not denied.
	if err := os.Link(filepath.Join(tr.work, ".env"), filepath.Join(tr.work, "env_alias")); err != nil {
		t.Fatal(err)
	}
	runPathCases(t, s, []pathCase{
		{"hardlink", "open", "hard_secret", fserr.CodeDenied, fserr.RuleHardlink, "", "", posixOnly},
		{"hardlink to denied", "open", "env_alias", fserr.CodeDenied, fserr.RuleHardlink, "", "", posixOnly},
		{"hardlink lstat", "lstat", "hard_secret", "", "", "file", "", posixOnly},
		{"hardlink write", "write", "hard_secret", fserr.CodeDenied, fserr.RuleHardlink, "", "", posixOnly},
		{"single link ok", "open", "file.txt", "", "", "hello", "", posixOnly},
	})
	// Without the rule the link is an ordinary file (documented limit).
	s2 := newSandbox(t, tr, nil)
	f, err := s2.Open("hard_secret")
	checkErr(t, err, "", "")
	f.Close()
	if f.Info.Nlink != 2 {
		t.Errorf("Nlink = %d, want 2", f.Info.Nlink)
	}
}

// TestFIFONeverBlocks: opening a FIFO with no writer would block forever.
// Every entry point must answer at once, for the FIFO itself, for a path
// below it (where os.Root.OpenRoot would open it as the parent), and for a
// symlink to it. Each call runs in a goroutine with a 2s timeout, so a hang
// fails the test instead of blocking it.
func TestFIFONeverBlocks(t *testing.T) {
	tr := newTree(t, t.TempDir())
	mustSymlink(t, "fifo", filepath.Join(tr.work, "fifo_link"))
	s := newSandbox(t, tr, nil)
	explain := func(op, p string, rule fserr.Rule) func() error {
		return func() error {
			d, err := s.Explain(op, p)
			if err == nil && (d.Allowed || d.Rule != string(rule)) {
				err = errors.New("explain " + op + ": " + d.Rule + ": " + d.Reason)
			}
			return err
		}
	}
	type fcase struct {
		name string
		call func() error
		code fserr.Code
		rule fserr.Rule
	}
	open := func(p string) func() error {
		return func() error {
			f, err := s.Open(p)
			if err == nil {
				f.Close()
			}
			return err
		}
	}
	openDir := func(p string) func() error {
		return func() error {
			d, err := s.OpenDir(p)
			if err == nil {
				d.Close()
			}
			return err
		}
	}
	lstat := func(p string) func() error { return func() error { _, err := s.Lstat(p); return err } }
	checkWrite := func(p string) func() error { return func() error { _, err := s.CheckWrite(p); return err } }
	writeTarget := func(p string, mkdirs bool) func() error {
		return func() error {
			w, err := s.OpenWriteTarget(p, mkdirs)
			if err == nil {
				w.Close()
			}
			return err
		}
	}
	entry := func(p string) func() error {
		return func() error {
			w, err := s.OpenEntry(p)
			if err == nil {
				w.Close()
			}
			return err
		}
	}
	for _, c := range []fcase{
		{"open", open("fifo"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"open via symlink", open("fifo_link"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"opendir", openDir("fifo"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"opendir via symlink", openDir("fifo_link"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"lstat", lstat("fifo"), "", ""},
		{"checkwrite", checkWrite("fifo"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"checkwrite via symlink", checkWrite("fifo_link"), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"writetarget", writeTarget("fifo", false), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"writetarget via symlink", writeTarget("fifo_link", false), fserr.CodeDenied, fserr.RuleSpecialFile},
		{"entry", entry("fifo"), "", ""},
		{"explain read", explain("read", "fifo", fserr.RuleSpecialFile), "", ""},
		{"explain ls", explain("ls", "fifo", fserr.RuleSpecialFile), "", ""},
		{"explain grep", explain("grep", "fifo", fserr.RuleSpecialFile), "", ""},
		{"explain write", explain("write", "fifo", fserr.RuleSpecialFile), "", ""},
		// Below the FIFO: it is the parent directory of the path.
		{"open below", open("fifo/x"), fserr.CodeNotFound, ""},
		{"opendir below", openDir("fifo/x"), fserr.CodeNotFound, ""},
		{"lstat below", lstat("fifo/x"), fserr.CodeNotFound, ""},
		{"lstat below via symlink", lstat("fifo_link/x"), fserr.CodeNotFound, ""},
		{"lstat dotdot below", lstat("fifo/.."), "", ""}, // lexical: fifo/.. is the workdir
		{"checkwrite below", checkWrite("fifo/x"), fserr.CodeNotFound, ""},
		{"checkwrite deep below", checkWrite("fifo/x/y"), fserr.CodeNotFound, ""},
		{"writetarget below", writeTarget("fifo/x", false), fserr.CodeNotFound, ""},
		{"writetarget below mkdirs", writeTarget("fifo/x", true), fserr.CodeNotFound, ""},
		{"entry below", entry("fifo/x"), fserr.CodeNotFound, ""},
		{"mkdir below", func() error { _, _, err := s.Mkdir("fifo/x"); return err }, fserr.CodeNotFound, ""},
		{"walk", func() error {
			_, err := s.Walk(context.Background(), "fifo", WalkOptions{MaxDepth: -1}, func(e *Entry) error { e.Release(); return nil })
			return err
		}, fserr.CodeDenied, fserr.RuleSpecialFile},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.call() }()
			select {
			case err := <-done:
				if c.code == fserr.CodeNotFound && err != nil {
					// Any quick refusal will do below a FIFO; not_found is
					// what lstat(2) says (ENOTDIR).
					switch fserr.AsError(err).Code {
					case fserr.CodeNotFound, fserr.CodeNotADir, fserr.CodeDenied:
						return
					}
				}
				checkErr(t, err, c.code, c.rule)
			case <-time.After(2 * time.Second):
				// Release the blocked reader so the test binary can go on.
				if f, err := os.OpenFile(filepath.Join(tr.work, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("%s blocked on a FIFO", c.name)
			}
		})
	}
}

// TestSpecialFS: with "/" as a read root, /proc, /sys and /dev stay closed,
// whichever way they are spelled or reached.
func TestSpecialFS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc and /sys")
	}
	tr := newTree(t, t.TempDir())
	// A relative symlink outside the workdir, inside the "/" root, into /proc.
	up := strings.Repeat("../", strings.Count(tr.outside, "/"))
	mustSymlink(t, up+"proc/self/environ", filepath.Join(tr.outside, "environ_link"))
	mustSymlink(t, up+"proc/self", filepath.Join(tr.outside, "self_link"))
	mustSymlink(t, up+"dev", filepath.Join(tr.outside, "dev_link"))
	mustSymlink(t, up+"sys/kernel", filepath.Join(tr.outside, "sys_link"))
	mustSymlink(t, "/proc/self/environ", filepath.Join(tr.outside, "abs_environ"))
	mustWrite(t, filepath.Join(tr.outside, "plain.txt"), "plain")
	s := newSandbox(t, tr, func(p *policy.Policy) { p.ReadRoots = []string{"/"} })
	O := func(rel string) string { return filepath.Join(tr.outside, rel) }
	runPathCases(t, s, []pathCase{
		{"environ", "open", "/proc/self/environ", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"environ dir", "opendir", "/proc/self", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"proc", "opendir", "/proc", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"proc lstat", "lstat", "/proc/self/environ", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"proc double slash", "open", "//proc//self/environ", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"proc dotdot", "open", "/etc/../proc/self/environ", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"proc via workdir dotdot", "open", tr.work + "/" + up + "proc/self/environ", fserr.CodeDenied, "", "", "", posixOnly},
		{"sys", "open", "/sys/kernel/uevent_seqnum", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"sys dir", "opendir", "/sys/kernel", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"dev null", "open", "/dev/null", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"dev zero", "open", "/dev/zero", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"dev dir", "opendir", "/dev", fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"dev write", "write", "/dev/null", fserr.CodeDenied, "", "", "", posixOnly},
		{"symlink to environ", "open", O("environ_link"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"symlink to proc self", "open", O("self_link/environ"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"symlink to proc self dir", "opendir", O("self_link"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"symlink to proc self lstat", "lstat", O("self_link/environ"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"symlink to dev", "open", O("dev_link/null"), fserr.CodeDenied, "", "", "", posixOnly},
		{"symlink to sys", "open", O("sys_link/uevent_seqnum"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		{"absolute symlink to environ", "open", O("abs_environ"), fserr.CodeDenied, fserr.RuleSymlink, "", "", posixOnly},
		// The rest of "/" is readable.
		{"outside via slash root", "open", O("plain.txt"), "", "", "plain", O("plain.txt"), posixOnly},
		{"workdir still workdir", "open", filepath.Join(tr.work, "file.txt"), "", "", "hello", filepath.Join(tr.work, "file.txt"), posixOnly},
	})
	// A regular file under /dev (tmpfs on /dev/shm) reached through a
	// relative symlink: refused on its real path, not its type.
	if f, err := os.CreateTemp("/dev/shm", "fsbox-test-"); err == nil {
		f.WriteString("shm")
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		runPathCases(t, s, []pathCase{
			{"dev shm file", "open", f.Name(), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
			{"dev shm via symlink", "open", O("dev_link/shm/" + filepath.Base(f.Name())), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
			{"dev shm via symlink lstat", "lstat", O("dev_link/shm/" + filepath.Base(f.Name())), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
			{"dev shm via symlink dir", "opendir", O("dev_link/shm"), fserr.CodeDenied, fserr.RuleSpecialFS, "", "", posixOnly},
		})
	}
	// A listing of "/" hides /proc, /sys and /dev.
	d, err := s.OpenDir("/")
	checkErr(t, err, "", "")
	defer d.Close()
	l, err := d.ReadDir()
	checkErr(t, err, "", "")
	for _, e := range l.Entries {
		switch e.Name {
		case "proc", "sys", "dev":
			t.Errorf("listing of / shows %s", e.Name)
		}
	}
}

// TestAllow: with an allow list only matching files are readable;
// directories stay listable.
func TestAllow(t *testing.T) {
	forEachRoot(t, func(p *policy.Policy) { p.Paths.Allow = []string{"**/*.txt"} }, testAllow)
}

func testAllow(t *testing.T, dr *doorRoot) {
	tr, s := dr.tr, dr.s
	dr.put("a/UPPER.TXT", "upper")
	if dr.posix() {
		mustSymlink(t, "readme.md", filepath.Join(tr.work, "a", "alias.txt"))
	}
	runPathCases(t, s, []pathCase{
		{"allowed", "open", "a/inner.txt", "", "", "inner", "", anyRoot},
		{"not allowed", "open", "a/readme.md", fserr.CodeDenied, fserr.RuleAllow, "", "", anyRoot},
		{"dir listable", "opendir", "a", "", "", "", "", anyRoot},
		{"root listable", "opendir", ".", "", "", "", "", anyRoot},
		{"allow is case-sensitive", "open", "a/UPPER.TXT", fserr.CodeDenied, fserr.RuleAllow, "", "", anyRoot},
		{"allow on real path", "open", "lock_link", fserr.CodeDenied, fserr.RuleAllow, "", "", posixOnly},
		{"allow on real path, not the spelling", "open", "a/alias.txt", fserr.CodeDenied, fserr.RuleAllow, "", "", posixOnly},
		{"deny wins over allow", "open", "secrets/key", fserr.CodeDenied, fserr.RuleDeny, "", "", anyRoot},
		{"write not allowed", "write", "new.md", fserr.CodeDenied, fserr.RuleAllow, "", "", anyRoot},
		{"write allowed", "write", "new.txt", "", "", "", "", anyRoot},
	})
	d, err := s.OpenDir("a")
	checkErr(t, err, "", "")
	defer d.Close()
	l, err := d.ReadDir()
	checkErr(t, err, "", "")
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	// b (dir), inner.txt and alias.txt (a symlink, listed as itself) are
	// shown; readme.md, UPPER.TXT, up_link and esc_link are hidden by allow,
	// cert.PEM by deny_regex. (An object root has no links: b and
	// inner.txt shown, readme.md and UPPER.TXT hidden by allow, cert.PEM by
	// deny_regex.)
	want, denied := "alias.txt,b,inner.txt", 5
	if !dr.posix() {
		want, denied = "b,inner.txt", 3
	}
	if got := strings.Join(names, ","); got != want || l.Denied != denied {
		t.Errorf("ReadDir(a) = %s denied %d, want %s denied %d", got, l.Denied, want, denied)
	}
	// allow_regex works like allow.
	s2 := dr.sandbox(func(p *policy.Policy) { p.Paths.AllowRegex = []string{`^a/[^/]*\.md$`} })
	runPathCases(t, s2, []pathCase{
		{"regex allowed", "open", "a/readme.md", "", "", "md", "", anyRoot},
		{"regex not allowed", "open", "file.txt", fserr.CodeDenied, fserr.RuleAllow, "", "", anyRoot},
	})
}

func TestReadDirHidesDenied(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	d, err := s.OpenDir(".")
	checkErr(t, err, "", "")
	defer d.Close()
	l, err := d.ReadDir()
	checkErr(t, err, "", "")
	seen := map[string]Info{}
	for _, e := range l.Entries {
		seen[e.Name] = e
		if !strings.HasPrefix(e.Abs, tr.work+"/") {
			t.Errorf("entry %s: Abs %q not below the workdir", e.Name, e.Abs)
		}
	}
	for _, hidden := range []string{".env", "secrets"} {
		if _, ok := seen[hidden]; ok {
			t.Errorf("ReadDir shows denied %s", hidden)
		}
	}
	if l.Denied != 2 {
		t.Errorf("Denied = %d, want 2", l.Denied)
	}
	for _, shown := range []string{"file.txt", "a", "notes", "out_file", "fifo", ".git"} {
		if _, ok := seen[shown]; !ok {
			t.Errorf("ReadDir hides %s", shown)
		}
	}
	if e := seen["out_file"]; e.Type != "symlink" || e.Target != "../outside/secret.txt" {
		t.Errorf("out_file: type %q target %q", e.Type, e.Target)
	}
	if e := seen["fifo"]; e.Type != "other" {
		t.Errorf("fifo: type %q", e.Type)
	}
	// Listing below a symlinked directory checks the real path.
	sd, err := s.OpenDir("in_dir")
	checkErr(t, err, "", "")
	defer sd.Close()
	l, err = sd.ReadDir()
	checkErr(t, err, "", "")
	if l.Denied != 1 { // cert.PEM by deny_regex
		t.Errorf("in_dir: Denied = %d, want 1", l.Denied)
	}
	// The listing of upper hides .ENV whatever its case.
	ud, err := s.OpenDir("upper")
	checkErr(t, err, "", "")
	defer ud.Close()
	l, err = ud.ReadDir()
	checkErr(t, err, "", "")
	if len(l.Entries) != 0 || l.Denied != 1 {
		t.Errorf("upper: %d entries, %d denied; want 0, 1", len(l.Entries), l.Denied)
	}
}

func TestLstatSymlink(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	for _, c := range []struct{ path, target string }{
		{"out_file", "../outside/secret.txt"},
		{"abs_out", filepath.Join(tr.outside, "secret.txt")},
		{"dangling", "nope"},
		{"in_dir", "a"},
		{"a/up_link", "../file.txt"},
	} {
		info, err := s.Lstat(c.path)
		if err != nil {
			t.Errorf("Lstat(%s): %v", c.path, err)
			continue
		}
		if info.Type != "symlink" || info.Target != c.target {
			t.Errorf("Lstat(%s) = type %q target %q, want symlink %q", c.path, info.Type, info.Target, c.target)
		}
	}
}

func TestExplain(t *testing.T) {
	forEachRoot(t, nil, testExplain)
}

func testExplain(t *testing.T, dr *doorRoot) {
	tr, s := dr.tr, dr.s
	for _, c := range []struct {
		op, path string
		allowed  bool
		rule     fserr.Rule
		roots    rowRoots
	}{
		{"read", "file.txt", true, fserr.RuleOK, anyRoot},
		{"read", "notes", false, fserr.RuleDeny, posixOnly},
		{"read", "out_file", false, fserr.RuleSymlink, posixOnly},
		{"read", "../x", false, fserr.RuleRoot, anyRoot},
		{"read", "fifo", false, fserr.RuleSpecialFile, posixOnly},
		{"ls", "link_secrets", false, fserr.RuleDeny, posixOnly},
		{"ls", "secrets", false, fserr.RuleDeny, anyRoot},
		{"edit", "x.lock", false, fserr.RuleWriteDeny, anyRoot},
		{"edit", filepath.Join(tr.ro, "doc.txt"), false, fserr.RuleReadOnly, anyRoot},
		{"write", "new.txt", true, fserr.RuleOK, anyRoot},
		{"stat", "nope", true, fserr.RuleOK, anyRoot},
	} {
		if !c.roots.runs(s) {
			continue
		}
		d, err := s.Explain(c.op, c.path)
		if err != nil {
			t.Errorf("Explain(%s, %s): %v", c.op, c.path, err)
			continue
		}
		if d.Allowed != c.allowed || d.Rule != string(c.rule) {
			t.Errorf("Explain(%s, %s) = %v %s (%s), want %v %s", c.op, c.path, d.Allowed, d.Rule, d.Reason, c.allowed, c.rule)
		}
	}
	_, err := s.Explain("read", "x\x00")
	checkErr(t, err, fserr.CodeUsage, "")
}

// ---- policy loading ----

type fakeEnv map[string]string

func (e fakeEnv) get(k string) (string, bool) { v, ok := e[k]; return v, ok }

// loadSetup makes a workdir, a read root, a cwd and a config directory,
// all distinct, below one temp dir.
type loadSetup struct {
	base, work, ro, cwd, cfgDir, home string
}

func newLoadSetup(t *testing.T) *loadSetup {
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

// load writes body to file and loads it through FSBOX_CONFIG (when viaEnv)
// or --config, then builds the sandbox.
func (ls *loadSetup) load(t *testing.T, file, body string, env fakeEnv, flag string) (*policy.Policy, *Sandbox, error) {
	t.Helper()
	if file != "" {
		mustWrite(t, file, body)
	}
	if env == nil {
		env = fakeEnv{}
	}
	p, err := policy.Load(policy.Env{ConfigFlag: flag, Getenv: env.get, Cwd: ls.cwd, Home: ls.home})
	if err != nil {
		return nil, nil, err
	}
	s, err := New(p, ls.home)
	if err != nil {
		return p, nil, err
	}
	t.Cleanup(func() { s.Close() })
	return p, s, nil
}

func TestLoadPolicy(t *testing.T) {
	ls := newLoadSetup(t)
	cfg := filepath.Join(ls.cfgDir, "policy.toml")
	good := "workdir = \"" + ls.work + "\"\nread_roots = [\"" + ls.ro + "\"]\n"
	type lcase struct {
		name     string
		file     string
		body     string
		env      fakeEnv
		flag     string
		code     fserr.Code
		msg      []string // substrings of the message
		validate func(t *testing.T, p *policy.Policy)
	}
	hostEnv := func(kv ...string) fakeEnv {
		e := fakeEnv{"FSBOX_CONFIG": cfg}
		for i := 0; i+1 < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	tenant := "workdir = \"" + ls.base + "/tenants/${FSBOX_TENANT}\"\n"
	cases := []lcase{
		{name: "good via env", file: cfg, body: good, env: hostEnv(), validate: func(t *testing.T, p *policy.Policy) {
			if p.Workdir != ls.work || len(p.ReadRoots) != 1 || p.ReadRoots[0] != ls.ro {
				t.Errorf("policy %+v", p)
			}
		}},
		{name: "good via flag", file: cfg, body: good, flag: cfg},
		{name: "config inside workdir", file: filepath.Join(ls.work, "policy.toml"), body: good,
			env: fakeEnv{"FSBOX_CONFIG": filepath.Join(ls.work, "policy.toml")}, code: fserr.CodeConfig, msg: []string{"workdir"}},
		{name: "config deep inside workdir via flag", file: filepath.Join(ls.work, "sub", "policy.toml"), body: good,
			flag: filepath.Join(ls.work, "sub", "policy.toml"), code: fserr.CodeConfig},
		{name: "config inside cwd via flag", file: filepath.Join(ls.cwd, "policy.toml"), body: good,
			flag: filepath.Join(ls.cwd, "policy.toml"), code: fserr.CodeConfig, msg: []string{"current directory"}},
		{name: "config inside cwd relative flag", file: filepath.Join(ls.cwd, "policy.toml"), body: good,
			flag: "policy.toml", code: fserr.CodeConfig},
		{name: "config inside cwd allowed when host-fixed", file: filepath.Join(ls.cwd, "policy.toml"), body: good,
			env: fakeEnv{"FSBOX_CONFIG": filepath.Join(ls.cwd, "policy.toml")}},
		{name: "env and flag", file: cfg, body: good, env: hostEnv(), flag: cfg, code: fserr.CodeUsage},
		{name: "env empty", env: fakeEnv{"FSBOX_CONFIG": ""}, code: fserr.CodeConfig},
		{name: "env missing file", env: fakeEnv{"FSBOX_CONFIG": filepath.Join(ls.cfgDir, "nope.toml")}, code: fserr.CodeConfig},
		{name: "flag missing file", flag: filepath.Join(ls.cfgDir, "nope.toml"), code: fserr.CodeConfig},
		{name: "unknown key", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "\n[paths]\ndeny = []\ndenny = [\"**/.env\"]\n", msg: []string{"line 6", "denny"}},
		{name: "unknown top-level key", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "# c\n" + good + "workdirr = \"x\"\n", msg: []string{"line 4", "workdirr"}},
		{name: "unknown table", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[pathz]\ndeny = []\n", msg: []string{"line 3", "pathz"}},
		{name: "wrong type workdir", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = 5\n", msg: []string{"line 1"}},
		{name: "wrong type limit", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[limits]\nmax_read_bytes = \"big\"\n", msg: []string{"line 4"}},
		{name: "wrong type deny", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\ndeny = \"**/.env\"\n", msg: []string{"line 4"}},
		{name: "wrong type command", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[commands]\nrm = \"yes\"\n", msg: []string{"line 4"}},
		{name: "negative limit", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[limits]\nmax_results = -1\n", msg: []string{"line 4", "max_results"}},
		{name: "syntax error", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\ndeny = [\"a\" \"b\"]\n", msg: []string{"line 4"}},
		// BurntSushi/toml reports an error at a line's end on the next line
		// ("line 4, column 7" for "[paths" on line 3): only "line" is checked.
		{name: "syntax error at line end", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths\n", msg: []string{"line"}},
		{name: "invalid glob", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\ndeny = [\"[abc\"]\n", msg: []string{"line 4", "[abc"}},
		{name: "invalid write_deny glob", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\nwrite_deny = [\"a/[\"]\n", msg: []string{"line 4"}},
		{name: "empty glob", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\nallow = [\"\"]\n"},
		{name: "invalid regex", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\ndeny_regex = [\"(\"]\n", msg: []string{"line 4"}},
		{name: "invalid allow regex", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[paths]\nallow_regex = [\"a**\"]\n", msg: []string{"line 4"}},
		{name: "missing workdir key", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "read_roots = []\n", msg: []string{"workdir"}},
		{name: "workdir does not exist", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = \"" + ls.base + "/nope\"\n", msg: []string{"line 1"}},
		{name: "workdir is a file", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = \"" + cfg + "\"\n"},
		{name: "read root does not exist", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = \"" + ls.work + "\"\nread_roots = [\"/nonexistent-fsbox\"]\n", msg: []string{"line 2"}},
		{name: "relative workdir", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = \"work\"\n"},
		{name: "tilde workdir", file: cfg, env: hostEnv(), body: "workdir = \"~/\"\n",
			validate: func(t *testing.T, p *policy.Policy) {
				if p.Workdir != ls.home {
					t.Errorf("workdir %q, want %q", p.Workdir, ls.home)
				}
			}},
		{name: "var good", file: cfg, env: hostEnv("FSBOX_TENANT", "alice"), body: tenant,
			validate: func(t *testing.T, p *policy.Policy) {
				if want := filepath.Join(ls.base, "tenants", "alice"); p.Workdir != want {
					t.Errorf("workdir %q, want %q", p.Workdir, want)
				}
			}},
		{name: "var plain dollar", file: cfg, env: hostEnv("FSBOX_TENANT", "alice"),
			body: "workdir = \"" + ls.base + "/tenants/$FSBOX_TENANT\"\n"},
		{name: "var unset", file: cfg, env: hostEnv(), body: tenant, code: fserr.CodeConfig, msg: []string{"FSBOX_TENANT", "line 1"}},
		{name: "var empty", file: cfg, env: hostEnv("FSBOX_TENANT", ""), body: tenant, code: fserr.CodeConfig},
		{name: "var slash", file: cfg, env: hostEnv("FSBOX_TENANT", "alice/../.."), body: tenant, code: fserr.CodeConfig},
		{name: "var only slash", file: cfg, env: hostEnv("FSBOX_TENANT", "/"), body: tenant, code: fserr.CodeConfig},
		{name: "var dotdot", file: cfg, env: hostEnv("FSBOX_TENANT", ".."), body: tenant, code: fserr.CodeConfig},
		{name: "var dot", file: cfg, env: hostEnv("FSBOX_TENANT", "."), body: tenant, code: fserr.CodeConfig},
		{name: "var in read root", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: "workdir = \"" + ls.work + "\"\nread_roots = [\"" + ls.base + "/tenants/${FSBOX_TENANT}\"]\n", msg: []string{"line 2", "FSBOX_TENANT"}},
		{name: "top-level deny_hardlinks", file: cfg, env: hostEnv(), body: "deny_hardlinks = true\n" + good,
			validate: func(t *testing.T, p *policy.Policy) {
				if !p.Paths.DenyHardlinks {
					t.Error("top-level deny_hardlinks = true ignored")
				}
			}},
		{name: "paths deny_hardlinks", file: cfg, env: hostEnv(), body: good + "[paths]\ndeny_hardlinks = true\n",
			validate: func(t *testing.T, p *policy.Policy) {
				if !p.Paths.DenyHardlinks {
					t.Error("[paths] deny_hardlinks = true ignored")
				}
			}},
		{name: "commands", file: cfg, env: hostEnv(), body: good + "[commands]\nrm = true\nwrite = false\n",
			validate: func(t *testing.T, p *policy.Policy) {
				if !p.Commands["rm"] || p.Commands["write"] || len(p.Commands) != 2 {
					t.Errorf("commands %v", p.Commands)
				}
			}},
		{name: "landlock bad", file: cfg, env: hostEnv(), code: fserr.CodeConfig,
			body: good + "[sandbox]\nlandlock = \"sometimes\"\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _, err := ls.load(t, c.file, c.body, c.env, c.flag)
			checkErr(t, err, c.code, "")
			if err != nil {
				for _, m := range c.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("message %q lacks %q", err.Error(), m)
					}
				}
				return
			}
			if c.file != "" && p.Source != c.file {
				t.Errorf("Source %q, want %q", p.Source, c.file)
			}
			if c.validate != nil {
				c.validate(t, p)
			}
		})
	}
}

// TestConfigInWorkdirViaSymlink: the workdir named through a symlink still
// contains the config file.
func TestConfigInWorkdirViaSymlink(t *testing.T) {
	ls := newLoadSetup(t)
	link := filepath.Join(ls.base, "worklink")
	mustSymlink(t, ls.work, link)
	cfg := filepath.Join(ls.work, "policy.toml")
	_, _, err := ls.load(t, cfg, "workdir = \""+link+"\"\n", fakeEnv{"FSBOX_CONFIG": link + "/policy.toml"}, "")
	checkErr(t, err, fserr.CodeConfig, "")
}

func TestXDGDiscovery(t *testing.T) {
	ls := newLoadSetup(t)
	good := "workdir = \"" + ls.work + "\"\n"
	xdg := filepath.Join(ls.base, "xdg")

	// Nothing found: the built-in default, workdir = cwd.
	p, err := policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Workdir != ls.cwd || p.Source != "" || len(p.Commands) != 0 {
		t.Errorf("default policy: %+v", p)
	}
	if len(p.Paths.WriteDeny) != 1 || p.Paths.WriteDeny[0] != "**/.git/**" {
		t.Errorf("default write_deny %v", p.Paths.WriteDeny)
	}

	// ~/.config/fsbox/config.toml when XDG_CONFIG_HOME is unset.
	homeCfg := filepath.Join(ls.home, ".config", "fsbox", "config.toml")
	mustWrite(t, homeCfg, good)
	p, err = policy.Load(policy.Env{Getenv: fakeEnv{}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Source != homeCfg {
		t.Errorf("home config: Source %q, want %q", p.Source, homeCfg)
	}
	// A relative XDG_CONFIG_HOME is ignored (XDG spec).
	p, err = policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": "rel"}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Source != homeCfg {
		t.Errorf("relative XDG: Source %q, want %q", p.Source, homeCfg)
	}

	// $XDG_CONFIG_HOME/fsbox/config.toml wins over ~/.config.
	xdgCfg := filepath.Join(xdg, "fsbox", "config.toml")
	mustWrite(t, xdgCfg, good)
	p, err = policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Source != xdgCfg {
		t.Errorf("XDG config: Source %q, want %q", p.Source, xdgCfg)
	}
	// --config wins over XDG, FSBOX_CONFIG over everything.
	other := filepath.Join(ls.cfgDir, "other.toml")
	mustWrite(t, other, good)
	p, err = policy.Load(policy.Env{ConfigFlag: other, Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Source != other {
		t.Errorf("--config: Source %q, want %q", p.Source, other)
	}
	p, err = policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg, "FSBOX_CONFIG": other}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, "", "")
	if p.Source != other {
		t.Errorf("FSBOX_CONFIG: Source %q, want %q", p.Source, other)
	}
	// A broken discovered file is an error, not a silent fallback.
	mustWrite(t, xdgCfg, "denny = 1\n"+good)
	_, err = policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg}.get, Cwd: ls.cwd, Home: ls.home})
	checkErr(t, err, fserr.CodeConfig, "")
	// A discovered file inside the cwd is refused like any other.
	_, err = policy.Load(policy.Env{Getenv: fakeEnv{"XDG_CONFIG_HOME": xdg}.get, Cwd: ls.base, Home: ls.home})
	checkErr(t, err, fserr.CodeConfig, "")
}

func TestDefaultPolicySandbox(t *testing.T) {
	forEachRoot(t, nil, func(t *testing.T, dr *doorRoot) {
		p := policy.DefaultPolicy(dr.tr.work)
		s, err := newSandboxOver(p, "", dr.objs)
		checkErr(t, err, "", "")
		defer s.Close()
		runPathCases(t, s, []pathCase{
			{"read .env without deny", "open", ".env", "", "", "E", "", anyRoot},
			{"git not written", "write", ".git/config", fserr.CodeDenied, fserr.RuleWriteDeny, "", "", anyRoot},
			{"home unset", "open", "~/x", fserr.CodeUsage, "", "", "", anyRoot},
			{"write file", "write", "file.txt", "", "", "", "", anyRoot},
		})
	})
}

func TestPolicyHardening(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	real := filepath.Join(outside, "policy.toml")
	os.WriteFile(real, []byte("workdir = \""+work+"\"\n[paths]\ndeny = [\"/secrets/**\", \"./keys/**\"]\n"), 0o644)
	// A symlink to a policy, planted where the sandboxed side can write.
	link := filepath.Join(work, "policy.toml")
	os.Symlink(real, link)
	env := policy.Env{Getenv: func(string) (string, bool) { return "", false }, Cwd: outside, ConfigFlag: link}
	if p, err := policy.Load(env); err == nil {
		if _, err := New(p, ""); fserr.AsError(err).Code != fserr.CodeConfig {
			t.Errorf("a policy reached through a symlink in the workdir: %v", err)
		}
	}
	// Anchored patterns match at the root instead of never.
	p, err := policy.Load(policy.Env{Getenv: func(string) (string, bool) { return "", false }, Cwd: t.TempDir(), ConfigFlag: real})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	os.MkdirAll(filepath.Join(work, "secrets"), 0o755)
	os.WriteFile(filepath.Join(work, "secrets", "k"), []byte("x"), 0o644)
	if _, err := sb.Open("secrets/k"); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf(`deny "/secrets/**" must match secrets/k: %v`, err)
	}
	// A tenant variable may not smuggle in "~".
	_, err = policy.ExpandRoot("/srv/${T}/x", "/home/u", func(string) (string, bool) { return "~", true })
	if err == nil {
		t.Error(`a variable holding "~" must be refused`)
	}
}

// FuzzPolicy: no policy text makes Load panic; every failure is a config
// error.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{"workdir = \"/tmp\"\n", "workdir = 3", "[paths]\ndeny = [\"[\"]", "[limits]\nmax_results = -1", "workdir=\"${X}\"", "[[x]]\n", "deny_hardlinks = true\nworkdir=\"/tmp\""} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "p.toml")
		os.WriteFile(p, []byte(text), 0o644)
		_, err := policy.Load(policy.Env{ConfigFlag: p, Cwd: t.TempDir(), Getenv: func(string) (string, bool) { return "", false }})
		if err != nil && fserr.AsError(err).Code != fserr.CodeConfig {
			t.Fatalf("%q: a %s error, want config", text, fserr.AsError(err).Code)
		}
	})
}

// needs are what the tests' operations need of their path (package ops
// holds the real descriptors; the sandbox knows only needs).
var needs = map[string]Need{"read": NeedReadFile, "ls": NeedReadDir, "grep": NeedReadAny, "stat": NeedLook,
	"write": NeedWrite, "edit": NeedWrite, "mv": NeedWrite, "rm": NeedWrite}

// Decision is what the tests' Explain reports.
type Decision struct {
	Allowed      bool
	Rule, Reason string
}

// Explain probes p as op would, as ops.Explain does after the command's
// switch.
func (s *Sandbox) Explain(op, p string) (Decision, error) {
	need, ok := needs[op]
	if !ok {
		panic("no need for " + op)
	}
	var limit int64
	if op == "read" {
		limit = s.Limits().MaxReadBytes
	}
	_, err := s.Probe(need, p, limit, "max_read_bytes")
	if err == nil {
		return Decision{Allowed: true, Rule: string(fserr.RuleOK)}, nil
	}
	e := fserr.AsError(err)
	if e.Code == fserr.CodeUsage {
		return Decision{}, err
	}
	d := Decision{Rule: string(e.Rule), Reason: e.Msg}
	if e.Rule == "" {
		d.Rule = string(e.Code)
	}
	return d, nil
}
