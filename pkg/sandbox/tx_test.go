//go:build unix

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestAdmitChild: the one admission of a name below a pinned directory
// (a listing's entry, a walk's, a tree's member under mv and rm -r).
func TestAdmitChild(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(func(p *policy.Policy) {
		p.Paths.Deny = []string{"**/secret", "**/secret/**"}
		p.Paths.WriteDeny = []string{"**/*.lock"}
		p.Paths.DenyRegex = []string{`\.pem$`}
		p.Paths.Allow = []string{"**/*.txt"}
		p.ReadRoots = []string{"/"}
	})
	var slash *root
	for _, rt := range s.roots {
		if rt.dir == "/" {
			slash = rt
		}
	}
	if slash == nil || !slash.special {
		t.Fatalf("no read root / marked special among %d roots", len(s.roots))
	}
	for _, tc := range []struct {
		name  string
		rt    *root
		rel   string
		isDir bool
		acc   Access
		rule  fserr.Rule // "" = admitted
	}{
		{"a file", s.work, "a/b.txt", false, AccessRead, ""},
		{"a directory allow rules do not reach", s.work, "a/b", true, AccessRead, ""},
		{"a file no allow rule names", s.work, "a/b.go", false, AccessRead, fserr.RuleAllow},
		{"a denied directory", s.work, "a/secret", true, AccessRead, fserr.RuleDeny},
		{"below a denied directory", s.work, "a/secret/x.txt", false, AccessRead, fserr.RuleDeny},
		{"a denied regex", s.work, "a/key.pem", false, AccessRead, fserr.RuleDeny},
		{"write_deny, read", s.work, "a/x.lock", true, AccessRead, ""},
		{"write_deny, written", s.work, "a/x.lock", true, AccessWrite, fserr.RuleWriteDeny},
		{"/proc below a root at /", slash, "proc/self", true, AccessRead, fserr.RuleSpecialFS},
		{"/dev below a root at /", slash, "dev/null", true, AccessRead, fserr.RuleSpecialFS},
		{"/etc below a root at /", slash, "etc", true, AccessRead, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.admitChild(tc.rt, tc.rel, tc.isDir, tc.acc, tc.rel)
			switch {
			case tc.rule == "" && e != nil:
				t.Errorf("refused: %v", e)
			case tc.rule != "" && e == nil:
				t.Errorf("admitted, want %s", tc.rule)
			case tc.rule != "" && (e.Code != fserr.CodeDenied || e.Rule != tc.rule):
				t.Errorf("refused %s/%s (%v), want denied/%s", e.Code, e.Rule, e, tc.rule)
			}
		})
	}
}

// TestTxRecheck: what a change requires of a target (require) is
// verified under its locks (recheck), after the seam, with every
// target's pin; a miss changes nothing.
func TestTxRecheck(t *testing.T) {
	sum := func(s string) *string {
		h := sha256.Sum256([]byte(s))
		x := hex.EncodeToString(h[:])
		return &x
	}
	absent := ""
	for _, tc := range []struct {
		name   string
		c      func(w *WriteTarget) cond
		meddle func(t *testing.T, work string)
		code   fserr.Code // "" = passes
	}{
		{"nothing required", func(*WriteTarget) cond { return cond{} }, nil, ""},
		{"the expected content", func(*WriteTarget) cond { return cond{expect: sum("old\n")} }, nil, ""},
		{"other content expected", func(*WriteTarget) cond { return cond{expect: sum("other\n")} }, nil, fserr.CodeConflict},
		{"absent expected", func(*WriteTarget) cond { return cond{expect: &absent} }, nil, fserr.CodeConflict},
		{"unchanged, and it is", func(*WriteTarget) cond { return cond{unchanged: true} }, nil, ""},
		{"unchanged, but written in place", func(*WriteTarget) cond { return cond{unchanged: true} }, func(t *testing.T, work string) {
			must(t, os.WriteFile(filepath.Join(work, "d/f.txt"), []byte("theirs, longer\n"), 0o644))
		}, fserr.CodeConflict},
		{"the entry pinned", func(w *WriteTarget) cond { return cond{entry: &w.Info.key, verb: "removed"} }, nil, ""},
		{"the entry replaced", func(w *WriteTarget) cond { return cond{entry: &w.Info.key, verb: "removed"} }, func(t *testing.T, work string) {
			must(t, os.WriteFile(filepath.Join(work, "d/other"), []byte("old\n"), 0o644))
			must(t, os.Rename(filepath.Join(work, "d/other"), filepath.Join(work, "d/f.txt")))
		}, fserr.CodeConflict},
		{"the parent moved", func(*WriteTarget) cond { return cond{} }, func(t *testing.T, work string) {
			must(t, os.Rename(filepath.Join(work, "d"), filepath.Join(work, "e")))
		}, fserr.CodeConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newJournalFixture(t)
			must(t, os.MkdirAll(filepath.Join(fx.work, "d"), 0o755))
			must(t, os.WriteFile(filepath.Join(fx.work, "d/f.txt"), []byte("old\n"), 0o644))
			s := fx.open(nil)
			w, err := s.OpenWriteTarget("d/f.txt", false)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			seen := ""
			Seam = func(p string) {
				if p == "test.checked" {
					seen = p
					if tc.meddle != nil {
						tc.meddle(t, fx.work)
					}
				}
			}
			defer func() { Seam = nil }()
			acted := false
			_, err = s.change([]*WriteTarget{w}, func(tx *Tx) error {
				tx.require(w, tc.c(w))
				if err := tx.recheck("test.checked", w); err != nil {
					return err
				}
				acted = true
				return nil
			})
			if seen == "" {
				t.Fatal("the seam did not fire")
			}
			switch {
			case tc.code == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.code != "" && (err == nil || fserr.AsError(err).Code != tc.code):
				t.Errorf("got %v, want %s", err, tc.code)
			case tc.code != "" && acted:
				t.Error("the act ran after a failed re-check")
			}
		})
	}
}

// TestMkdirOneChange: mkdir of a path whose parents are missing is one
// change: one record naming every directory made, parents first.
func TestMkdirOneChange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists []string // directories there before
		p      string
		want   []string // the record's paths
	}{
		{"parent there", []string{"a"}, "a/b", []string{"a/b"}},
		{"parents missing", nil, "a/b/c", []string{"a", "a/b", "a/b/c"}},
		{"some parents missing", []string{"a"}, "a/b/c/d", []string{"a/b", "a/b/c", "a/b/c/d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newJournalFixture(t)
			for _, d := range tc.exists {
				must(t, os.MkdirAll(filepath.Join(fx.work, d), 0o755))
			}
			s := fx.open(nil)
			locks := 0
			Seam = func(p string) {
				if p == "change.lock" {
					locks++
				}
			}
			defer func() { Seam = nil }()
			shown, created, err := s.Mkdir(tc.p)
			if err != nil || !created || shown != tc.p {
				t.Fatalf("Mkdir(%s) = %q, %v, %v", tc.p, shown, created, err)
			}
			if locks != 1 {
				t.Errorf("Mkdir(%s) took the locks %d times, want once", tc.p, locks)
			}
			var recs []Change
			must(t, s.Changes(func(c Change) bool { recs = append(recs, c); return true }))
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			var got []string
			for _, pc := range recs[0].Paths {
				if pc.Before != nil || pc.After == nil || pc.After.Type != "dir" {
					t.Errorf("%s: %+v -> %+v, want a directory made", pc.Path, pc.Before, pc.After)
				}
				got = append(got, pc.Path)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("the record names %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChangeSteps: a change of several steps locks the roots of the
// paths it names, refuses a step elsewhere, records once what its
// caller notes, and, past Made, records even when a later step fails.
func TestChangeSteps(t *testing.T) {
	fx := newJournalFixture(t)
	other := filepath.Join(fx.base, "other")
	must(t, os.MkdirAll(other, 0o755))
	s := fx.open(func(p *policy.Policy) { p.WriteRoots = []string{other} })

	// A step in a root the change did not name.
	_, err := s.Change([]string{"a.txt"}, "", func(tx *Tx) error {
		_, err := tx.Put(filepath.Join(other, "b.txt"), []byte("b\n"), 0o644, nil)
		return err
	})
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConflict {
		t.Errorf("a step outside the roots the change named: %v, want conflict", err)
	}
	if _, err := os.Stat(filepath.Join(other, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b.txt was written: %v", err)
	}

	// Steps, then the swap, then a step that fails: recorded all the same.
	failed := errors.New("a later step failed")
	id, err := s.Change([]string{"d/a.txt", "l"}, "", func(tx *Tx) error {
		if err := tx.Mkdir("d"); err != nil {
			return err
		}
		if _, err := tx.Put("d/a.txt", []byte("a\n"), 0o600, nil); err != nil {
			return err
		}
		if err := tx.Swap(); err != nil {
			return err
		}
		tx.Note(PathChange{Path: "d", After: &FileState{Type: "dir"}})
		tx.Made()
		if err := tx.Symlink("l", "d/a.txt"); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || id == "" {
		t.Fatalf("Change = %q, %v; want an id and the step's failure", id, err)
	}
	c, err := s.ChangeByID(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Paths) != 2 || c.Paths[0].Path != "d/a.txt" || c.Paths[0].After == nil || c.Paths[0].After.Mode != "0600" || c.Paths[1].Path != "d" {
		t.Errorf("the record: %+v", c.Paths)
	}
	if target, err := os.Readlink(filepath.Join(fx.work, "l")); err != nil || target != "d/a.txt" {
		t.Errorf("the symlink: %q, %v", target, err)
	}
	if ids := historyIDs(t, s); len(ids) != 1 {
		t.Errorf("%d records, want 1: %v", len(ids), ids)
	}
}

// TestStepsLeaveWhatTookTheName: an undo's steps act only on what the
// name still holds: a file where the change's symlink was, a file where
// its directory was, and a file swapped in over a symlink being
// replaced each stay, as a conflict, and nothing is recorded.
func TestStepsLeaveWhatTookTheName(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(nil)
	// A file renamed over the name: made while the old entry lives, so
	// it never reuses the old entry's inode number.
	precious := func(name string) string {
		p := filepath.Join(fx.work, name)
		must(t, os.WriteFile(p+".new", []byte("PRECIOUS\n"), 0o644))
		must(t, os.Rename(p+".new", p))
		return p
	}
	survives := func(what string, err error, p string) {
		t.Helper()
		if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeConflict {
			t.Errorf("%s: %v, want conflict", what, err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "PRECIOUS\n" {
			t.Errorf("%s: %s holds %q (%v), want it kept", what, p, b, err)
		}
	}
	n := len(historyIDs(t, s))

	p := precious("lx")
	_, err := s.Change([]string{"lx"}, "", func(tx *Tx) error { return tx.RemoveLink("lx", "x.txt") })
	survives("RemoveLink over a file", err, p)

	must(t, os.Symlink("y.txt", filepath.Join(fx.work, "ly")))
	_, err = s.Change([]string{"ly"}, "", func(tx *Tx) error { return tx.RemoveLink("ly", "x.txt") })
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeConflict {
		t.Errorf("RemoveLink of a symlink to another target: %v, want conflict", err)
	}
	if target, err := os.Readlink(filepath.Join(fx.work, "ly")); err != nil || target != "y.txt" {
		t.Errorf("the other symlink: %q, %v; want it kept", target, err)
	}

	p = precious("d")
	_, err = s.Change([]string{"d"}, "", func(tx *Tx) error {
		_, err := tx.RemoveEmptyDir("d", false)
		return err
	})
	survives("RemoveEmptyDir over a file", err, p)

	// A symlink replaced by another: a file swapped in at the re-check.
	must(t, os.Symlink("a", filepath.Join(fx.work, "lz")))
	Seam = func(point string) {
		if point == "symlink.checked" {
			precious("lz")
		}
	}
	_, err = s.Symlink("lz", "b")
	Seam = nil
	survives("Symlink over a file swapped in", err, filepath.Join(fx.work, "lz"))

	if ids := historyIDs(t, s); len(ids) != n {
		t.Errorf("%d records, want %d: a step that changed nothing recorded something", len(ids), n)
	}
}
