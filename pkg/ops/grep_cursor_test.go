package ops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestGrepMatchJSONLen: Match.jsonLen (and binaryMatch's, and
// FileCount's) is exactly the length of the JSON the result prints, over
// random matches: context lines, control characters, invalid UTF-8,
// U+2028, HTML characters.
func TestGrepMatchJSONLen(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"a", "é", "\u2028", "\u2029", "\x00", "\x1f", "\t", "\n", "\"", "\\", "<", ">", "&", "\xff", "\xc3", "\xe2\x80", "日本", "\U0001F600", " ", "\x7f", "\r"}
	str := func() string {
		var b strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	strs := func() []string {
		if rng.Intn(3) == 0 {
			return nil
		}
		out := make([]string, rng.Intn(4))
		for i := range out {
			out[i] = str()
		}
		return out
	}
	num := func() int {
		switch rng.Intn(4) {
		case 0:
			return 0
		case 1:
			return rng.Intn(10)
		case 2:
			return rng.Intn(1 << 20)
		}
		return rng.Int()
	}
	for i := 0; i < 20000; i++ {
		m := Match{Path: str(), Line: int64(num()), Column: num(), Text: str(), TextTruncated: rng.Intn(2) == 0,
			TextBytes: num(), TextOffset: num(), Before: strs(), After: strs(), ContextTruncated: rng.Intn(2) == 0,
			Raw: []byte(str()), MatchLen: num()}
		var item any = &m
		if rng.Intn(8) == 0 {
			m.Binary = true
			item = binaryMatch(m)
		}
		b, err := marshalJSON(item)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.jsonLen(); got != int64(len(b)) {
			t.Fatalf("jsonLen %d, JSON %d: %s", got, len(b), b)
		}
		c := FileCount{Path: m.Path, Count: int64(num())}
		if b, _ = marshalJSON(c); c.jsonLen() != int64(len(b)) {
			t.Fatalf("FileCount jsonLen %d, JSON %d: %s", c.jsonLen(), len(b), b)
		}
		if b, _ = marshalJSON(m.Path); jsonStrLen(m.Path) != int64(len(b)) {
			t.Fatalf("jsonStrLen %d, JSON %d: %s", jsonStrLen(m.Path), len(b), b)
		}
	}
}

// grepTree writes the tree the paging tests search: names that stress
// walk order ("a", "a-b", "a.b", "a/x"), a file of many matches (several
// a line for -o), one whose single line is long, lines with control
// characters, invalid UTF-8 and U+2028.
func grepTree(t *testing.T, dir string) {
	t.Helper()
	var many strings.Builder
	for i := 1; i <= 90; i++ {
		switch {
		case i%7 == 0:
			fmt.Fprintf(&many, "plain line %d\n", i)
		case i%5 == 0:
			fmt.Fprintf(&many, "needle %d needle <&> needle \x01 \xff\u2028 end\n", i)
		default:
			fmt.Fprintf(&many, "line %d has a needle\n", i)
		}
	}
	long := strings.Repeat("abcdefghij", 300) + "needle" + strings.Repeat("0123456789", 200) + "needle tail"
	files := map[string]string{
		"a/one.txt":       "needle in a\nnot here\nneedle again\n",
		"a/x/deep.txt":    "x needle\n\nneedle x needle\n",
		"a/x/no.txt":      "nothing\n",
		"a-b/f.txt":       "needle a-b\n",
		"a.b/g.txt":       "before\nneedle a.b\nafter\n",
		"a.b/many.txt":    many.String(),
		"b/long.txt":      long,
		"b/z/last.txt":    "needle last\r\nneedle crlf\r\n",
		"top.txt":         "top needle\nno\nneedle top\n",
		"zz.txt":          "needle\n",
		"a0.txt":          "needle a0\n",
		"b/empty.txt":     "",
		"a/x/needle.txt":  "needle needle needle needle\n",
		"a-b/sub/h.txt":   "h needle\nh\nh needle\n",
		"a.b/sub/i.txt":   "needle i\n",
		"b/ctl.txt":       "needle \x1b[31m red\nneedle \x00? no: text\n",
		"b/utf/bad.txt":   "needle \xc3\x28 \xe2\x82 x\nneedle \u2028\u2029\n",
		"a-b/sub/zz.txt":  "needle\nneedle\nneedle\nneedle\n",
		"a/x/y/z/d.txt":   "needle deep\n",
		"a.b/sub/z/e.txt": "e needle\n",
	}
	// b/ctl.txt holds a NUL: a walk skips it as binary; named, it is
	// searched (see the paths of the runs).
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
}

// grepPager runs grep through its descriptor, as a face does: the
// cursor and the form go in the Input, so pagingOf runs.
type grepPager struct {
	set   func(in *spec.Input)
	key   string // matches, counts, paths
	form  string
	stdin string // standard input of each call
}

type grepPage struct {
	items     []json.RawMessage
	count     int64
	truncated bool
	limit     string
	next      string
	restarted bool
	size      int
}

func (c grepPager) run(t *testing.T, sb *sandbox.Sandbox, cursor string) (grepPage, error) {
	t.Helper()
	in := spec.NewInput(grepOp)
	c.set(in)
	in.Cursor = cursor
	in.Form = c.form
	if in.Form == "" {
		in.Form = "json"
	}
	if c.stdin != "" {
		// Standard input is read once a sandbox: a fresh one, under the
		// same policy, each call.
		fresh, err := sandbox.New(sb.Policy(), "")
		must(t, err)
		defer fresh.Close()
		sb = fresh
		sb.SetStdin(strings.NewReader(c.stdin))
	}
	v, err := grepOp.Run(context.Background(), sb, in)
	if err != nil {
		return grepPage{}, err
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
		Restarted  bool   `json:"restarted"`
	}
	var raw map[string]json.RawMessage
	must(t, json.Unmarshal(b, &m))
	must(t, json.Unmarshal(b, &raw))
	p := grepPage{count: m.Count, truncated: m.Truncated, limit: m.Limit, next: m.NextCursor, restarted: m.Restarted, size: len(b)}
	if l, ok := raw[c.key]; ok {
		must(t, json.Unmarshal(l, &p.items))
	}
	return p, nil
}

// all pages from cursor to the end, and returns every item in order.
func (c grepPager) all(t *testing.T, sb *sandbox.Sandbox, cursor string) ([]string, []grepPage) {
	t.Helper()
	var items []string
	var pages []grepPage
	for i := 0; ; i++ {
		if i > 5000 {
			t.Fatal("more than 5000 pages")
		}
		p, err := c.run(t, sb, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		pages = append(pages, p)
		for _, it := range p.items {
			items = append(items, string(it))
		}
		if p.truncated != (p.next != "") {
			t.Fatalf("page %d: truncated %v, next_cursor %q", i, p.truncated, p.next)
		}
		if p.next == "" {
			return items, pages
		}
		if len(p.items) == 0 && c.key == "matches" {
			t.Fatalf("page %d gave nothing but a cursor (%s)", i, p.limit)
		}
		cursor = p.next
	}
}

func grepSandbox(t *testing.T, dir string, limits func(l *policy.Limits)) *sandbox.Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxLineBytes = 64 // the same text cut whatever the budget
	limits(&p.Limits)
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

var grepModes = []struct {
	name string
	key  string
	set  func(in *spec.Input)
}{
	{"default", "matches", func(in *spec.Input) {}},
	{"context", "matches", func(in *spec.Input) { in.Set("numbered", true).Set("context", int64(1)) }},
	{"only", "matches", func(in *spec.Input) { in.Set("only-matching", true) }},
	{"files", "paths", func(in *spec.Input) { in.Set("files-with-matches", true) }},
	{"count", "counts", func(in *spec.Input) { in.Set("count", true) }},
	{"invert", "matches", func(in *spec.Input) { in.Set("invert-match", true) }},
	// (A context longer than max_results is cut to it: one line here.)
	{"max-count", "matches", func(in *spec.Input) { in.Set("max-count", int64(12)).Set("after-context", int64(1)) }},
}

// grepPaths are several arguments: a directory, a named file, a named
// binary file, the workdir (whose walk holds the first again).
var grepPaths = []string{"a-b", "top.txt", "b/ctl.txt", "."}

// TestGrepCursorPages: paging a frozen tree with next_cursor until none
// gives exactly the unbounded result, item for item, in every mode, cut
// by max_results and by a small max_result_bytes.
func TestGrepCursorPages(t *testing.T) {
	dir := t.TempDir()
	grepTree(t, dir)
	full := grepSandbox(t, dir, func(l *policy.Limits) {})
	budgets := []struct {
		name   string
		limits func(l *policy.Limits)
	}{
		{"max_results=7", func(l *policy.Limits) { l.MaxResults = 7 }},
		{"max_result_bytes=300", func(l *policy.Limits) { l.MaxResultBytes = 300 }},
		{"max_results=1", func(l *policy.Limits) { l.MaxResults = 1 }},
	}
	for _, mode := range grepModes {
		c := grepPager{key: mode.key, set: func(in *spec.Input) {
			in.Set("pattern", "needle").Set("paths", grepPaths)
			mode.set(in)
		}}
		want, _ := c.all(t, full, "")
		if len(want) < 10 {
			t.Fatalf("%s: only %d items", mode.name, len(want))
		}
		for _, b := range budgets {
			t.Run(mode.name+"/"+b.name, func(t *testing.T) {
				sb := grepSandbox(t, dir, b.limits)
				got, pages := c.all(t, sb, "")
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("pages give %d items, the whole %d:\n%s\n---\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(pages) < 2 {
					t.Fatalf("one page only")
				}
				for i, p := range pages {
					if p.truncated && p.limit != "max_results" && p.limit != "max_result_bytes" {
						t.Errorf("page %d cut by %q", i, p.limit)
					}
					if (mode.name == "default" || mode.name == "invert" || mode.name == "context") && p.count != int64(len(p.items)) {
						t.Errorf("page %d: count %d, %d items", i, p.count, len(p.items))
					}
				}
			})
		}
	}
}

// TestGrepCursorRestarted: a cursor into a file that changed since gives
// restarted: true and that file again from its start.
func TestGrepCursorRestarted(t *testing.T) {
	for _, paths := range [][]string{{"a.b"}, {"a.b/many.txt"}} {
		dir := t.TempDir()
		grepTree(t, dir)
		sb := grepSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 7 })
		c := grepPager{key: "matches", set: func(in *spec.Input) { in.Set("pattern", "needle").Set("paths", paths) }}
		var p grepPage
		var err error
		cursor := ""
		for { // to a page that ends inside many.txt
			p, err = c.run(t, sb, cursor)
			must(t, err)
			if !p.truncated {
				t.Fatal("no page ends in many.txt")
			}
			var last Match
			must(t, json.Unmarshal(p.items[len(p.items)-1], &last))
			if strings.HasSuffix(last.Path, "many.txt") {
				break
			}
			cursor = p.next
		}
		// Unchanged: no restart, and the page goes on after the cut.
		q, err := c.run(t, sb, p.next)
		must(t, err)
		var first Match
		must(t, json.Unmarshal(q.items[0], &first))
		if q.restarted || first.Line <= 1 {
			t.Fatalf("%v unchanged: restarted %v, first line %d", paths, q.restarted, first.Line)
		}
		mp := filepath.Join(dir, "a.b", "many.txt")
		data, _ := os.ReadFile(mp)
		// Another file of the same size and mtime renamed over it: the
		// inode tells them apart.
		fi, err := os.Stat(mp)
		must(t, err)
		other := append([]byte("needle new\n"), data[len("needle new\n"):]...)
		must(t, os.WriteFile(mp+".new", other, 0o644))
		must(t, os.Chtimes(mp+".new", fi.ModTime(), fi.ModTime()))
		must(t, os.Rename(mp+".new", mp))
		q, err = c.run(t, sb, p.next)
		must(t, err)
		if !q.restarted {
			t.Fatalf("%v replaced by a file of the same size and mtime: not restarted", paths)
		}
		must(t, os.WriteFile(mp, append([]byte("needle new\n"), data...), 0o644))
		must(t, os.Chtimes(mp, time.Now(), time.Now().Add(time.Hour)))
		q, err = c.run(t, sb, p.next)
		must(t, err)
		must(t, json.Unmarshal(q.items[0], &first))
		if !q.restarted || !strings.HasSuffix(first.Path, "many.txt") || first.Line != 1 || first.Text != "needle new" {
			t.Fatalf("%v changed: restarted %v, first %+v", paths, q.restarted, first)
		}
	}
}

// TestGrepCursorOtherCall: a cursor made for other arguments, another
// policy or another form is usage; so is one that does not decode.
func TestGrepCursorOtherCall(t *testing.T) {
	dir := t.TempDir()
	grepTree(t, dir)
	sb := grepSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 3 })
	c := grepPager{key: "matches", set: func(in *spec.Input) { in.Set("pattern", "needle") }}
	p, err := c.run(t, sb, "")
	must(t, err)
	if p.next == "" {
		t.Fatal("no next_cursor")
	}
	usage := func(what string, err error) {
		t.Helper()
		if err == nil || fserr.AsError(err).Code != fserr.CodeUsage {
			t.Errorf("%s: %v, want usage", what, err)
		}
	}
	_, err = grepPager{key: "matches", set: func(in *spec.Input) { in.Set("pattern", "needle2") }}.run(t, sb, p.next)
	usage("other pattern", err)
	_, err = grepPager{key: "matches", set: func(in *spec.Input) { in.Set("pattern", "needle").Set("ignore-case", true) }}.run(t, sb, p.next)
	usage("another option", err)
	_, err = grepPager{key: "matches", form: "ndjson", set: c.set}.run(t, sb, p.next)
	usage("another form", err)
	other := grepSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 4 })
	_, err = c.run(t, other, p.next)
	usage("another policy", err)
	_, err = c.run(t, sb, p.next[:len(p.next)-3])
	usage("cut short", err)
	_, err = c.run(t, sb, "!!"+p.next)
	usage("not base64", err)
}

// TestGrepCursorForged: a cursor with any bytes is usage or gives a
// suffix of the honest answer; one sealed for the call with any position
// in it (what a forger could at best arrive at) gives a suffix.
func TestGrepCursorForged(t *testing.T) {
	dir := t.TempDir()
	grepTree(t, dir)
	full := grepSandbox(t, dir, func(l *policy.Limits) {})
	sb := grepSandbox(t, dir, func(l *policy.Limits) { l.MaxResults = 9 })
	rng := rand.New(rand.NewSource(2))
	keys := []string{"", "a", "a/", "a/x", "a/x/deep.txt", "a-b", "a-b/f.txt", "a.b/many.txt", "a.b/many.txu", "a.b/many.tx", "b/long.txt", "zz.txt", "zzz", "\xff", "../x", "/etc"}
	for _, mode := range grepModes {
		c := grepPager{key: mode.key, set: func(in *spec.Input) {
			in.Set("pattern", "needle").Set("paths", grepPaths)
			mode.set(in)
		}}
		want, _ := c.all(t, full, "")
		suffix := func(what string, got []string) {
			t.Helper()
			if len(got) > len(want) || strings.Join(got, "\n") != strings.Join(want[len(want)-len(got):], "\n") {
				t.Fatalf("%s %s: not a suffix:\n%s", mode.name, what, strings.Join(got, "\n"))
			}
		}
		// An honest cursor, for its binding.
		p, err := c.run(t, sb, "")
		must(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(p.next)
		must(t, err)
		bind := raw[:bindLen]
		for i := 0; i < 60; i++ {
			var forged string
			switch i % 3 {
			case 0: // random bytes
				b := make([]byte, rng.Intn(64))
				rng.Read(b)
				forged = base64.RawURLEncoding.EncodeToString(b)
			case 1: // the binding, then random JSON-ish bytes
				b := append([]byte(nil), bind...)
				js := []byte(fmt.Sprintf(`{"a":%d,"k":%q,"n":%d}`, rng.Intn(5)-1, keys[rng.Intn(len(keys))], rng.Intn(100)))
				b = append(b, js[:rng.Intn(len(js)+1)]...)
				forged = base64.RawURLEncoding.EncodeToString(b)
			default: // sealed, with any position
				cur := Cursor{Arg: int64(rng.Intn(5)), Key: keys[rng.Intn(len(keys))], N: int64(rng.Intn(100)), Skip: int64(rng.Intn(4)), ID: []string{"", "x", "0:0"}[rng.Intn(3)]}
				body, _ := json.Marshal(cur)
				forged = base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), bind...), body...))
			}
			if _, err := c.run(t, sb, forged); err != nil {
				if fserr.AsError(err).Code != fserr.CodeUsage {
					t.Fatalf("%s forged %q: %v", mode.name, forged, err)
				}
				continue
			}
			got, _ := c.all(t, sb, forged)
			suffix(fmt.Sprintf("forged %q", forged), got)
		}
	}
}

// TestGrepCursorBudget: under max_result_bytes = 65536 no JSON result
// passes it by more than one item (and what is around the list).
func TestGrepCursorBudget(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "needle %d %s\n", i, strings.Repeat("x", i%300))
	}
	must(t, os.WriteFile(filepath.Join(dir, "big.txt"), b.Bytes(), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "long.txt"), []byte(strings.Repeat("y", 200000)+"needle\n"), 0o644))
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxResultBytes = 65536
	sb, err := sandbox.New(p, "")
	must(t, err)
	defer sb.Close()
	for _, mode := range grepModes {
		c := grepPager{key: mode.key, set: func(in *spec.Input) { in.Set("pattern", "needle"); mode.set(in) }}
		_, pages := c.all(t, sb, "")
		for i, pg := range pages {
			largest := 0
			for _, it := range pg.items {
				largest = max(largest, len(it))
			}
			if pg.size > 65536+largest+1024 {
				t.Errorf("%s page %d: %d bytes, its largest item %d", mode.name, i, pg.size, largest)
			}
			if pg.truncated && pg.limit != "max_result_bytes" {
				t.Errorf("%s page %d cut by %s", mode.name, i, pg.limit)
			}
		}
		if (mode.name == "default" || mode.name == "only" || mode.name == "context") && len(pages) < 2 {
			t.Errorf("%s: one page", mode.name)
		}
	}
}

// TestGrepCursorStdin: standard input pages too (its lines are counted
// again on each page: no identity to check).
func TestGrepCursorStdin(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "needle %d needle\nno %d\n", i, i)
	}
	for _, mode := range grepModes[:3] {
		c := grepPager{key: "matches", stdin: b.String(), set: func(in *spec.Input) {
			in.Set("pattern", "needle").Set("paths", []string{"-"})
			mode.set(in)
		}}
		want, _ := c.all(t, grepSandbox(t, dir, func(l *policy.Limits) {}), "")
		got, pages := c.all(t, grepSandbox(t, dir, func(l *policy.Limits) { l.MaxResultBytes = 200 }), "")
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(pages) < 2 {
			t.Errorf("%s: %d pages give %d items, the whole %d", mode.name, len(pages), len(got), len(want))
		}
	}
}
