package ops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// A change that changes nothing (SPEC edit row, [meet]): an edit or a
// patch whose result is the content read records nothing, says
// changed: false and leaves the file's inode alone; its precondition is
// still checked; undo afterwards takes back the change before it; write
// of the same bytes still commits.
func TestNoOpChangeIsNotJournalled(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"}, nil)
	if _, err := Edit(ctx, sb, EditOptions{Path: "a.txt", Edits: []EditSpec{{Old: "one", New: "two"}}}); err != nil {
		t.Fatal(err)
	}
	want := changeIDs(t, sb)
	if len(want) != 1 {
		t.Fatalf("after one edit the journal holds %v", want)
	}
	fi, _ := os.Stat(filepath.Join(dir, "a.txt"))
	sum := sha256Hex([]byte("two\n"))
	noops := map[string]func() (changed bool, id *string, err error){
		"edit old == new": func() (bool, *string, error) {
			r, err := Edit(ctx, sb, EditOptions{Path: "a.txt", Edits: []EditSpec{{Old: "two", New: "two"}}, ExpectSHA256: sum})
			return r.Changed, r.ChangeID, err
		},
		"edits that undo each other": func() (bool, *string, error) {
			r, err := Edit(ctx, sb, EditOptions{Path: "a.txt", Sequential: true, Edits: []EditSpec{{Old: "two", New: "three"}, {Old: "three", New: "two"}}})
			return r.Changed, r.ChangeID, err
		},
		"no edits": func() (bool, *string, error) {
			r, err := Edit(ctx, sb, EditOptions{Path: "a.txt"})
			return r.Changed, r.ChangeID, err
		},
		"patch giving the content back": func() (bool, *string, error) {
			r, err := Patch(ctx, sb, PatchOptions{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+two\n*** End Patch\n"})
			return r.Changed, r.ChangeID, err
		},
	}
	for name, call := range noops {
		changed, id, err := call()
		if err != nil || changed || id != nil {
			t.Errorf("%s: changed %v, change_id %v, err %v; want changed false, no change, no error", name, changed, id, err)
		}
		if got := changeIDs(t, sb); !slices.Equal(got, want) {
			t.Errorf("%s: the journal holds %v, want %v", name, got, want)
		}
	}
	if now, _ := os.Stat(filepath.Join(dir, "a.txt")); !os.SameFile(fi, now) {
		t.Errorf("a no-op rewrote a.txt (a new inode)")
	}
	// The precondition is checked first.
	_, err := Edit(ctx, sb, EditOptions{Path: "a.txt", Edits: []EditSpec{{Old: "two", New: "two"}}, ExpectSHA256: sha256Hex([]byte("other"))})
	if fserr.AsError(err).Code != fserr.CodeConflict {
		t.Errorf("a no-op edit with a wrong expect-sha256: %v, want conflict", err)
	}
	// undo takes back the one real change.
	u, err := Undo(ctx, sb, "", false)
	if err != nil || u.Undid != want[0] {
		t.Fatalf("undo: %+v %v, want change %s undone", u, err, want[0])
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n" {
		t.Errorf("after undo a.txt is %q", b)
	}
	// write of the same bytes commits.
	n := len(changeIDs(t, sb))
	if _, err := Write(ctx, sb, WriteOptions{Path: "b.txt", Content: stringsReader("bee\n")}); err != nil {
		t.Fatal(err)
	}
	if got := len(changeIDs(t, sb)); got != n+1 {
		t.Errorf("write of the same bytes: %d changes, want %d", got, n+1)
	}
}

// Under require_precondition a no-op edit without expect-sha256 is still
// refused: the precondition comes before the no-op.
func TestNoOpEditStillNeedsPrecondition(t *testing.T) {
	sb, _ := journaled(t, map[string]string{"a.txt": "one\n"}, func(p *policy.Policy) { p.Write.RequirePrecondition = true })
	_, err := Edit(context.Background(), sb, EditOptions{Path: "a.txt", Edits: []EditSpec{{Old: "one", New: "one"}}})
	if fserr.AsError(err).Code != fserr.CodePreconditionRequired {
		t.Errorf("got %v, want precondition_required", err)
	}
}
