//go:build unix

package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// stateFixture: fsbox's state in every place the door keeps out, each
// holding something a reader must never see, all below one read root.
//
//	home/.local/state/fsbox/journal   the default journal base (the user's
//	                                  edit of proj/token.txt: TOKEN-OLD)
//	other/j                           another policy's [journal] dir
//	                                  (its edit of w2/t2.txt: J2-OLD)
//	home/.config/fsbox                fsbox's configuration directory
//	logs/audit.jsonl                  the audit log (beside logs/app.log)
type stateFixture struct {
	t                                  *testing.T
	base, home, proj, state, cfg, logs string
	otherJ                             string
}

func newStateFixture(t *testing.T) *stateFixture {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &stateFixture{t: t, base: base, home: filepath.Join(base, "home")}
	fx.proj = filepath.Join(fx.home, "proj")
	fx.state = filepath.Join(fx.home, ".local", "state", "fsbox")
	fx.cfg = filepath.Join(fx.home, ".config", "fsbox")
	fx.logs = filepath.Join(base, "logs")
	fx.otherJ = filepath.Join(base, "other", "j")
	mustWrite(t, filepath.Join(fx.proj, "token.txt"), "TOKEN-OLD\n")
	mustWrite(t, filepath.Join(fx.proj, "notes.md"), "notes\n")
	mustWrite(t, filepath.Join(base, "w2", "t2.txt"), "J2-OLD\n")
	mustWrite(t, filepath.Join(fx.cfg, "config.toml"), "# CONFIG-SECRET\n")
	mustWrite(t, filepath.Join(fx.logs, "audit.jsonl"), "{\"AUDIT-SECRET\":1}\n")
	mustWrite(t, filepath.Join(fx.logs, "app.log"), "app\n")
	// The user's edit under the built-in default, and another policy's,
	// each journal on.
	p := policy.DefaultPolicy(fx.proj)
	p.Journal.State = fx.state
	fx.edit(p, "token.txt", "TOKEN-NEW\n")
	q := policy.DefaultPolicy(filepath.Join(base, "w2"))
	q.Journal.Dir = fx.otherJ
	fx.edit(q, "t2.txt", "J2-NEW\n")
	return fx
}

func (fx *stateFixture) edit(p *policy.Policy, name, content string) {
	s, err := New(p, fx.home)
	if err != nil {
		fx.t.Fatal(err)
	}
	defer s.Close()
	w, err := s.OpenWriteTarget(name, false)
	if err != nil {
		fx.t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Commit(strings.NewReader(content), 1<<20, CommitOptions{}); err != nil {
		fx.t.Fatal(err)
	}
}

// reader is a policy that reads the whole base: workdir proj, read root
// base, the audit log in logs/; with deny, token.txt is denied (a policy
// without deny rules resolves a missing path another way).
func (fx *stateFixture) reader(deny bool) *Sandbox {
	p := policy.DefaultPolicy(fx.proj)
	p.ReadRoots = []string{fx.base}
	if deny {
		p.Paths.Deny = []string{"**/token.txt"}
	}
	p.Journal.State = fx.state
	p.ConfigDir = fx.cfg
	p.Audit.Log = filepath.Join(fx.logs, "audit.jsonl")
	s, err := New(p, fx.home)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() { s.Close() })
	return s
}

// journalFile is a file below the journal base j (its first journal's
// changes.jsonl).
func journalFile(t *testing.T, j string) string {
	ents, err := os.ReadDir(j)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			return filepath.Join(j, e.Name(), "changes.jsonl")
		}
	}
	t.Fatalf("no journal in %s", j)
	return ""
}

// objectFile is a prior version kept in the first journal below j.
func objectFile(t *testing.T, j string) string {
	objects := filepath.Join(filepath.Dir(journalFile(t, j)), "objects")
	ents, err := os.ReadDir(objects)
	if err != nil || len(ents) == 0 {
		t.Fatalf("no object in %s: %v", objects, err)
	}
	return filepath.Join(objects, ents[0].Name())
}

var stateLeaks = []string{"TOKEN-OLD", "J2-OLD", "token.txt", "t2.txt", "CONFIG-SECRET", "AUDIT-SECRET"}

// TestStateUnreadable: below each of fsbox's state places (the default
// journal base, a directory holding the journal marker, the
// configuration directory) and the audit log itself, every read is
// denied with rule own_file, however it is asked for: read, wc's
// opener, stat, explain, ls, a walk (grep -r, find) that counts what it
// passes over in skipped.denied, a missing name (never not_found, which
// would tell what exists there), a symlink in the workdir leading there.
// The directory itself may be stat'ed and listed: it shows nothing.
// Fails on c24bc27: every read succeeded.
func TestStateUnreadable(t *testing.T) {
	for _, deny := range []bool{true, false} {
		t.Run(map[bool]string{true: "deny rules", false: "no deny rules"}[deny], func(t *testing.T) { testStateUnreadable(t, deny) })
	}
}

func testStateUnreadable(t *testing.T, deny bool) {
	fx := newStateFixture(t)
	s := fx.reader(deny)
	if st := s.Journal(); st.Enabled {
		t.Fatalf("the reader's journal is on (%+v): its default place lies in its read root", st)
	}
	for _, c := range []struct {
		name      string
		dir, file string // the place (or the directory holding the audit log), and a file below it
		what      string // in the refusal
		listed    int    // entries ls shows of dir; -1: dir itself lies below the place
	}{
		{"default journal base", filepath.Join(fx.state, "journal"), journalFile(t, filepath.Join(fx.state, "journal")), "fsbox's default journal directory", 0},
		{"marked journal", fx.otherJ, journalFile(t, fx.otherJ), "a journal of fsbox (it holds FSBOX-JOURNAL.TAG)", 0},
		{"marked journal, one root's", filepath.Dir(journalFile(t, fx.otherJ)), journalFile(t, fx.otherJ), "a journal of fsbox", -1},
		{"marked journal, an object", filepath.Join(filepath.Dir(journalFile(t, fx.otherJ)), "objects"), objectFile(t, fx.otherJ), "a journal of fsbox", -1},
		{"config dir", fx.cfg, filepath.Join(fx.cfg, "config.toml"), "fsbox's configuration directory", 0},
		{"audit log", fx.logs, filepath.Join(fx.logs, "audit.jsonl"), "is fsbox's audit log", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			denied := func(op string, err error) {
				t.Helper()
				e := fserr.AsError(err)
				if err == nil || e.Code != fserr.CodeDenied || e.Rule != fserr.RuleOwnFile || !strings.Contains(e.Msg, c.what) {
					t.Errorf("%s: %v (rule %q), want denied, own_file, naming %q", op, err, e.Rule, c.what)
				}
			}
			f, err := s.Open(c.file)
			if err == nil {
				f.Close()
			}
			denied("read", err)
			o := s.NewOpener()
			f, err = o.Open(c.file)
			if err == nil {
				f.Close()
			}
			o.Close()
			denied("wc", err)
			_, err = s.Lstat(c.file)
			denied("stat", err)
			for _, need := range []Need{NeedReadFile, NeedReadAny, NeedLook} {
				_, err = s.Probe(need, c.file, 0, "")
				denied("explain "+string(need), err)
			}
			if c.listed == 0 {
				_, err = s.Open(filepath.Join(c.dir, "no-such-file"))
				denied("read a missing name", err)
				_, err = s.Open(filepath.Join(c.dir, "no-such-dir", "x"))
				denied("read a missing name deeper", err)
			}
			// A symlink elsewhere in the read root that leads there.
			link := filepath.Join(fx.base, "link-"+strings.ReplaceAll(c.name, " ", "-"))
			target, _ := filepath.Rel(fx.base, c.file)
			mustSymlink(t, target, link)
			_, err = s.Open(link)
			denied("read through a symlink", err)
			_, err = s.Probe(NeedReadAny, link, 0, "")
			denied("explain through a symlink", err)
			if c.listed == 0 {
				// A missing name through a symlink to the directory.
				dlink := link + "-dir"
				target, _ := filepath.Rel(fx.base, c.dir)
				mustSymlink(t, target, dlink)
				_, err = s.Open(filepath.Join(dlink, "no-such-file"))
				denied("read a missing name through a symlinked directory", err)
				_, err = s.Lstat(filepath.Join(dlink, "no-such-dir", "x"))
				denied("stat a missing name through a symlinked directory", err)
			}

			if c.listed < 0 {
				_, err := s.Lstat(c.dir)
				denied("stat of the directory", err)
				_, err = s.OpenDir(c.dir)
				denied("ls of the directory", err)
				_, err = s.Walk(context.Background(), c.dir, WalkOptions{MaxDepth: -1}, func(e *Entry) error { e.Release(); return nil })
				denied("walk of the directory", err)
				return
			}
			// The directory itself: described, listed empty.
			if _, err := s.Lstat(c.dir); err != nil {
				t.Errorf("stat of the directory: %v", err)
			}
			d, err := s.OpenDir(c.dir)
			if err != nil {
				t.Fatalf("ls: %v", err)
			}
			l, err := d.ReadDir()
			d.Close()
			if err != nil || len(l.Entries) != c.listed || l.Denied == 0 {
				t.Errorf("ls: %d entries (%v), %d denied, err %v; want %d shown, the rest denied", len(l.Entries), l.Entries, l.Denied, err, c.listed)
			}
			// grep -r, find: nothing below is reported or read; what is
			// passed over counts as denied.
			n := 0
			sk, err := s.Walk(context.Background(), c.dir, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1}, func(e *Entry) error {
				defer e.Release()
				if e.Type == "file" {
					if f, err := e.Open(); err == nil {
						b, _ := io.ReadAll(f)
						f.Close()
						for _, leak := range stateLeaks {
							if strings.Contains(string(b), leak) {
								t.Errorf("walk read %s, holding %q", e.Path, leak)
							}
						}
					}
				}
				n++
				return nil
			})
			if err != nil || n != c.listed || sk.Denied == 0 {
				t.Errorf("walk: %d entries, skipped %+v, err %v; want %d, the rest denied", n, sk, err, c.listed)
			}
		})
	}
	// A walk of the whole read root reads none of it either.
	_, err := s.Walk(context.Background(), fx.base, WalkOptions{Hidden: true, NoIgnore: true, Follow: true, MaxDepth: -1}, func(e *Entry) error {
		defer e.Release()
		if e.Type != "file" {
			return nil
		}
		f, err := e.Open()
		if err != nil {
			return nil
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		for _, leak := range stateLeaks {
			if strings.Contains(string(b), leak) {
				t.Errorf("walk of the read root read %s, holding %q", e.Path, leak)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateUnwritable: no change lands in fsbox's state either: not
// below a journal marker (another policy's journal inside this one's
// write root: what it holds is what that policy's undo writes back),
// not in the configuration directory (a policy planted there would apply
// at the next plain fsbox), not below the default journal base; the
// marker itself cannot be removed, nor a tree that holds a journal.
func TestStateUnwritable(t *testing.T) {
	fx := newStateFixture(t)
	p := policy.DefaultPolicy(fx.home)
	p.WriteRoots = []string{filepath.Join(fx.base, "other")}
	p.Journal.State = fx.state
	p.ConfigDir = fx.cfg
	s, err := New(p, fx.home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jf := journalFile(t, fx.otherJ)
	for _, c := range []struct{ name, path string }{
		{"write below a marked journal", filepath.Join(filepath.Dir(jf), "objects", "x")},
		{"overwrite a journal's changes", jf},
		{"the marker", filepath.Join(fx.otherJ, journalMarker)},
		{"plant a policy in the config dir", filepath.Join(fx.cfg, "config.toml")},
		{"below the default journal base", filepath.Join(fx.state, "journal", "x")},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, op := range []struct {
				name string
				open func(string) (*WriteTarget, error)
			}{{"write", func(p string) (*WriteTarget, error) { return s.OpenWriteTarget(p, true) }}, {"rm/mv", s.OpenEntry}} {
				w, err := op.open(c.path)
				if err == nil {
					w.Close()
				}
				if e := fserr.AsError(err); err == nil || e.Rule != fserr.RuleOwnFile {
					t.Errorf("%s %s: %v, want denied (own_file)", op.name, c.path, err)
				}
			}
		})
	}
	// rm -r of a marked journal: refused whole.
	w, err := s.OpenEntry(fx.otherJ)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Remove(w, true)
	w.Close()
	if e := fserr.AsError(err); err == nil || e.Rule != fserr.RuleOwnFile || !strings.Contains(e.Msg, "holds a journal of fsbox") {
		t.Errorf("rm -r of a tree holding a journal: %v, want denied (own_file)", err)
	}
	if _, err := os.Stat(jf); err != nil {
		t.Errorf("the journal: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fx.otherJ, journalMarker)); err != nil {
		t.Errorf("the marker: %v", err)
	}
}

// TestJournalMarker: every journal fsbox makes holds the marker, its
// base too; a journal made before markers gets one the next time it is
// opened to record a change. A call that only reads makes none.
func TestJournalMarker(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, jdir := filepath.Join(base, "work"), filepath.Join(base, "j")
	mustWrite(t, filepath.Join(work, "a.txt"), "a\n")
	p := policy.DefaultPolicy(work)
	p.Journal.Dir = jdir
	change := func() {
		s, err := New(p, base)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w, err := s.OpenWriteTarget("a.txt", false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Commit(strings.NewReader("b\n"), 1<<20, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	change()
	sub := filepath.Dir(journalFile(t, jdir))
	for _, d := range []string{jdir, sub} {
		b, err := os.ReadFile(filepath.Join(d, journalMarker))
		if err != nil || !strings.HasPrefix(string(b), "Signature: fsbox journal\n") {
			t.Errorf("%s: marker %q, %v", d, b, err)
		}
	}
	// A journal of the days before markers: marked again by the next
	// change, not by a read.
	for _, d := range []string{jdir, sub} {
		if err := os.Remove(filepath.Join(d, journalMarker)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	s.ReadsJournal()
	s.Journal()
	s.Close()
	if _, err := os.Lstat(filepath.Join(jdir, journalMarker)); err == nil {
		t.Errorf("a call that only reads the journal wrote its marker")
	}
	change()
	for _, d := range []string{jdir, sub} {
		if _, err := os.Lstat(filepath.Join(d, journalMarker)); err != nil {
			t.Errorf("%s: no marker after a change: %v", d, err)
		}
	}
}
