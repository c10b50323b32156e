//go:build unix

package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// TestJournalUnreadableThroughReadRoot is the red team's finding 4 of
// issue 39. The user edits token.txt under the built-in default (the
// journal, at its default place ~/.local/state/fsbox/journal, keeps the
// old version). A strict policy then has read_roots = ["~"] and
// deny = ["**/token.txt"]: its own journal is off (its default place
// overlaps the root), yet `grep -r TOKEN ~ --hidden --no-ignore` printed
// the old token.txt from the journal's objects, and changes.jsonl named
// the denied path with its hashes and sizes. The walk must read nothing
// of the journal and count what it passed over as denied.
// Fails on c24bc27: the walk opened the journal's objects and
// changes.jsonl.
func TestJournalUnreadableThroughReadRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	proj := filepath.Join(home, "proj")
	state := filepath.Join(home, ".local", "state", "fsbox")
	mustWrite(t, filepath.Join(proj, "token.txt"), "TOKEN-OLD-0123456789\n")
	mustWrite(t, filepath.Join(proj, "notes.md"), "plain notes\n")

	// The user's edit, journal on.
	p := policy.DefaultPolicy(proj)
	p.Journal.State = state
	s, err := New(p, home)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriteTarget("token.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(strings.NewReader("TOKEN-NEW-9876543210\n"), 1<<20, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	if st := s.Journal(); !st.Enabled || st.Dir != filepath.Join(state, "journal") {
		t.Fatalf("the user's journal: %+v", st)
	}

	// The strict policy.
	strict := policy.DefaultPolicy(proj)
	strict.ReadRoots = []string{home}
	strict.Paths.Deny = []string{"**/token.txt"}
	strict.Journal.State = state
	ss, err := New(strict, home)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	if st := ss.Journal(); st.Enabled {
		t.Fatalf("the strict policy's own journal is on (%+v): the case needs it off", st)
	}
	var seen []string
	sk, err := ss.Walk(context.Background(), home, WalkOptions{Hidden: true, NoIgnore: true, MaxDepth: -1}, func(e *Entry) error {
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
		for _, leak := range []string{"TOKEN", "token.txt"} {
			if strings.Contains(string(b), leak) {
				t.Errorf("%s (%s) holds %q: the journal was read", e.Path, e.Rel, leak)
			}
		}
		seen = append(seen, e.Rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != "proj/notes.md" {
		t.Errorf("files read: %q, want only proj/notes.md", seen)
	}
	// token.txt, and what lies in the journal's base (its marker and the
	// workdir's journal): denied, never read.
	if sk.Denied < 2 {
		t.Errorf("skipped.denied = %d, want token.txt and the journal's entries counted", sk.Denied)
	}
	// Named directly, through the read root: denied.
	objects := filepath.Join(state, "journal")
	if err := filepath.WalkDir(objects, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if f, err := ss.Open(p); err == nil {
			f.Close()
			t.Errorf("read %s through the read root", p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
