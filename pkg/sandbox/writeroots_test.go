//go:build unix

// write_roots (SPEC §4, "Several writable roots [door]"): more writable
// directories, absolute, with ${VAR} and ~/ as for workdir; each must
// exist and be a directory; none may overlap another or the workdir; none
// may hold the policy file, the audit log or the journal. WritableRoots
// lists the workdir, then the write roots, canonical, in the policy's
// order.
//
// Fails on 6a21fbf: write_roots is an unknown key there, and Policy has no
// WriteRoots, Sandbox no WritableRoots (the file does not compile).
package sandbox

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

func TestWriteRootsLoad(t *testing.T) {
	ls := newLoadSetup(t)
	b := ls.base
	for _, d := range []string{"wr/a", "wr/b", "wr/a/docs", "tenants/bob", "home/y", "logs", "outlogs", "work/sub", "jreal"} {
		if err := os.MkdirAll(filepath.Join(b, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(b, "wr/file"), "not a directory")
	mustSymlink(t, filepath.Join(b, "wr/a"), filepath.Join(b, "alink"))       // an alias of wr/a
	mustSymlink(t, filepath.Join(b, "work/sub"), filepath.Join(b, "sublink")) // leads into the workdir
	mustSymlink(t, "../../outlogs", filepath.Join(b, "wr/b/hop"))             // lies in a write root, leads out
	mustSymlink(t, "wr/b/hop", filepath.Join(b, "viahop"))
	mustSymlink(t, filepath.Join(b, "outlogs"), filepath.Join(b, "wr/b/abshop"))
	cfg := filepath.Join(ls.cfgDir, "policy.toml")
	work := "workdir = \"" + ls.work + "\"\n"
	roots := func(rs ...string) string {
		q := make([]string, len(rs))
		for i, r := range rs {
			q[i] = `"` + strings.ReplaceAll(r, "BASE", b) + `"`
		}
		return work + "write_roots = [" + strings.Join(q, ", ") + "]\n"
	}
	canon := func(rs ...string) []string {
		out := []string{ls.work}
		for _, r := range rs {
			out = append(out, filepath.Join(b, r))
		}
		return out
	}
	cases := []struct {
		name string
		body string
		env  fakeEnv
		file string   // the policy file ("" = cfg)
		want []string // WritableRoots, when it loads
		msg  []string // substrings of the config error, when it does not
	}{
		{name: "none", body: work, want: canon()},
		{name: "empty", body: roots(), want: canon()},
		{name: "two, in order", body: roots("BASE/wr/b", "BASE/wr/a"), want: canon("wr/b", "wr/a")},
		{name: "through a symlink", body: roots("BASE/alink"), want: canon("wr/a")},
		{name: "cleaned", body: roots("BASE/wr/./a/", "BASE/wr/x/../b"), want: canon("wr/a", "wr/b")},
		{name: "variable", body: roots("BASE/tenants/${TENANT}"), env: fakeEnv{"TENANT": "bob"}, want: canon("tenants/bob")},
		{name: "home", body: roots("~/y"), want: canon("home/y")},
		{name: "a read root inside a write root", body: roots("BASE/wr/a") + "read_roots = [\"" + b + "/wr/a/docs\"]\n", want: canon("wr/a")},
		{name: "a read root holding a write root", body: roots("BASE/wr/a") + "read_roots = [\"" + b + "/wr\"]\n", want: canon("wr/a")},
		{name: "a read root equal to a write root", body: roots("BASE/wr/a") + "read_roots = [\"" + b + "/wr/a\"]\n", want: canon("wr/a")},

		{name: "variable unset", body: roots("BASE/tenants/${TENANT}"), msg: []string{"line 2", "write_roots", "TENANT", "unset or empty"}},
		{name: "variable empty", body: roots("BASE/tenants/${TENANT}"), env: fakeEnv{"TENANT": ""}, msg: []string{"TENANT"}},
		{name: "variable with a slash", body: roots("BASE/tenants/${TENANT}"), env: fakeEnv{"TENANT": "bob/../../work"}, msg: []string{"TENANT"}},
		{name: "variable dotdot", body: roots("BASE/tenants/${TENANT}/x"), env: fakeEnv{"TENANT": ".."}, msg: []string{"TENANT"}},
		{name: "relative", body: roots("wr/a"), msg: []string{"line 2", "not an absolute path"}},
		{name: "missing", body: roots("BASE/wr/nope"), msg: []string{"line 2", b + "/wr/nope", "does not exist"}},
		{name: "a file", body: roots("BASE/wr/file"), msg: []string{"line 2", b + "/wr/file"}},
		{name: "dangling symlink", body: roots("BASE/wr/b/hop/nope"), msg: []string{"write_roots"}},
		{name: "not a list", body: work + "write_roots = \"" + b + "/wr/a\"\n", msg: []string{"write_roots"}},

		{name: "inside the workdir", body: roots("BASE/work/sub"), msg: []string{"line 2", ls.work + " and " + b + "/work/sub overlap"}},
		{name: "into the workdir through a symlink", body: roots("BASE/sublink"), msg: []string{ls.work + " and " + b + "/work/sub overlap"}},
		{name: "the workdir itself", body: roots("BASE/work"), msg: []string{ls.work + " and " + ls.work + " overlap"}},
		{name: "holding the workdir", body: roots("BASE"), msg: []string{ls.work + " and " + b + " overlap"}},
		{name: "one inside another", body: roots("BASE/wr/a", "BASE/wr/a/docs"), msg: []string{b + "/wr/a and " + b + "/wr/a/docs overlap"}},
		{name: "one holding another", body: roots("BASE/wr/a/docs", "BASE/wr"), msg: []string{b + "/wr/a/docs and " + b + "/wr overlap"}},
		{name: "twice", body: roots("BASE/wr/a", "BASE/wr/b", "BASE/wr/a"), msg: []string{b + "/wr/a and " + b + "/wr/a overlap"}},
		{name: "twice through a symlink", body: roots("BASE/wr/a", "BASE/alink"), msg: []string{b + "/wr/a and " + b + "/wr/a overlap"}},

		// fsbox's own files lie outside every write root.
		{name: "the policy file in a write root", body: roots("BASE/wr/a"), file: filepath.Join(b, "wr/a/p.toml"),
			msg: []string{"lies inside its own write root " + b + "/wr/a"}},
		{name: "the audit log in a write root", body: roots("BASE/wr/a") + "[audit]\nlog = \"" + b + "/wr/a/audit.jsonl\"\n",
			msg: []string{"[audit] log", "lies inside the write root " + b + "/wr/a"}},
		{name: "the audit log through a symlink lying in a write root", body: roots("BASE/wr/b") + "[audit]\nlog = \"" + b + "/viahop/audit.jsonl\"\n",
			msg: []string{"[audit] log", "lies inside the write root " + b + "/wr/b"}},
		{name: "the audit log through an absolute symlink lying in a write root", body: roots("BASE/wr/b") + "[audit]\nlog = \"" + b + "/wr/b/abshop/audit.jsonl\"\n",
			msg: []string{"[audit] log", "lies inside the write root " + b + "/wr/b"}},
		{name: "the audit log beside the write roots", body: roots("BASE/wr/a") + "[audit]\nlog = \"" + b + "/logs/audit.jsonl\"\n",
			want: canon("wr/a")},
		{name: "the journal in a write root", body: roots("BASE/wr/a") + "[journal]\ndir = \"" + b + "/wr/a/j\"\n",
			msg: []string{"[journal] dir", "overlaps the root " + b + "/wr/a"}},
		{name: "the journal holding a write root", body: roots("BASE/wr/a/docs") + "[journal]\ndir = \"" + b + "/wr/a\"\n",
			msg: []string{"[journal] dir", "overlaps the root " + b + "/wr/a/docs"}},
		{name: "the journal through a symlink lying in a write root", body: roots("BASE/wr/b") + "[journal]\ndir = \"" + b + "/viahop/j\"\n",
			msg: []string{"[journal] dir", "overlaps the root " + b + "/wr/b"}},
		{name: "the journal beside the write roots", body: roots("BASE/wr/a") + "[journal]\ndir = \"" + b + "/jreal/j\"\n",
			want: canon("wr/a")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			if file == "" {
				file = cfg
			}
			p, s, err := ls.load(t, file, c.body, c.env, file)
			if c.msg != nil {
				checkErr(t, err, fserr.CodeConfig, "")
				if err != nil {
					for _, m := range c.msg {
						if !strings.Contains(err.Error(), m) {
							t.Errorf("message %q lacks %q", err.Error(), m)
						}
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got := s.WritableRoots(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("WritableRoots %q, want %q", got, c.want)
			}
			if got := p.WritableDirs(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("WritableDirs %q, want %q", got, c.want)
			}
			// Each write root is writable: a file can be made and replaced
			// there, and its display name is absolute.
			for _, d := range c.want[1:] {
				w, err := s.OpenWriteTarget(filepath.Join(d, "probe.txt"), false)
				if err != nil {
					t.Errorf("OpenWrite in %s: %v", d, err)
					continue
				}
				if w.Path != filepath.Join(d, "probe.txt") {
					t.Errorf("a path in write root %s displays as %q, want it absolute", d, w.Path)
				}
				w.Close()
			}
		})
	}
}

// TestWriteRootsNew: a policy built in Go (not loaded from a file) gets
// the same refusals from New: an overlap, a missing or non-directory root.
// WritableRoots keeps the policy's order and gives canonical paths.
func TestWriteRootsNew(t *testing.T) {
	tr := newTree(t, t.TempDir())
	a, bdir := filepath.Join(tr.base, "wa"), filepath.Join(tr.base, "wb")
	for _, d := range []string{a, bdir, filepath.Join(a, "in")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, bdir, filepath.Join(tr.base, "wblink"))
	cases := []struct {
		name  string
		roots []string
		want  []string // nil: config
	}{
		{"two", []string{bdir, a}, []string{tr.work, bdir, a}},
		{"alias", []string{filepath.Join(tr.base, "wblink")}, []string{tr.work, bdir}},
		{"inside the workdir", []string{filepath.Join(tr.work, "a")}, nil},
		{"holding the workdir", []string{tr.base}, nil},
		{"the workdir", []string{tr.work}, nil},
		{"nested", []string{a, filepath.Join(a, "in")}, nil},
		{"twice", []string{bdir, filepath.Join(tr.base, "wblink")}, nil},
		{"missing", []string{filepath.Join(tr.base, "nope")}, nil},
		{"a file", []string{filepath.Join(tr.outside, "secret.txt")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := basePolicy(tr)
			p.WriteRoots = c.roots
			p.Journal.State = filepath.Join(tr.base, "state")
			s, err := New(p, tr.base)
			if c.want == nil {
				if err == nil {
					s.Close()
				}
				checkErr(t, err, fserr.CodeConfig, "")
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Close()
			if got := s.WritableRoots(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("WritableRoots %q, want %q", got, c.want)
			}
		})
	}
}

// TestWriteRootsDefaultJournalInside: a default journal place (the state
// directory) that lies in a write root turns the journal off, with the
// reason, as one in the workdir does; nothing is created there.
func TestWriteRootsDefaultJournalInside(t *testing.T) {
	tr := newTree(t, t.TempDir())
	wr := filepath.Join(tr.base, "wr")
	if err := os.MkdirAll(wr, 0o755); err != nil {
		t.Fatal(err)
	}
	p := basePolicy(tr)
	p.WriteRoots = []string{wr}
	p.Journal.State = filepath.Join(wr, "state")
	s, err := New(p, tr.base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Journal(); st.Enabled || !strings.Contains(st.Reason, "overlaps the root "+wr) {
		t.Errorf("default journal in a write root: %+v, want off naming %s", st, wr)
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(wr, "state")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory was made inside the write root (%v)", err)
	}
}

// TestReadRootInsideWritableRootIsWritable: "a read root inside a
// writable root is writable with it" (SPEC §4, [door]). A file below both
// is reached by its absolute path; a write there must be allowed, in a
// write root (where no relative spelling exists) and in the workdir.
func TestReadRootInsideWritableRootIsWritable(t *testing.T) {
	tr := newTree(t, t.TempDir())
	wr := filepath.Join(tr.base, "wr")
	for _, d := range []string{filepath.Join(wr, "docs"), filepath.Join(tr.work, "docs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := basePolicy(tr)
	p.WriteRoots = []string{wr}
	p.ReadRoots = append(p.ReadRoots, filepath.Join(wr, "docs"), filepath.Join(tr.work, "docs"))
	p.Journal.State = filepath.Join(tr.base, "state")
	s, err := New(p, tr.base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var refused []string
	for _, f := range []string{filepath.Join(wr, "docs", "new.txt"), filepath.Join(tr.work, "docs", "new.txt")} {
		w, err := s.OpenWriteTarget(f, false)
		if err != nil {
			refused = append(refused, fmt.Sprintf("write %s, below a read root inside a writable root: %v, want allowed", f, err))
			continue
		}
		w.Close()
	}
	if len(refused) > 0 {
		// Fails while the nested read root, matched first (the most
		// specific root), was read-only for writes.
		t.Error(strings.Join(refused, "\n"))
	}
}
