package ops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// pagingSandbox is a sandbox over dir whose limits edit sets (the rest
// the defaults: no item cap, a byte budget of 1 GiB), with a journal of
// its own.
func pagingSandbox(t *testing.T, dir string, limits func(l *policy.Limits)) *sandbox.Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(dir)
	p.Journal.State = filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".journal")
	p.Limits.MaxResults = 0
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

// pageCall is one call of a list command through its descriptor: the
// values set sets, in the json form (the fields of its result a test
// reads: the list under key, count, truncated, limit, next_cursor).
type pageCall struct {
	op    *spec.Op
	key   string // the list's name in the result: lines, rows, files, changes
	set   func(in *spec.Input)
	stdin string // standard input of each call, when it reads "-"
	form  string // "" is json
	exact bool
}

type pageOut struct {
	items     []json.RawMessage
	count     int64
	truncated bool
	limit     string
	next      string
	size      int // the page's JSON
}

func (c pageCall) run(t *testing.T, sb *sandbox.Sandbox, cursor string) (pageOut, error) {
	t.Helper()
	in := spec.NewInput(c.op)
	c.set(in)
	in.Cursor = cursor
	in.Form = c.form
	if in.Form == "" {
		in.Form = "json"
	}
	in.Exact = c.exact
	if c.stdin != "" {
		sb = sb.ForCall() // standard input is read once a call: each page has its own
		sb.SetStdin(strings.NewReader(c.stdin))
	}
	v, err := c.op.Run(context.Background(), sb, in)
	if err != nil {
		return pageOut{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Count      int64  `json:"count"`
		Truncated  bool   `json:"truncated"`
		Limit      string `json:"limit"`
		NextCursor string `json:"next_cursor"`
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &raw)
	out := pageOut{count: m.Count, truncated: m.Truncated, limit: m.Limit, next: m.NextCursor, size: len(b)}
	if l, ok := raw[c.key]; ok && string(l) != "null" {
		if err := json.Unmarshal(l, &out.items); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	return out, nil
}

// pageAll pages the call to its end (a page without next_cursor) and
// checks each page: count is its items, a cut names a policy limit, and
// every page but the last gives at least one item. It returns the items
// of every page in order, and the pages.
func (c pageCall) pageAll(t *testing.T, sb *sandbox.Sandbox) ([]json.RawMessage, []pageOut) {
	t.Helper()
	var all []json.RawMessage
	var pages []pageOut
	cursor := ""
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("more than 10000 pages")
		}
		p, err := c.run(t, sb, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		if int64(len(p.items)) != p.count {
			t.Fatalf("page %d: count %d, %d items", i, p.count, len(p.items))
		}
		pages = append(pages, p)
		all = append(all, p.items...)
		if p.next == "" {
			if p.truncated {
				t.Fatalf("page %d: truncated by %s without next_cursor", i, p.limit)
			}
			return all, pages
		}
		if !p.truncated || (p.limit != "max_results" && p.limit != "max_result_bytes") {
			t.Fatalf("page %d: next_cursor with truncated %v, limit %q", i, p.truncated, p.limit)
		}
		if p.count == 0 {
			t.Fatalf("page %d: a cut page gave nothing", i)
		}
		cursor = p.next
	}
}

// samePages checks that paging the call under max_results = 3, and under
// a small max_result_bytes, gives exactly what one unbounded call gives.
func samePages(t *testing.T, dir string, c pageCall, budget int64) {
	t.Helper()
	whole, err := c.run(t, pagingSandbox(t, dir, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if whole.truncated || whole.next != "" {
		t.Fatalf("the unbounded call was cut: %+v", whole)
	}
	for _, lim := range []struct {
		name string
		set  func(l *policy.Limits)
	}{
		{"max_results=3", func(l *policy.Limits) { l.MaxResults = 3 }},
		{fmt.Sprintf("max_result_bytes=%d", budget), func(l *policy.Limits) { l.MaxResultBytes = budget }},
		{"both", func(l *policy.Limits) { l.MaxResults = 2; l.MaxResultBytes = budget }},
	} {
		got, pages := c.pageAll(t, pagingSandbox(t, dir, lim.set))
		if !sameItems(got, whole.items) {
			t.Errorf("%s: %d pages give\n%s\nwant\n%s", lim.name, len(pages), joinItems(got), joinItems(whole.items))
		}
		if len(whole.items) > 3 && len(pages) < 2 {
			t.Errorf("%s: %d items in one page", lim.name, len(whole.items))
		}
	}
}

func sameItems(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func joinItems(items []json.RawMessage) string {
	var s []string
	for _, it := range items {
		s = append(s, string(it))
	}
	return strings.Join(s, "\n")
}

// pagingText is 40 short lines (each under the line cut a small budget
// makes, 64 bytes): quotes, a tab, non-ASCII, bytes that are not UTF-8,
// numbers for -n, repeats for -u, and a last line without a newline.
func pagingText() string {
	var b strings.Builder
	for i := range 40 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "%d\tzeta \"q\" %d\n", (i*37)%23-7, i)
		case 1:
			fmt.Fprintf(&b, "%d.5\técho %d\n", (i*11)%17, i%4)
		case 2:
			fmt.Fprintf(&b, "alpha\\%d\xff\xfe\tx\n", i%3)
		case 3:
			fmt.Fprintf(&b, "%d\tsame\n", i%2)
		default:
			fmt.Fprintf(&b, "-%d\tnaïve 日本 %d\n", i%6, i)
		}
	}
	b.WriteString("99\tlast")
	return b.String()
}

func pagingDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte(pagingText()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSlicePaging: slice paged by max_results and by max_result_bytes,
// each page resumed from the one before's next_cursor, gives exactly
// the unbounded slice, for non-negative and negative bounds, from a file
// and from standard input, in the json form and the text form.
func TestSlicePaging(t *testing.T) {
	dir := pagingDir(t)
	bounds := [][]any{{}, {int64(5)}, {int64(5), int64(30)}, {int64(-10)}, {int64(3), int64(-4)},
		{int64(-20), int64(-5)}, {int64(-100), int64(12)}, {int64(0), int64(0)}, {int64(50)}, {nil, int64(7)}}
	for _, src := range []string{"t.txt", "-"} {
		for _, exact := range []bool{false, true} {
			for _, bd := range bounds {
				name := fmt.Sprintf("%s %v exact=%v", src, bd, exact)
				t.Run(name, func(t *testing.T) {
					c := pageCall{op: sliceOp, key: "lines", exact: exact, set: func(in *spec.Input) {
						in.Set("path", src)
						if len(bd) > 0 && bd[0] != nil {
							in.Set("start", bd[0])
						}
						if len(bd) > 1 {
							in.Set("end", bd[1])
						}
					}}
					if exact {
						c.form = "text"
					}
					if src == "-" {
						c.stdin = pagingText()
					}
					samePages(t, dir, c, 100)
				})
			}
		}
	}
}

// TestSlicePagingLineNumbers: a page's line is the number of its first
// line in the file, and total is the file's count on the page that read
// to the end.
func TestSlicePagingLineNumbers(t *testing.T) {
	dir := pagingDir(t)
	sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 4 })
	c := pageCall{op: sliceOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "t.txt").Set("start", int64(2)) }}
	in := spec.NewInput(sliceOp)
	c.set(in)
	in.Form = "json"
	want := int64(3)
	for {
		v, err := sliceOp.Run(context.Background(), sb, in)
		if err != nil {
			t.Fatal(err)
		}
		r := v.(SliceResult)
		if r.Count > 0 && (r.Line == nil || *r.Line != want) {
			t.Fatalf("page from line %d says line %v", want, r.Line)
		}
		want += r.Count
		if r.NextCursor == "" {
			if r.Total == nil || *r.Total != 41 {
				t.Fatalf("last page: total %v, want 41", r.Total)
			}
			return
		}
		in.Cursor = r.NextCursor
	}
}

// TestSortPaging: sort's pages (-n, -r, -u, keys) are the whole sorted
// output cut in turn.
func TestSortPaging(t *testing.T) {
	dir := pagingDir(t)
	opts := []map[string]any{{}, {"numeric": true}, {"reverse": true}, {"unique": true},
		{"numeric": true, "reverse": true, "unique": true}, {"key": []string{"2"}}, {"key": []string{"2"}, "unique": true},
		{"ignore-case": true, "unique": true}, {"stable": true, "key": []string{"1n"}}}
	for _, o := range opts {
		for _, exact := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v exact=%v", o, exact), func(t *testing.T) {
				c := pageCall{op: sortOp, key: "lines", exact: exact, set: func(in *spec.Input) {
					in.Set("path", "t.txt")
					for k, v := range o {
						in.Set(k, v)
					}
				}}
				if exact {
					c.form = "text"
				}
				samePages(t, dir, c, 100)
			})
		}
	}
}

// TestCutPaging: cut's rows, split at a delimiter, a regex or as CSV,
// with -s dropping lines, page to the whole.
func TestCutPaging(t *testing.T) {
	dir := pagingDir(t)
	csv := "a,b,c\n\"x,1\",\"y\nz\",3\n,,\n1,2,3\n4,5,6\n\"q\"\"\",7,8\n9\n10,11\n"
	for i := range 20 {
		csv += fmt.Sprintf("row %d,\"%d\"\"\",naïve %d\r\n", i, i*i, i%3)
	}
	os.WriteFile(filepath.Join(dir, "c.csv"), []byte(csv), 0o644)
	cases := []map[string]any{
		{"path": "t.txt", "fields": "1"},
		{"path": "t.txt", "fields": "2-", "only-delimited": true},
		{"path": "t.txt", "fields": "1,3", "delimiter": " "},
		{"path": "t.txt", "fields": "2", "delimiter": " ", "only-delimited": true},
		{"path": "t.txt", "fields": "1-2", "delimiter": "[0-9]", "regex": true},
		{"path": "c.csv", "fields": "1,3", "csv": true},
		{"path": "c.csv", "fields": "2", "csv": true, "only-delimited": true},
	}
	for _, o := range cases {
		for _, exact := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v exact=%v", o, exact), func(t *testing.T) {
				c := pageCall{op: cutOp, key: "rows", exact: exact, set: func(in *spec.Input) {
					for k, v := range o {
						in.Set(k, v)
					}
				}}
				if exact {
					c.form = "text"
				}
				samePages(t, dir, c, 60)
			})
		}
	}
}

// TestStatPaging: stat of several paths pages its files[] (a missing
// path is exists:false) by the path arguments; a denied path is an error
// of the page that reached it, once.
func TestStatPaging(t *testing.T) {
	dir := pagingDir(t)
	var paths []string
	for i := range 14 {
		name := fmt.Sprintf("f%02d", i)
		if i%3 != 1 { // every third one missing
			os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", i)), 0o644)
		}
		paths = append(paths, name)
	}
	c := pageCall{op: statOp, key: "files", set: func(in *spec.Input) {
		in.Set("path", "t.txt").Set("more_paths", paths)
	}}
	samePages(t, dir, c, 300)

	// Errors: a denied path is reported by the page that reached it,
	// never again.
	sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 2 })
	c = pageCall{op: statOp, key: "files", set: func(in *spec.Input) {
		in.Set("path", "f00").Set("more_paths", []string{"f01", "../x", "f02", "../z", "f03", "f04", "../y"})
	}}
	var errs []string
	cursor := ""
	for range 10 {
		in := spec.NewInput(statOp)
		c.set(in)
		in.Form, in.Cursor = "json", cursor
		v, err := statOp.Run(context.Background(), sb, in)
		if err != nil {
			t.Fatal(err)
		}
		r := v.(StatFilesResult)
		for _, e := range r.Errors {
			errs = append(errs, e.Path)
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if got := strings.Join(errs, " "); got != "../x ../z ../y" {
		t.Errorf("errors over the pages: %s", got)
	}
}

// TestPagingCursorMisuse: a cursor made for another command, other
// arguments or another format, or one that does not decode, is usage.
func TestPagingCursorMisuse(t *testing.T) {
	dir := pagingDir(t)
	sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 3 })
	slice := pageCall{op: sliceOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "t.txt") }}
	p, err := slice.run(t, sb, "")
	if err != nil || p.next == "" {
		t.Fatalf("no cursor: %v %+v", err, p)
	}
	good := p.next
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-2] ^= 0x20
	others := map[string]pageCall{
		"sort":       {op: sortOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "t.txt") }},
		"cut":        {op: cutOp, key: "rows", set: func(in *spec.Input) { in.Set("path", "t.txt").Set("fields", "1") }},
		"other args": {op: sliceOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "t.txt").Set("start", int64(1)) }},
		"text form":  {op: sliceOp, key: "lines", form: "text", exact: true, set: func(in *spec.Input) { in.Set("path", "t.txt") }},
		"stat":       {op: statOp, key: "files", set: func(in *spec.Input) { in.Set("path", "t.txt").Set("more_paths", []string{"t.txt"}) }},
		"history":    {op: historyOp, key: "changes", set: func(in *spec.Input) {}},
	}
	for name, c := range others {
		if _, err := c.run(t, sb, good); fserr.AsError(err).Code != fserr.CodeUsage {
			t.Errorf("%s with slice's cursor: %v, want usage", name, err)
		}
	}
	other := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 4 })
	if _, err := slice.run(t, other, good); fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("another policy: %v, want usage", err)
	}
	for name, bad := range map[string]string{
		"not base64": good + "!",
		"cut short":  good[:8],
		"flipped":    base64.RawURLEncoding.EncodeToString(flipped),
		"garbage":    base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef{}")),
		"long":       strings.Repeat("A", 5000),
	} {
		if _, err := slice.run(t, sb, bad); fserr.AsError(err).Code != fserr.CodeUsage {
			t.Errorf("%s cursor: %v, want usage", name, err)
		}
	}
	if p, err := slice.run(t, sb, good); err != nil || p.count != 3 {
		t.Errorf("the cursor itself: %v %+v", err, p)
	}
}

// TestPagingBudget: under max_result_bytes = 65536 no JSON result of a
// list of long lines passes it by more than its last item.
func TestPagingBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(dir, 0o755)
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "%04d %s \"é\"\t%s\n", (i*7919)%400, strings.Repeat("ab", 200+i%300), strings.Repeat("\x01", i%40))
	}
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(b.String()), 0o644)
	for _, c := range []pageCall{
		{op: sliceOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "big.txt") }},
		{op: sliceOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "big.txt").Set("start", int64(-300)) }},
		{op: sortOp, key: "lines", set: func(in *spec.Input) { in.Set("path", "big.txt") }},
		{op: cutOp, key: "rows", set: func(in *spec.Input) { in.Set("path", "big.txt").Set("fields", "1-2,4").Set("delimiter", " ") }},
	} {
		sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResultBytes = 65536; l.MaxLineBytes = 4000 })
		_, pages := c.pageAll(t, sb)
		if len(pages) < 3 {
			t.Errorf("%s: %d pages", c.op.Name, len(pages))
		}
		for i, p := range pages {
			if p.next != "" && p.limit != "max_result_bytes" {
				t.Errorf("%s page %d: cut by %s", c.op.Name, i, p.limit)
			}
			last := len(p.items[len(p.items)-1])
			if p.size > 65536+last {
				t.Errorf("%s page %d: %d bytes of JSON, over 65536 by more than its last item (%d)", c.op.Name, i, p.size, last)
			}
		}
	}
}
