//go:build unix

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

func sha(s string) *string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])
	return &h
}

// changeCase is one row of the change side's door table: an act through
// the Sandbox, the verdict, and what the workdir holds after it.
type changeCase struct {
	name  string
	act   func(s *Sandbox) error
	code  fserr.Code // "" = success
	rule  fserr.Rule
	want  map[string]string // rel -> content after the act ("\x00" = absent; "/" = a directory)
	roots rowRoots
}

// absent and isDir are what changeCase.want says of a path.
const (
	absent = "\x00"
	isDir  = "/"
)

func writeAct(p, content string, o CommitOptions) func(*Sandbox) error {
	return func(s *Sandbox) error {
		w, err := s.OpenWriteTarget(p, true)
		if err != nil {
			return err
		}
		defer w.Close()
		_, err = w.Commit(strings.NewReader(content), 1<<20, o)
		return err
	}
}

func appendAct(p, data string, o CommitOptions) func(*Sandbox) error {
	return func(s *Sandbox) error {
		w, err := s.OpenWriteTarget(p, true)
		if err != nil {
			return err
		}
		defer w.Close()
		_, err = w.Append([]byte(data), o)
		return err
	}
}

// editAct reads p through its target and writes it back upper-cased,
// on condition it is still the file read (edit's way).
func editAct(p string) func(*Sandbox) error {
	return func(s *Sandbox) error {
		w, err := s.OpenWriteTarget(p, false)
		if err != nil {
			return err
		}
		defer w.Close()
		f, err := w.Current()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return err
		}
		_, err = w.Commit(strings.NewReader(strings.ToUpper(string(b))), 1<<20, CommitOptions{Unchanged: true})
		return err
	}
}

func mkdirAct(p string) func(*Sandbox) error {
	return func(s *Sandbox) error { _, _, err := s.Mkdir(p); return err }
}

func rmAct(p string, recursive bool, expect *string) func(*Sandbox) error {
	return func(s *Sandbox) error {
		w, err := s.OpenEntry(p)
		if err != nil {
			return err
		}
		defer w.Close()
		return s.RemoveExpect(w, recursive, expect)
	}
}

func mvAct(from, to string, force bool) func(*Sandbox) error {
	return func(s *Sandbox) error {
		src, err := s.OpenEntry(from)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := s.OpenEntry(to)
		if err != nil {
			return err
		}
		defer dst.Close()
		return s.Rename(src, dst, force)
	}
}

func changeCases() []changeCase {
	mode := fs.FileMode(0o600)
	return []changeCase{
		{"write new", writeAct("new.txt", "N", CommitOptions{}), "", "", map[string]string{"new.txt": "N"}, anyRoot},
		{"write existing", writeAct("file.txt", "H2", CommitOptions{}), "", "", map[string]string{"file.txt": "H2"}, anyRoot},
		{"write below new dirs", writeAct("d1/d2/n.txt", "D", CommitOptions{}), "", "", map[string]string{"d1/d2/n.txt": "D"}, anyRoot},
		{"write expect", writeAct("file.txt", "H2", CommitOptions{Expect: sha("hello")}), "", "", map[string]string{"file.txt": "H2"}, anyRoot},
		{"write expect mismatch", writeAct("file.txt", "H2", CommitOptions{Expect: sha("nope")}), fserr.CodeConflict, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"write expect absent", writeAct("file.txt", "H2", CommitOptions{Expect: new(string)}), fserr.CodeConflict, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"write expect absent new", writeAct("fresh.txt", "F", CommitOptions{Expect: new(string)}), "", "", map[string]string{"fresh.txt": "F"}, anyRoot},
		{"write no-replace existing", writeAct("file.txt", "H2", CommitOptions{NoReplace: true}), fserr.CodeExists, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"write no-replace new", writeAct("only.txt", "O", CommitOptions{NoReplace: true}), "", "", map[string]string{"only.txt": "O"}, anyRoot},
		{"write denied", writeAct("secrets/x", "X", CommitOptions{}), fserr.CodeDenied, fserr.RuleDeny, map[string]string{"secrets/x": absent}, anyRoot},
		{"write write_deny", writeAct("x.lock", "X", CommitOptions{}), fserr.CodeDenied, fserr.RuleWriteDeny, map[string]string{"x.lock": "l"}, anyRoot},
		{"write read root", func(s *Sandbox) error {
			return writeAct(filepath.Join(s.ReadRoots()[0], "n.txt"), "X", CommitOptions{})(s)
		}, fserr.CodeDenied, fserr.RuleReadOnly, nil, anyRoot},
		{"write a directory", writeAct("a", "X", CommitOptions{}), fserr.CodeNotAFile, "", map[string]string{"a": isDir}, anyRoot},
		{"write over max", func(s *Sandbox) error {
			w, err := s.OpenWriteTarget("big.txt", false)
			if err != nil {
				return err
			}
			defer w.Close()
			_, err = w.Commit(strings.NewReader("0123456789"), 4, CommitOptions{})
			return err
		}, fserr.CodeTooLarge, fserr.RuleSizeCap, map[string]string{"big.txt": absent}, anyRoot},
		{"write mode", writeAct("m.txt", "M", CommitOptions{Mode: &mode}), "", "", map[string]string{"m.txt": "M"}, posixOnly},
		{"append", appendAct("file.txt", " world", CommitOptions{}), "", "", map[string]string{"file.txt": "hello world"}, anyRoot},
		{"append new", appendAct("log.txt", "L1", CommitOptions{}), "", "", map[string]string{"log.txt": "L1"}, anyRoot},
		{"append expect mismatch", appendAct("file.txt", "!", CommitOptions{Expect: sha("nope")}), fserr.CodeConflict, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"edit", editAct("file.txt"), "", "", map[string]string{"file.txt": "HELLO"}, anyRoot},
		{"edit missing", editAct("nope.txt"), fserr.CodeNotFound, "", nil, anyRoot},
		{"mkdir", mkdirAct("nd"), "", "", map[string]string{"nd": isDir}, anyRoot},
		{"mkdir deep", mkdirAct("m1/m2"), "", "", map[string]string{"m1/m2": isDir}, anyRoot},
		{"mkdir existing", mkdirAct("a"), "", "", map[string]string{"a": isDir, "a/inner.txt": "inner"}, anyRoot},
		{"mkdir over a file", mkdirAct("file.txt"), fserr.CodeExists, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"mkdir denied", mkdirAct("secrets/sub"), fserr.CodeDenied, fserr.RuleDeny, nil, anyRoot},
		{"rm file", rmAct("a/readme.md", false, nil), "", "", map[string]string{"a/readme.md": absent, "a/inner.txt": "inner"}, anyRoot},
		{"rm missing", rmAct("nope", false, nil), fserr.CodeNotFound, "", nil, anyRoot},
		{"rm dir without -r", rmAct("a", false, nil), fserr.CodeNotAFile, "", map[string]string{"a/inner.txt": "inner"}, anyRoot},
		{"rm -r", rmAct("a/b", true, nil), "", "", map[string]string{"a/b/deep.txt": absent, "a/b": absent, "a/inner.txt": "inner"}, anyRoot},
		{"rm -r holding a denied path", rmAct("upper", true, nil), fserr.CodeDenied, fserr.RuleDeny, map[string]string{"upper/.ENV": "E2"}, anyRoot},
		{"rm expect", rmAct("file.txt", false, sha("hello")), "", "", map[string]string{"file.txt": absent}, anyRoot},
		{"rm expect mismatch", rmAct("file.txt", false, sha("nope")), fserr.CodeConflict, "", map[string]string{"file.txt": "hello"}, anyRoot},
		{"rm write_deny", rmAct("x.lock", false, nil), fserr.CodeDenied, fserr.RuleWriteDeny, map[string]string{"x.lock": "l"}, anyRoot},
		{"mv", mvAct("file.txt", "moved.txt", false), "", "", map[string]string{"file.txt": absent, "moved.txt": "hello"}, anyRoot},
		{"mv onto existing", mvAct("a/inner.txt", "..test", false), fserr.CodeExists, "", map[string]string{"a/inner.txt": "inner", "..test": "dots"}, anyRoot},
		{"mv --force", mvAct("a/inner.txt", "..test", true), "", "", map[string]string{"a/inner.txt": absent, "..test": "inner"}, anyRoot},
		{"mv into denied", mvAct("file.txt", "secrets/f", false), fserr.CodeDenied, fserr.RuleDeny, map[string]string{"file.txt": "hello"}, anyRoot},
		{"mv missing", mvAct("nope", "n2", false), fserr.CodeNotFound, "", nil, anyRoot},
		{"mv a directory", mvAct("a/b", "b2", false), "", "", map[string]string{"b2/deep.txt": "deep", "a/b": absent}, posixOnly},
		{"symlink", func(s *Sandbox) error { _, err := s.Symlink("ln", "file.txt"); return err }, "", "", nil, posixOnly},
	}
}

// TestChangeActs runs the change side's door table on each kind of root:
// every act through the Sandbox, its verdict, and what the workdir holds
// after it, read as another process would.
func TestChangeActs(t *testing.T) {
	for _, kind := range []string{"posix", "object"} {
		t.Run(kind, func(t *testing.T) {
			for _, c := range changeCases() {
				if c.roots == posixOnly && kind != "posix" {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					dr := newDoorRoot(t, kind, nil)
					checkErr(t, c.act(dr.s), c.code, c.rule)
					for rel, want := range c.want {
						dr.mustHold(rel, want)
					}
				})
			}
		})
	}
}

// mustHold checks what rel holds (as another process sees it, not
// through the door): want's content, absent or a directory.
func (d *doorRoot) mustHold(rel, want string) {
	d.t.Helper()
	got, ok := d.get(rel)
	dir := d.isDir(rel)
	switch {
	case want == isDir && !dir:
		d.t.Errorf("%s is not a directory (%q, %v), want one", rel, got, ok)
	case want == absent && (ok || dir):
		d.t.Errorf("%s exists (%q), want it absent", rel, got)
	case want != isDir && want != absent && (!ok || got != want):
		d.t.Errorf("%s holds %q (%v), want %q", rel, got, ok, want)
	}
}

// isDir reports whether rel is a directory (below the workdir), as
// another process sees it: on disk, or a prefix in the store.
func (d *doorRoot) isDir(rel string) bool {
	if d.posix() {
		fi, err := os.Lstat(filepath.Join(d.tr.work, rel))
		return err == nil && fi.IsDir()
	}
	for k := range d.store().Files() {
		if strings.HasPrefix(k, rel+"/") {
			return true
		}
	}
	return false
}
