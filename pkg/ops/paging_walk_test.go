//go:build unix

package ops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// limitedSandbox is a sandbox over dir whose policy's limits set changes.
func limitedSandbox(t testing.TB, dir string, set func(*policy.Limits)) *sandbox.Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(dir)
	if set != nil {
		set(&p.Limits)
	}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// page is one call's answer, as JSON: its list and its next cursor.
type page struct {
	items  []json.RawMessage
	next   string
	limit  string
	raw    []byte
	result map[string]json.RawMessage
}

// runPage calls op through its descriptor with the values set gives it
// and the cursor, in form "json", and reads list from the answer.
func runPage(t testing.TB, sb *sandbox.Sandbox, op *spec.Op, set func(*spec.Input), cursor, list string) (page, error) {
	t.Helper()
	in := spec.NewInput(op)
	set(in)
	in.Cursor, in.Form = cursor, "json"
	r, err := op.Run(context.Background(), sb, in)
	if err != nil {
		return page{}, err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var p page
	p.raw, p.result = raw, m
	if err := json.Unmarshal(m[list], &p.items); err != nil {
		t.Fatalf("%s: no list %q in %s", op.Name, list, raw)
	}
	json.Unmarshal(m["next_cursor"], &p.next)
	json.Unmarshal(m["limit"], &p.limit)
	return p, nil
}

// pageThrough pages a call to its end and returns every item in order
// and the pages' count.
func pageThrough(t testing.TB, sb *sandbox.Sandbox, op *spec.Op, set func(*spec.Input), list string) ([]json.RawMessage, int) {
	t.Helper()
	var all []json.RawMessage
	cursor := ""
	for n := 1; ; n++ {
		p, err := runPage(t, sb, op, set, cursor, list)
		if err != nil {
			t.Fatalf("%s page %d: %v", op.Name, n, err)
		}
		all = append(all, p.items...)
		if p.next == "" {
			return all, n
		}
		if len(p.items) == 0 && n > 1 {
			t.Fatalf("%s page %d is empty but carries a cursor: paging would not end", op.Name, n)
		}
		if n > 100000 {
			t.Fatalf("%s: paging does not end", op.Name)
		}
		cursor = p.next
	}
}

// walkOrderTree has names that sort differently in walk order and in
// byte order of whole paths ("a/x" before "a-b"), hidden and ignored
// entries (a repository: .git makes its .gitignore apply), and empty
// directories.
var walkOrderTree = map[string]string{
	"a/x.txt": "1\n", "a/y/z.txt": "2\n", "a-b/c.txt": "3\n", "a.b": "4\n", "ab/": "", "b.txt": "5\n",
	"c/d/e/f.txt": "6\n", "c/d/g.txt": "7\n", "c/h/": "", ".hid/i.txt": "8\n", "j.txt": "9\n",
	".gitignore": "ign/\n", ".git/": "", "ign/k.txt": "10\n", "z/": "", "z/1": "", "z/2": "", "z/3": "", "z/4": "",
}

// TestFindPages: find paged by max_results, by --limit or by the byte
// budget gives, page after page, exactly the unbounded answer.
func TestFindPages(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, walkOrderTree)
	whole := limitedSandbox(t, dir, nil)
	for _, long := range []bool{false, true} {
		set := func(in *spec.Input) {
			if long {
				in.Set("long", true)
			}
		}
		list := "paths"
		if long {
			list = "entries"
		}
		want, _ := pageThrough(t, whole, findOp, set, list)
		if len(want) < 15 {
			t.Fatalf("the tree gives %d paths, want more", len(want))
		}
		for _, lim := range []func(*policy.Limits){
			func(l *policy.Limits) { l.MaxResults = 1 },
			func(l *policy.Limits) { l.MaxResults = 4 },
			func(l *policy.Limits) { l.MaxResultBytes = 30 },
			func(l *policy.Limits) { l.MaxResultBytes = 100 },
		} {
			sb := limitedSandbox(t, dir, lim)
			got, pages := pageThrough(t, sb, findOp, set, list)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("long=%v: the pages give\n%s\nwant\n%s", long, joinRaw(got), joinRaw(want))
			}
			if pages < 2 {
				t.Errorf("long=%v: %d page, want the limit to cut", long, pages)
			}
		}
		// --limit: the caller's cut pages too.
		limit := func(in *spec.Input) { set(in); in.Set("limit", int64(3)) }
		if got, _ := pageThrough(t, whole, findOp, limit, list); !reflect.DeepEqual(got, want) {
			t.Errorf("long=%v: --limit 3 pages give\n%s\nwant\n%s", long, joinRaw(got), joinRaw(want))
		}
	}
}

// TestLsPages: ls paged by each cut gives the unbounded listing.
func TestLsPages(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, walkOrderTree)
	whole := limitedSandbox(t, dir, nil)
	set := func(in *spec.Input) { in.Set("all", true) }
	want, _ := pageThrough(t, whole, lsOp, set, "entries")
	for _, lim := range []func(*policy.Limits){
		func(l *policy.Limits) { l.MaxResults = 1 },
		func(l *policy.Limits) { l.MaxResults = 3 },
		func(l *policy.Limits) { l.MaxResultBytes = 200 },
	} {
		sb := limitedSandbox(t, dir, lim)
		got, pages := pageThrough(t, sb, lsOp, set, "entries")
		if !reflect.DeepEqual(got, want) || pages < 2 {
			t.Errorf("%d pages give\n%s\nwant\n%s", pages, joinRaw(got), joinRaw(want))
		}
	}
}

// TestPageBudget: with max_result_bytes set, no page's list is longer
// than the budget by more than one item (a page holds at least one).
func TestPageBudget(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/%s.txt", i%7, strings.Repeat("n", 1+i%40))] = ""
	}
	tree(t, dir, files)
	for _, budget := range []int64{1, 64, 500, 4096} {
		sb := limitedSandbox(t, dir, func(l *policy.Limits) { l.MaxResultBytes = budget })
		cursor := ""
		for {
			p, err := runPage(t, sb, findOp, func(*spec.Input) {}, cursor, "paths")
			if err != nil {
				t.Fatal(err)
			}
			list, _ := json.Marshal(p.items)
			largest := 0
			for _, it := range p.items {
				largest = max(largest, len(it))
			}
			if int64(len(list)) > budget+int64(largest)+2 {
				t.Errorf("budget %d: a page's list has %d bytes (largest item %d)", budget, len(list), largest)
			}
			if len(p.items) == 0 {
				t.Fatalf("budget %d: an empty page", budget)
			}
			if p.next == "" {
				break
			}
			if p.limit != "max_result_bytes" {
				t.Errorf("budget %d: limit %q, want max_result_bytes", budget, p.limit)
			}
			cursor = p.next
		}
	}
}

// TestCursorRefused: a cursor made for another command, other values,
// another policy or another form, or that does not decode, is usage.
func TestCursorRefused(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, walkOrderTree)
	sb := limitedSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 2 })
	p, err := runPage(t, sb, findOp, func(*spec.Input) {}, "", "paths")
	if err != nil || p.next == "" {
		t.Fatalf("find under max_results 2: %v, next %q", err, p.next)
	}
	usage := func(what string, err error) {
		t.Helper()
		if fserr.AsError(err).Code != fserr.CodeUsage {
			t.Errorf("%s: %v, want usage", what, err)
		}
	}
	_, err = runPage(t, sb, findOp, func(in *spec.Input) { in.Set("hidden", true) }, p.next, "paths")
	usage("other arguments", err)
	_, err = runPage(t, sb, lsOp, func(*spec.Input) {}, p.next, "entries")
	usage("another command", err)
	other := limitedSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 3 })
	_, err = runPage(t, other, findOp, func(*spec.Input) {}, p.next, "paths")
	usage("another policy", err)
	in := spec.NewInput(findOp)
	in.Cursor, in.Form = p.next, "text"
	_, err = findOp.Run(context.Background(), sb, in)
	usage("another form", err)
	for _, bad := range []string{"x", "!!!", p.next[:len(p.next)-3], strings.Repeat("A", 5000), p.next + "AAAA"} {
		_, err = runPage(t, sb, findOp, func(*spec.Input) {}, bad, "paths")
		usage(fmt.Sprintf("cursor %.20q", bad), err)
	}
}

// FuzzFindCursor: whatever position a cursor names (forged with the
// call's own binding, so it is taken), find gives a suffix of the
// honest answer, never a path outside it (a denied or hidden one).
func FuzzFindCursor(f *testing.F) {
	for _, k := range []string{"", "a", "a/y", "a-b", "c/d", "../x", "/etc", ".hid", "ign/k.txt", "a//b", "\xff"} {
		f.Add(k)
	}
	dir := f.TempDir()
	tree(f, dir, walkOrderTree)
	p := policy.DefaultPolicy(dir)
	p.Paths.Deny = []string{"**/c/d/**"}
	sb, err := sandbox.New(p, "")
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	honest, _ := pageThrough(f, sb, findOp, func(*spec.Input) {}, "paths")
	f.Fuzz(func(t *testing.T, key string) {
		in := spec.NewInput(findOp)
		in.Form = "json"
		in.Cursor = seal(sb, in, Cursor{Key: key})
		pg, err := runPage(t, sb, findOp, func(*spec.Input) {}, in.Cursor, "paths")
		if err != nil {
			if fserr.AsError(err).Code != fserr.CodeUsage {
				t.Fatalf("cursor at %q: %v", key, err)
			}
			return
		}
		if len(pg.items) > len(honest) || !reflect.DeepEqual(pg.items, honest[len(honest)-len(pg.items):]) {
			t.Fatalf("cursor at %q gives\n%s\nnot a suffix of\n%s", key, joinRaw(pg.items), joinRaw(honest))
		}
	})
}

func joinRaw(items []json.RawMessage) string {
	var b strings.Builder
	for _, it := range items {
		b.Write(it)
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzCursorBody: a cursor that carries the call's own binding and any
// body at all (not only a well-formed position) is usage or gives a
// suffix of the honest answer; it never panics and never names a path
// the policy denies.
func FuzzCursorBody(f *testing.F) {
	for _, b := range []string{`{"k":"a/y"}`, `{"k":"c/d/e"}`, `{"n":-1}`, `{"k":1}`, `{"x":1}`, `{}`, ``, `null`, `{"k":"a"}{"k":"b"}`, "{\"k\":\"\xff\"}"} {
		f.Add([]byte(b))
	}
	dir := f.TempDir()
	tree(f, dir, walkOrderTree)
	p := policy.DefaultPolicy(dir)
	p.Paths.Deny = []string{"**/c/d/**"}
	sb, err := sandbox.New(p, "")
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	honest, _ := pageThrough(f, sb, findOp, func(*spec.Input) {}, "paths")
	f.Fuzz(func(t *testing.T, body []byte) {
		in := spec.NewInput(findOp)
		in.Form = "json"
		cursor := base64.RawURLEncoding.EncodeToString(append(binding(sb, in), body...))
		pg, err := runPage(t, sb, findOp, func(*spec.Input) {}, cursor, "paths")
		if err != nil {
			if fserr.AsError(err).Code != fserr.CodeUsage {
				t.Fatalf("body %q: %v", body, err)
			}
			return
		}
		if len(pg.items) > len(honest) || !reflect.DeepEqual(pg.items, honest[len(honest)-len(pg.items):]) {
			t.Fatalf("body %q gives\n%s\nnot a suffix of\n%s", body, joinRaw(pg.items), joinRaw(honest))
		}
		for _, it := range pg.items {
			if strings.Contains(string(it), "c/d/") {
				t.Fatalf("body %q gives the denied %s", body, it)
			}
		}
	})
}
