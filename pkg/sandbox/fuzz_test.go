//go:build unix

package sandbox

import (
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// fuzzDenied is an oracle independent of checkPatterns for basePolicy's
// deny rules (secrets/**, **/.env, deny_regex \.pem$), on a real
// workdir-relative path.
func fuzzDenied(rel string) bool {
	l := strings.ToLower(rel)
	return l == "secrets" || strings.HasPrefix(l, "secrets/") || l == ".env" || strings.HasSuffix(l, "/.env") ||
		strings.Contains(l, "/.env/") || strings.HasPrefix(l, ".env/") || pemRe.MatchString(rel)
}

var pemRe = regexp.MustCompile(`(?i)\.pem$`)

// FuzzResolve throws hostile paths at Open, OpenDir, Lstat and CheckWrite.
// In the input, "@B" stands for the temp dir holding the tree (it differs
// per process), so absolute paths can be fuzzed too.
//
// Invariants: no panic; every error is an *Error; whatever succeeds lies
// under a root (by filepath.Rel against the canonical roots), is not
// denied by the policy, and never yields the outside secret; with "/" as a
// read root nothing under /proc, /sys or /dev is ever opened.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		"file.txt", "a/inner.txt", "in_link", "in_dir/b/deep.txt", "a/up_link", "chain_in_a", "..test",
		"../outside/secret.txt", "a/../../outside/secret.txt", "./../outside/secret.txt", "//..//outside/secret.txt",
		"a/b/../../../outside/secret.txt", "..", "../", "a/../..", "../work/file.txt", "../work_evil/evil.txt",
		"out_file", "out_dir/secret.txt", "out_dir/sub/more.txt", "out_dir", "a/esc_link", "abs_out", "abs_in",
		"abs_in_dir/inner.txt", "dangling", "dangling_out", "chain_a", "evil_link/evil.txt", "loop1", "loop2/x",
		"secrets/key", "link_secrets/key", "link_secrets", ".env", "notes", "notes_up", "upper/.ENV", ".ENV",
		"a/cert.PEM", "in_dir/cert.pem", "hard_secret", "fifo", "fifo/x", "x.lock", "lock_link", ".git/config",
		"@B/outside/secret.txt", "@B/work_evil/evil.txt", "@B/work/../outside/secret.txt", "@B/work/out_file",
		"@B/work /x", "@B/work", "@B/ro/doc.txt", "@B/ro/ro_out", "@B/ro/ro_to_work", "@B/ro/../outside/secret.txt",
		"@B/ro/../work/file.txt", "@B/work/./in_dir/../file.txt",
		"~/outside/secret.txt", "~/work/out_file", "~", "~/", "~root/x", "/", "/etc/passwd",
		"/proc/self/environ", "/proc/self/root/etc/passwd", "/sys/kernel", "/dev/null", "/dev/zero", "/dev/tty",
		"%2e%2e/outside/secret.txt", `..\outside\secret.txt`, "file.txt\x00", "\x00", "", ".", "./", "a/.",
		"in_dir/..", "in_dir/../..", "in_dir/../../outside/secret.txt", "out_dir/..", "out_dir/../file.txt",
		"a/up_link/..", "file.txt/", "file.txt/.", "a//b//deep.txt", strings.Repeat("a/", 300) + "x",
		strings.Repeat("x", 256), strings.Repeat("../", 40) + "etc/passwd",
	} {
		f.Add(seed)
	}
	tr := newTree(f, f.TempDir())
	mustSymlink(f, strings.Repeat("../", strings.Count(tr.outside, "/"))+"proc/self", filepath.Join(tr.outside, "self_link"))
	p := basePolicy(tr)
	p.Paths.DenyHardlinks = true
	s, err := New(p, tr.base)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	// A second sandbox reading all of "/": only the special-FS invariant holds.
	pAll := basePolicy(tr)
	pAll.ReadRoots = []string{"/"}
	pAll.Paths.DenyHardlinks = true
	sAll, err := New(pAll, tr.base)
	if err != nil {
		f.Fatal(err)
	}
	defer sAll.Close()
	roots := []string{tr.work, tr.ro}

	// relTo returns abs relative to the root it lies in, and the root.
	relTo := func(abs string, roots []string) (string, string, bool) {
		for _, r := range roots {
			rel, err := filepath.Rel(r, abs)
			if err == nil && filepath.IsLocal(rel) || rel == "." {
				return filepath.ToSlash(rel), r, true
			}
		}
		return "", "", false
	}

	f.Fuzz(func(t *testing.T, in string) {
		pth := strings.ReplaceAll(in, "@B", tr.base)
		check := func(sb *Sandbox, op string, info Info, err error, all bool) {
			if err != nil {
				var e *fserr.Error
				if !errors.As(err, &e) {
					t.Fatalf("%s(%q): error %T %v is not an *Error", op, pth, err, err)
				}
				if e.Code == fserr.CodeIO {
					t.Errorf("%s(%q): io error: %v", op, pth, e)
				}
				return
			}
			if all {
				if specialFS(info.Abs) {
					t.Fatalf("%s(%q) reached %s", op, pth, info.Abs)
				}
				return
			}
			rel, root, ok := relTo(info.Abs, roots)
			if !ok {
				t.Fatalf("%s(%q) succeeded with Abs %q outside every root", op, pth, info.Abs)
			}
			if root == tr.work && fuzzDenied(rel) {
				t.Fatalf("%s(%q) succeeded on the denied %q", op, pth, rel)
			}
		}
		for _, sb := range []*Sandbox{s, sAll} {
			all := sb == sAll
			if file, err := sb.Open(pth); err == nil {
				b, rerr := io.ReadAll(io.LimitReader(file, 4096))
				file.Close()
				if rerr != nil {
					t.Errorf("Open(%q): read: %v", pth, rerr)
				}
				if !all && string(b) == outsideSecret {
					t.Fatalf("Open(%q) read the outside secret (Abs %s)", pth, file.Info.Abs)
				}
				check(sb, "Open", file.Info, nil, all)
			} else {
				check(sb, "Open", Info{}, err, all)
			}
			if d, err := sb.OpenDir(pth); err == nil {
				check(sb, "OpenDir", d.Info, nil, all)
				if !all {
					l, err := d.ReadDir()
					if err != nil {
						check(sb, "ReadDir", Info{}, err, all)
					}
					for _, e := range l.Entries {
						check(sb, "ReadDir entry", e, nil, all)
					}
				}
				d.Close()
			} else {
				check(sb, "OpenDir", Info{}, err, all)
			}
			info, err := sb.Lstat(pth)
			check(sb, "Lstat", info, err, all)
			if !all {
				info, err = sb.CheckWrite(pth)
				if err == nil {
					if _, _, ok := relTo(info.Abs, []string{tr.work}); !ok {
						t.Fatalf("CheckWrite(%q) allowed %q outside the workdir", pth, info.Abs)
					}
				}
				check(sb, "CheckWrite", info, err, all)
			}
		}
	})
}
