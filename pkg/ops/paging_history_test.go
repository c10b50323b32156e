package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// historyChanges makes n changes in dir through sb (writes, edits,
// appends over a few files, one of them in sub/), and an undo.
func historyChanges(t *testing.T, sb *sandbox.Sandbox, n int, root string) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("f%d.txt", i%4))
		if i%5 == 4 {
			p = filepath.Join(root, "sub", "s.txt")
		}
		var err error
		switch i % 3 {
		case 0:
			_, err = Write(ctx, sb, WriteOptions{Path: p, Content: stringsReader(fmt.Sprintf("v%d \"é\"\n", i))})
		case 1:
			_, err = Write(ctx, sb, WriteOptions{Path: p, Append: true, Content: stringsReader(fmt.Sprintf("more %d\n", i))})
		default:
			if _, err = Write(ctx, sb, WriteOptions{Path: p, Content: stringsReader("old\n")}); err == nil {
				_, err = Edit(ctx, sb, EditOptions{Path: p, Edits: []EditSpec{{Old: "old", New: fmt.Sprintf("new %d", i)}}})
			}
		}
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	if _, err := Undo(ctx, sb, "", false); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryPaging: history paged by max_results and by
// max_result_bytes, each page from the one before's next_cursor, gives
// exactly the changes one unbounded call lists, newest first: every
// change, those touching a path, and a directory's.
func TestHistoryPaging(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	historyChanges(t, pagingSandbox(t, dir, nil), 14, "")
	for _, path := range []string{"", "f1.txt", "sub", "."} {
		t.Run("path="+path, func(t *testing.T) {
			c := pageCall{op: historyOp, key: "changes", set: func(in *spec.Input) {
				if path != "" {
					in.Set("path", path)
				}
			}}
			samePages(t, dir, c, 600)
		})
	}
}

// TestHistoryPagingLimit: --limit cuts quietly (not truncated) but
// carries a cursor, and --limit N after it gives the next N changes.
func TestHistoryPagingLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	sb := pagingSandbox(t, dir, nil)
	historyChanges(t, sb, 9, "")
	all, err := History(context.Background(), sb, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	cursor := ""
	for range 20 {
		in := spec.NewInput(historyOp).Set("limit", int64(4))
		in.Form, in.Cursor = "json", cursor
		v, err := historyOp.Run(context.Background(), sb, in)
		if err != nil {
			t.Fatal(err)
		}
		r := v.(HistoryResult)
		if r.Truncated || r.Outcome().Cut != nil {
			t.Fatalf("--limit cut out loud: %+v", r)
		}
		for _, c := range r.Changes {
			ids = append(ids, c.ID)
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	var want []string
	for _, c := range all.Changes {
		want = append(want, c.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("pages of 4 give %v, want %v", ids, want)
	}
}

// TestHistoryPagingNewChanges: changes made between two pages are newer
// than the cursor: the next page goes on where the last one stopped,
// and a page is a suffix of what history lists now.
func TestHistoryPagingNewChanges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 3 })
	historyChanges(t, sb, 6, "")
	c := pageCall{op: historyOp, key: "changes", set: func(in *spec.Input) {}}
	first, err := c.run(t, sb, "")
	if err != nil || first.next == "" {
		t.Fatalf("%v %+v", err, first)
	}
	historyChanges(t, sb, 2, "")
	second, err := c.run(t, sb, first.next)
	if err != nil {
		t.Fatal(err)
	}
	all, err := History(context.Background(), pagingSandbox(t, dir, nil), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ch := range all.Changes {
		b, _ := json.Marshal(ch)
		want = append(want, string(b))
	}
	// Now: 3 newer changes (two and an undo), then the first page's 3,
	// then the second page's.
	for i, it := range second.items {
		if string(it) != want[6+i] {
			t.Fatalf("second page item %d: %s, want %s", i, it, want[6+i])
		}
	}
	if len(second.items) != 3 {
		t.Errorf("second page: %d changes", len(second.items))
	}
}

// TestHistoryPagingRoots: with a write root (a journal of its own, its
// ids prefixed), the journals merged newest first page to the whole.
func TestHistoryPagingRoots(t *testing.T) {
	base := t.TempDir()
	dir, other := filepath.Join(base, "w"), filepath.Join(base, "o")
	for _, d := range []string{dir, other} {
		os.MkdirAll(filepath.Join(d, "sub"), 0o755)
	}
	roots := func(p *policy.Policy) { p.WriteRoots = []string{other} }
	open := func(limits func(l *policy.Limits)) *sandbox.Sandbox {
		t.Helper()
		p := policy.DefaultPolicy(dir)
		p.Journal.State = filepath.Join(base, "journal")
		roots(p)
		if limits != nil {
			limits(&p.Limits)
		}
		sb, err := sandbox.New(p, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Close() })
		return sb
	}
	sb := open(nil)
	for i := range 3 {
		historyChanges(t, sb, 2+i, "")
		historyChanges(t, sb, 3, other)
	}
	c := pageCall{op: historyOp, key: "changes", set: func(in *spec.Input) {}}
	whole, err := c.run(t, sb, "")
	if err != nil {
		t.Fatal(err)
	}
	tagged := 0
	for _, it := range whole.items {
		var ch sandbox.Change
		json.Unmarshal(it, &ch)
		if _, n := splitChangeID(ch.ID); n == 0 {
			t.Fatalf("change id %q", ch.ID)
		}
		if tag, _ := splitChangeID(ch.ID); tag != "" {
			tagged++
		}
	}
	if tagged == 0 || tagged == len(whole.items) {
		t.Fatalf("%d of %d changes from the write root", tagged, len(whole.items))
	}
	for _, n := range []int64{1, 3, 4} {
		got, _ := c.pageAll(t, open(func(l *policy.Limits) { l.MaxResults = n }))
		if !sameItems(got, whole.items) {
			t.Errorf("max_results=%d: pages give\n%s\nwant\n%s", n, joinItems(got), joinItems(whole.items))
		}
	}
}
