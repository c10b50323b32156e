package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestUndoPlanAndApply: the plan of an undo lists each step with what it
// restores, in the order the apply runs them, and the apply is one
// change: the locks taken once, one record (naming the change it takes
// back), whatever the change was.
func TestUndoPlanAndApply(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d/x.txt": "x\n", "d/e/y.txt": "y\n"} // and d/lx -> x.txt
	for _, tc := range []struct {
		name string
		do   func(sb *sandbox.Sandbox, dir string) error
		// the plan's steps, as action:path (a move: action:from>path),
		// before the files swap, the files, and after.
		first, files, then string
	}{
		{name: "write",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Write(ctx, sb, WriteOptions{Path: "a.txt", Content: strings.NewReader("new\n")})
				return err
			},
			files: "restore:a.txt"},
		{name: "write a new file",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Write(ctx, sb, WriteOptions{Path: "n.txt", Content: strings.NewReader("new\n")})
				return err
			},
			files: "delete:n.txt"},
		{name: "mkdir -p",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Mkdir(ctx, sb, "m/n/o")
				return err
			},
			then: "rmdir:m/n/o rmdir:m/n rmdir:m"},
		{name: "mv",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Move(ctx, sb, "d", "d2", false)
				return err
			},
			first: "move:d2>d"},
		{name: "mv --force",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Move(ctx, sb, "a.txt", "b.txt", true)
				return err
			},
			first: "move:b.txt>a.txt", files: "restore:b.txt"},
		{name: "rm -r",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Remove(ctx, sb, "d", true)
				return err
			},
			first: "mkdir:d mkdir:d/e",
			files: "restore:d/e/y.txt restore:d/x.txt",
			then:  "symlink:d/lx"},
		{name: "patch",
			do: func(sb *sandbox.Sandbox, _ string) error {
				_, err := Patch(ctx, sb, PatchOptions{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: b.txt\n*** Add File: c.txt\n+c\n*** End Patch\n"})
				return err
			},
			files: "restore:a.txt restore:b.txt delete:c.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, dir := journaled(t, files, func(p *policy.Policy) { p.Commands["rm"] = true })
			if err := os.Symlink("x.txt", filepath.Join(dir, "d/lx")); err != nil {
				t.Fatal(err)
			}
			before := undoTree(t, dir)
			if err := tc.do(sb, dir); err != nil {
				t.Fatal(err)
			}
			c, err := sb.ChangeByID(newestID(t, sb))
			if err != nil {
				t.Fatal(err)
			}
			p, err := planUndo(sb, c, false)
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			for _, part := range []struct {
				what string
				got  []undoStep
				want string
			}{{"first", p.first, tc.first}, {"files", p.files, tc.files}, {"then", p.then, tc.then}} {
				if got := stepsString(part.got); got != part.want {
					t.Errorf("the plan's %s: %q, want %q", part.what, got, part.want)
				}
			}
			locks := 0
			sandbox.Seam = func(point string) {
				if point == "change.lock" {
					locks++
				}
			}
			defer func() { sandbox.Seam = nil }()
			n := len(changeIDs(t, sb))
			var r UndoResult
			id, err := sb.Change(undoPaths(c), c.ID, func(tx *sandbox.Tx) error { return p.apply(sb, tx, &r) })
			sandbox.Seam = nil
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if locks != 1 {
				t.Errorf("the undo took the locks %d times, want once", locks)
			}
			if ids := changeIDs(t, sb); len(ids) != n+1 {
				t.Errorf("%d records after the undo, want %d", len(ids), n+1)
			}
			u, err := sb.ChangeByID(id)
			if err != nil || u.Undoes != c.ID {
				t.Errorf("the undo's record: %+v, %v; want it to undo %s", u, err, c.ID)
			}
			sameTree(t, "undone", undoTree(t, dir), before)
		})
	}
}

func stepsString(steps []undoStep) string {
	var out []string
	for _, st := range steps {
		s := st.action + ":" + st.path
		if st.from != "" {
			s = st.action + ":" + st.from + ">" + st.path
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func changeIDs(t *testing.T, sb *sandbox.Sandbox) []string {
	t.Helper()
	var ids []string
	if err := sb.Changes(func(c sandbox.Change) bool { ids = append(ids, c.ID); return true }); err != nil {
		t.Fatal(err)
	}
	return ids
}

func newestID(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	ids := changeIDs(t, sb)
	if len(ids) == 0 {
		t.Fatal("no change recorded")
	}
	return ids[0]
}
