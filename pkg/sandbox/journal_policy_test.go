//go:build unix

package sandbox

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// The journal's [journal] rules (issue 26): identity, the layout before
// identities, crash plans under a stricter policy, and max_bytes.

// TestRecoveryUnderStricterPolicy: a loose policy's two-file batch (a.txt
// and cfg.env) is killed after its plan was written. A stricter policy on
// the same workdir, which denies *.env, may not finish it: the plan and
// both files stay as they are, roots counts it in recovery_pending, a
// change to a.txt (overlapping the plan) is conflict and one to b.txt
// (disjoint) goes ahead. The loose policy's next change finishes it.
// Fails on 6a21fbf: the strict policy's first change finishes the plan,
// writing cfg.env, which it may not write.
func TestRecoveryUnderStricterPolicy(t *testing.T) {
	if os.Getenv("FSBOX_STRICTCRASH_CHILD") != "" {
		strictCrashChild(t)
		return
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, state := filepath.Join(base, "work"), filepath.Join(base, "state")
	for _, n := range []string{"a.txt", "cfg.env"} {
		mustWrite(t, filepath.Join(work, n), "old\n")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecoveryUnderStricterPolicy$")
	cmd.Env = append(os.Environ(), "FSBOX_STRICTCRASH_CHILD=1", "FSBOX_STRICTCRASH_BASE="+base)
	if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("child: %v (want exit 3 after the plan)\n%s", err, out)
	}
	read := func(n string) string {
		b, _ := os.ReadFile(filepath.Join(work, n))
		return string(b)
	}

	strict := policy.DefaultPolicy(work)
	strict.Journal.State = state
	strict.Paths.Deny = []string{"**/*.env"}
	s, err := New(strict, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.Journal().RecoveryPending; n != 1 {
		t.Errorf("recovery_pending %d under the strict policy, want 1", n)
	}
	put := func(s *Sandbox, name string) error {
		w, err := s.OpenWriteTarget(name, true)
		if err != nil {
			return err
		}
		defer w.Close()
		_, err = w.Commit(strings.NewReader("mine\n"), 1<<20, CommitOptions{})
		return err
	}
	if err := put(s, "a.txt"); fserr.AsError(err).Code != fserr.CodeConflict {
		t.Errorf("a change to a.txt, which the pending plan names: %v, want conflict", err)
	}
	if err := put(s, "b.txt"); err != nil {
		t.Errorf("a change to b.txt, disjoint from the plan: %v, want it to go ahead", err)
	}
	for _, n := range []string{"a.txt", "cfg.env"} {
		if got := read(n); got != "old\n" {
			t.Errorf("%s holds %q: the strict policy finished a plan naming a path it may not write", n, got)
		}
	}

	loose := policy.DefaultPolicy(work)
	loose.Journal.State = state
	s2, err := New(loose, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, _, err := s2.Mkdir("d"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.txt", "cfg.env"} {
		if got := read(n); got != "new\n" {
			t.Errorf("%s holds %q after the loose policy's change, want the plan finished", n, got)
		}
	}
	if n := s2.Journal().RecoveryPending; n != 0 {
		t.Errorf("recovery_pending %d after the plan was finished", n)
	}
}

func strictCrashChild(t *testing.T) {
	base := os.Getenv("FSBOX_STRICTCRASH_BASE")
	p := policy.DefaultPolicy(filepath.Join(base, "work"))
	p.Journal.State = filepath.Join(base, "state")
	s, err := New(p, base)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	for _, n := range []string{"a.txt", "cfg.env"} {
		w, err := s.OpenWriteTarget(n, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Put(w, []byte("new\n"), 1<<20, CommitOptions{Unchanged: true}); err != nil {
			t.Fatal(err)
		}
	}
	Seam = func(p string) {
		if p == "batch.planned" {
			os.Exit(3)
		}
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the batch was not interrupted")
}

// journalFixture is a workdir with a sandbox whose journal lives in
// state; write changes name.
type journalFixture struct {
	t                 *testing.T
	base, work, state string
}

func newJournalFixture(t *testing.T) *journalFixture {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &journalFixture{t: t, base: base, work: filepath.Join(base, "work"), state: filepath.Join(base, "state")}
	if err := os.MkdirAll(fx.work, 0o755); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *journalFixture) open(mod func(*policy.Policy)) *Sandbox {
	p := policy.DefaultPolicy(fx.work)
	p.Journal.State = fx.state
	if mod != nil {
		mod(p)
	}
	s, err := New(p, fx.base)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() { s.Close() })
	return s
}

func (fx *journalFixture) write(s *Sandbox, name, content string) string {
	w, err := s.OpenWriteTarget(name, true)
	if err != nil {
		fx.t.Fatal(err)
	}
	defer w.Close()
	r, err := w.Commit(strings.NewReader(content), 1<<30, CommitOptions{})
	if err != nil {
		fx.t.Fatal(err)
	}
	return r.ChangeID
}

func historyIDs(t *testing.T, s *Sandbox) []string {
	t.Helper()
	var ids []string
	if err := s.Changes(func(c Change) bool { ids = append(ids, c.ID); return true }); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestJournalIdentity: a journal whose identity record does not match its
// root is neither read nor applied, and roots reports it; a directory
// made anew at a root's path gets a fresh journal, the old one reported
// and left alone.
func TestJournalIdentity(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(nil)
	fx.write(s, "a.txt", "one\n")
	fx.write(s, "a.txt", "two\n")
	dir := s.Journal().Roots[0].Dir
	s.Close()

	// A record naming another root (as a copied or planted journal would).
	idf := filepath.Join(dir, identityFile)
	b, _ := os.ReadFile(idf)
	var id identity
	if err := json.Unmarshal(b, &id); err != nil {
		t.Fatal(err)
	}
	good := b
	id.Ino++
	bad, _ := json.Marshal(id)
	mustWrite(t, idf, string(bad))
	s = fx.open(nil)
	if ids := historyIDs(t, s); len(ids) != 0 {
		t.Errorf("history read a journal whose identity does not match: %v", ids)
	}
	st := s.Journal()
	if len(st.Ignored) != 1 || st.Ignored[0].Dir != dir || !strings.Contains(st.Ignored[0].Reason, "neither read nor applied") {
		t.Errorf("roots' journal report %+v, want %s ignored", st, dir)
	}
	if id := fx.write(s, "a.txt", "three\n"); id != "" {
		t.Errorf("a change was recorded (%s) in a journal whose identity does not match", id)
	}
	s.Close()
	mustWrite(t, idf, string(good))

	// The workdir made anew at the same path: a fresh journal; the old
	// one stays, reported.
	if err := os.RemoveAll(fx.work); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fx.work, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(fx.work, "placeholder"), "") // another inode than the old directory's, whatever the file system reuses
	s = fx.open(nil)
	if ids := historyIDs(t, s); len(ids) != 0 {
		t.Errorf("a new directory at the workdir's path sees the old one's history: %v", ids)
	}
	if id := fx.write(s, "b.txt", "b\n"); id != "1" {
		t.Errorf("the new directory's first change is %q, want 1 (a fresh journal)", id)
	}
	s.Close()
	s = fx.open(nil)
	st = s.Journal()
	if st.Roots[0].Dir == dir {
		t.Errorf("the new directory uses the old one's journal %s", dir)
	}
	if len(st.Ignored) != 1 || st.Ignored[0].Dir != dir || !strings.Contains(st.Ignored[0].Reason, "earlier directory") {
		t.Errorf("roots' journal report %+v, want the old journal %s reported", st, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, changesFile)); err != nil {
		t.Errorf("the old journal was not left alone: %v", err)
	}
}

// TestJournalLegacyLayout: the workdir's journal of the layout before
// identities (its directory named by the workdir's path hash) is taken
// over by the workdir's first change, its history kept; a journal of
// that layout written straight into an explicit [journal] dir (shared
// by tenants: whose it was is not recorded) is left alone and reported.
func TestJournalLegacyLayout(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(nil)
	legacy := filepath.Join(fx.state, "journal", s.work.pathHash())
	rec := `{"change_id":"1","time":"2026-01-01T00:00:00Z","command":"write","paths":[{"path":"old.txt","before":null,"after":{"type":"file","sha256":"` + strings.Repeat("a", 64) + `","size":1,"mode":"0644"}}],"bytes":0}` + "\n"
	mustWrite(t, filepath.Join(legacy, changesFile), rec)
	mustWrite(t, filepath.Join(legacy, countersFile), "2 0\n")
	if id := fx.write(s, "new.txt", "n\n"); id != "2" {
		t.Errorf("the first change after the old layout is %q, want 2", id)
	}
	if ids := historyIDs(t, s); strings.Join(ids, " ") != "2 1" {
		t.Errorf("history after taking over the old journal: %v, want 2 1", ids)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the old journal's directory is still there: %v", err)
	}
	var c Change
	s.Changes(func(x Change) bool { c = x; return false })
	if !c.Kept {
		t.Error("a record of the old layout (no kept field) reads as not kept")
	}

	shared := filepath.Join(fx.base, "shared")
	mustWrite(t, filepath.Join(shared, changesFile), rec)
	s2 := fx.open(func(p *policy.Policy) { p.Journal.Dir = shared })
	if ids := historyIDs(t, s2); len(ids) != 0 {
		t.Errorf("a shared dir's journal of the old layout was read: %v", ids)
	}
	st := s2.Journal()
	if len(st.Ignored) != 1 || st.Ignored[0].Dir != shared || !strings.Contains(st.Ignored[0].Reason, "not recorded") {
		t.Errorf("roots' journal report %+v, want %s reported", st, shared)
	}
	if b, _ := os.ReadFile(filepath.Join(shared, changesFile)); string(b) != rec {
		t.Error("the shared dir's old journal was changed")
	}
}

// diskUse is what dir holds on disk as max_bytes counts it: each file's
// size plus 4 KiB per file or directory.
func diskUse(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n += 4096
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// TestJournalBound: max_bytes bounds everything the journal holds (file
// sizes plus 4 KiB per file or directory, records included), changes
// that keep no content (mkdir, empty files) included; whole changes go,
// oldest first; a change too large to keep is recorded without its
// prior content (kept false), one whose record alone is too large
// without its paths (omitted).
// Fails on 6a21fbf: only kept content was counted, so 300-path changes of
// empty files grew the journal without bound.
func TestJournalBound(t *testing.T) {
	const max = 96 << 10
	fx := newJournalFixture(t)
	s := fx.open(func(p *policy.Policy) { p.Journal.MaxBytes = max })
	for i := range 40 {
		b := s.NewBatch()
		for k := range 40 {
			w, err := s.OpenWriteTarget(fmt.Sprintf("d%02d/%s%02d", i, strings.Repeat("n", 100), k), true)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Put(w, nil, 1<<20, CommitOptions{}); err != nil {
				t.Fatal(err)
			}
			defer w.Close()
		}
		if _, err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Mkdir(fmt.Sprintf("m%02d/x/y", i)); err != nil {
			t.Fatal(err)
		}
		fx.write(s, "f.txt", strings.Repeat(fmt.Sprint(i), 2000))
		if use := diskUse(t, s.Journal().Roots[0].Dir); use > max {
			t.Fatalf("after %d rounds the journal holds %d bytes, over max_bytes = %d", i+1, use, max)
		}
	}
	ids := historyIDs(t, s)
	if len(ids) == 0 || len(ids) > 60 || ids[0] != "120" {
		t.Errorf("after eviction history holds %v, want the newest changes, 120 first", ids)
	}

	// One change larger than the bound: recorded, without its content.
	fx.write(s, "big.txt", strings.Repeat("b", max))
	fx.write(s, "big.txt", "small")
	var c Change
	s.Changes(func(x Change) bool { c = x; return false })
	if c.Kept || c.Bytes != 0 || len(c.Paths) != 1 {
		t.Errorf("a change whose prior content exceeds max_bytes: %+v, want kept false", c)
	}
	if use := diskUse(t, s.Journal().Roots[0].Dir); use > max {
		t.Errorf("the journal holds %d bytes, over max_bytes = %d", use, max)
	}
	// One whose record alone is too large: recorded without its paths.
	b := s.NewBatch()
	for k := range 400 {
		w, err := s.OpenWriteTarget(fmt.Sprintf("wide/%s%03d", strings.Repeat("w", 200), k), true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := b.Put(w, nil, 1<<20, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Changes(func(x Change) bool { c = x; return false })
	if c.Kept || c.Omitted != 400 || len(c.Paths) != 0 {
		t.Errorf("a change whose record exceeds max_bytes: kept %v, omitted %d, %d paths", c.Kept, c.Omitted, len(c.Paths))
	}
	if use := diskUse(t, s.Journal().Roots[0].Dir); use > max {
		t.Errorf("the journal holds %d bytes, over max_bytes = %d", use, max)
	}
}

// TestJournalFindAndTail: undo ID's bisection and history's read from
// the end agree with a whole read, across block boundaries, with torn
// and damaged lines in the list.
func TestJournalFindAndTail(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(nil)
	fx.write(s, "a.txt", "a")
	j := s.work.jn
	var b strings.Builder
	var want []int
	for i := 1; i <= 3000; i++ {
		if i%97 == 0 {
			b.WriteString("{damaged\n")
			continue
		}
		if i%500 == 0 {
			continue // a gap, as a crash between taking an id and writing leaves
		}
		pad := strings.Repeat("p", (i*7919)%3000)
		fmt.Fprintf(&b, `{"change_id":"%d","time":"2026-01-01T00:00:00Z","command":"write %s","paths":[],"bytes":0}`+"\n", i, pad)
		want = append(want, i)
	}
	b.WriteString(`{"change_id":"3001","time":`) // torn
	mustWrite(t, filepath.Join(j.dir, changesFile), b.String())
	mustWrite(t, filepath.Join(j.dir, countersFile), "3002 0\n")
	var got []int
	tl, err := j.tail()
	if err != nil {
		t.Fatal(err)
	}
	for {
		c, ok, err := tl.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append([]int{c.seq}, got...)
	}
	tl.close()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read from the end: %d changes, want %d", len(got), len(want))
	}
	for _, seq := range []int{1, 2, 96, 97, 98, 499, 500, 501, 1500, 2999, 3000, 3001, 4000} {
		c, found, err := j.find(seq)
		wantFound := seq <= 3000 && seq%97 != 0 && seq%500 != 0
		if err != nil || found != wantFound || found && c.seq != seq {
			t.Errorf("find(%d): %d %v %v, want found %v", seq, c.seq, found, err, wantFound)
		}
	}
	// A change recorded after a torn line is not lost with it.
	id := fx.write(s, "a.txt", "b")
	if _, err := s.ChangeByID(id); err != nil {
		t.Errorf("the change after a torn line: %v", err)
	}
}
