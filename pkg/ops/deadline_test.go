//go:build unix

package ops

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// deadlineCtx is a call's context whose deadline the test fires: Err is
// context.DeadlineExceeded once fire is called, as a real deadline's is,
// so the tests need no clock.
type deadlineCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newDeadlineCtx() *deadlineCtx {
	return &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *deadlineCtx) fire() { c.once.Do(func() { close(c.done) }) }

// hangDir sets the sandbox's directory seam for one test: listing dir waits until
// ready is closed (what came before it has been delivered), fires the
// deadline, and then hangs until hold is closed (nil: until the
// context ends, as a read the deadline interrupts).
func hangDir(t *testing.T, dir string, ready <-chan struct{}, ctx *deadlineCtx, hold <-chan struct{}) {
	t.Helper()
	t.Cleanup(sandbox.SetDirSeam(func(cx context.Context, point, path string) {
		if point != "dir.list" || path != dir {
			return
		}
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Errorf("what came before %s was not delivered before the walk waited for it", dir)
		}
		ctx.fire()
		if hold == nil {
			<-cx.Done()
			return
		}
		<-hold
	}))
}

// signalOnce closes a channel the first time it is called.
func signalOnce() (chan struct{}, func()) {
	c := make(chan struct{})
	var once sync.Once
	return c, func() { once.Do(func() { close(c) }) }
}

// deadlineTree: b/ is the directory whose listing hangs; a.txt comes
// before it, c.txt and d/ after.
var deadlineTree = map[string]string{
	"a.txt": "needle\n", "b/x.txt": "needle\n", "c.txt": "needle\n", "d/y.txt": "needle\n",
}

// TestFindDeadline: find gives what it found before a directory whose
// listing hung until the deadline (limit "timeout"), not an error.
func TestFindDeadline(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, deadlineTree)
	ctx := newDeadlineCtx()
	ready, seen := signalOnce()
	var paths []string
	hangDir(t, "b", ready, ctx, nil)
	r, err := Find(ctx, sb, FindOptions{Dir: ".", MaxDepth: -1, Sink: func(p string) error {
		paths = append(paths, p)
		if p == "a.txt" {
			seen()
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("find past its deadline: %v, want the part before the cut", err)
	}
	if len(paths) != 1 || paths[0] != "a.txt" || r.Count != 1 {
		t.Errorf("find gave %q (count %d), want [a.txt]: the entries before the hung directory", paths, r.Count)
	}
	if !r.Truncated || r.Limit != "timeout" {
		t.Errorf("truncated %v, limit %q; want true, timeout", r.Truncated, r.Limit)
	}
}

// TestGrepDeadline: grep's collect returns at the deadline with the
// matches found before a directory whose listing hangs past it (as on a
// hard NFS mount), without waiting for the walk stuck there; the files
// the walk held in a batch were handed on before it waited.
func TestGrepDeadline(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, deadlineTree)
	ctx := newDeadlineCtx()
	ready, seen := signalOnce()
	hold := make(chan struct{})
	before := runtime.NumGoroutine()
	hangDir(t, "b", ready, ctx, hold)
	var files []string
	type answer struct {
		r   GrepResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := Grep(ctx, sb, GrepOptions{Pattern: "needle", Paths: []string{"."}, Sink: func(fr *FileResult) error {
			files = append(files, fr.Path)
			if fr.Path == "a.txt" {
				seen()
			}
			return nil
		}})
		done <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(10 * time.Second):
		close(hold)
		a = <-done
		t.Errorf("grep waited for its walk, stuck past the deadline, before it gave its result")
	}
	select {
	case <-hold:
	default:
		close(hold) // the stuck listing returns; the walk and drain end
	}
	// They end on their own (and the seam may be reset only then): none
	// is left behind.
	for end := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(end) {
			t.Fatalf("%d goroutines still run after grep's cut, %d before it", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
	if a.err != nil {
		t.Fatalf("grep past its deadline: %v, want the part before the cut", a.err)
	}
	if len(files) != 1 || files[0] != "a.txt" || a.r.Count != 1 || a.r.FilesMatched != 1 {
		t.Errorf("grep gave %q (count %d, files matched %d), want a.txt's one match", files, a.r.Count, a.r.FilesMatched)
	}
	if !a.r.Truncated || a.r.Limit != "timeout" {
		t.Errorf("truncated %v, limit %q; want true, timeout", a.r.Truncated, a.r.Limit)
	}
}

// TestGrepCancelIsAnError: a cancel (an MCP client's) is no deadline:
// grep fails with the context's error, as before.
func TestGrepCancelIsAnError(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, deadlineTree)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(sandbox.SetDirSeam(func(cx context.Context, point, path string) {
		if point == "dir.list" && path == "b" {
			cancel()
		}
	}))
	if _, err := Grep(ctx, sb, GrepOptions{Pattern: "needle", Paths: []string{"."}}); err != context.Canceled {
		t.Errorf("cancelled grep: %v, want context.Canceled", err)
	}
}

// TestLsDeadline: ls describes entries in name order and gives the ones
// described by the deadline.
func TestLsDeadline(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a": "", "b": "", "c": "", "d": ""})
	ctx := newDeadlineCtx()
	t.Cleanup(sandbox.SetDirSeam(func(_ context.Context, point, path string) {
		if point == "dir.entry" && path == "c" {
			ctx.fire() // c's lstat hangs until the deadline
		}
	}))
	r, err := Ls(ctx, sb, LsOptions{Path: "."})
	if err != nil {
		t.Fatalf("ls past its deadline: %v, want the part before the cut", err)
	}
	var names []string
	for _, e := range r.Entries {
		names = append(names, e.Name)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" || r.Count != 2 {
		t.Errorf("ls gave %q, want [a b]", names)
	}
	if !r.Truncated || r.Limit != "timeout" {
		t.Errorf("truncated %v, limit %q; want true, timeout", r.Truncated, r.Limit)
	}
}

// TestDeadlineBeforeCommit: an edit whose deadline passes once it is
// under way changes nothing and fails with timeout.
func TestDeadlineBeforeCommit(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"f.txt": "old\n"})
	ctx := newDeadlineCtx()
	sandbox.Seam = func(point string) {
		if point == "edit.checked" {
			ctx.fire()
		}
	}
	t.Cleanup(func() { sandbox.Seam = nil })
	_, err := Edit(ctx, sb, EditOptions{Path: "f.txt", Edits: []EditSpec{{Old: "old", New: "new"}}})
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeTimeout {
		t.Errorf("edit past its deadline: %v, want timeout", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "old\n" {
		t.Errorf("f.txt holds %q after a change that timed out", b)
	}
}

// countTree is a tree for counting under a deadline: files with 0 to 4
// matching lines in several directories, a binary file, a file the
// walk reaches after a directory.
func countTree(t *testing.T) (*sandbox.Sandbox, string) {
	t.Helper()
	sb, dir := testSandbox(t)
	files := map[string]string{"bin.dat": "needle\x00\n", "z.txt": "needle\nneedle\n"}
	for i := range 24 {
		var b strings.Builder
		for range i % 5 {
			b.WriteString("a needle here\n")
		}
		b.WriteString("hay\n")
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = b.String()
	}
	tree(t, dir, files)
	return sb, dir
}

// countPage is one page of a grep: its result and the items its sink
// took.
type countPage struct {
	r     GrepResult
	items []string // "path:count" (-c), "path" (-l), "path:line" (a listing)
}

// fireAt says when a test fires a count's deadline: after the sink took
// items items, or once collect took the file at (a path), or when the
// list is cut (listCut); never when none is set.
type fireAt struct {
	items   int
	at      string
	listCut bool
}

// countRun runs grep -MODE NEEDLE . (mode "c", "l", or "" for a
// listing) from cursor, firing its deadline as fire says.
func countRun(t *testing.T, sb *sandbox.Sandbox, mode string, cursor string, fire fireAt) (countPage, error) {
	t.Helper()
	in := spec.NewInput(grepOp).Set("pattern", "needle")
	switch mode {
	case "l":
		in.Set("files-with-matches", true)
	case "c":
		in.Set("count", true)
	}
	in.Cursor, in.Form = cursor, "json"
	o, err := GrepInput(sb, in)
	if err != nil {
		t.Fatal(err)
	}
	if o.Paging, err = pagingOf(sb, in); err != nil {
		t.Fatal(err)
	}
	ctx := newDeadlineCtx()
	var p countPage
	o.Sink = func(fr *FileResult) error {
		switch mode {
		case "l":
			p.items = append(p.items, fr.Path)
		case "c":
			p.items = append(p.items, fmt.Sprintf("%s:%d", fr.Path, fr.Count))
		default:
			for _, m := range fr.Matches {
				p.items = append(p.items, fmt.Sprintf("%s:%d", m.Path, m.Line))
			}
		}
		if len(p.items) == fire.items {
			ctx.fire()
		}
		return nil
	}
	o.onTake = func(rel string, listCut bool) {
		if (fire.at != "" && rel == fire.at) || (fire.listCut && listCut) {
			ctx.fire()
		}
	}
	p.r, err = Grep(ctx, sb, o)
	return p, err
}

// TestGrepCountDeadlinePages: a count the deadline stops names only what
// it finished (SPEC §2, Counts): limit timeout whatever cut came first
// (cuts[] lists them), partial, count the sum of the files read to the
// end, and next_cursor at the first file not finished, so the pages'
// counts add up to the total and their lists to the whole list; a
// listing resumes there too, so that every page moves on. The deadline
// is fired by the test (after a number of items, after a file, or when
// the list is cut by max_result_bytes), not by a clock.
func TestGrepCountDeadlinePages(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   string // "c", "l", "": a listing
		fire   fireAt
		budget int64
		cuts   []string
	}{
		{"-c, after 2 files", "c", fireAt{items: 2}, 0, []string{"timeout"}},
		{"-l, after 3 files", "l", fireAt{items: 3}, 0, []string{"timeout"}},
		{"-c, after 1 file", "c", fireAt{items: 1}, 0, []string{"timeout"}},
		// A file without a match, after one with: the next page starts
		// after it, not after the last item.
		{"-c, after a file without a match", "c", fireAt{at: "d0/f15.txt"}, 0, []string{"timeout"}},
		{"-l, after a binary file", "l", fireAt{at: "bin.dat"}, 0, []string{"timeout"}},
		{"listing, after a file without a match", "", fireAt{at: "d0/f15.txt"}, 0, []string{"timeout"}},
		{"listing, after a file with matches", "", fireAt{at: "d1/f07.txt"}, 0, []string{"timeout"}},
		{"-c, list cut by max_result_bytes first", "c", fireAt{listCut: true}, 90, []string{"max_result_bytes", "timeout"}},
		{"-l, list cut by max_result_bytes first", "l", fireAt{listCut: true}, 40, []string{"max_result_bytes", "timeout"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb, _ := countTree(t)
			whole, err := countRun(t, sb, c.mode, "", fireAt{})
			if err != nil || whole.r.Truncated || whole.r.Partial {
				t.Fatalf("the whole count: %v, truncated %v, partial %v", err, whole.r.Truncated, whole.r.Partial)
			}
			if c.budget > 0 {
				sb = grepSandbox(t, sb.Workdir(), func(l *policy.Limits) { l.MaxResultBytes = c.budget })
			}
			var items []string
			var count, searched, matched int64
			cursor := ""
			for page := 1; ; page++ {
				if page > 40 {
					t.Fatalf("no end after %d pages", page)
				}
				p, err := countRun(t, sb, c.mode, cursor, c.fire)
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				items = append(items, p.items...)
				count += p.r.Count
				searched += p.r.FilesSearched
				matched += p.r.FilesMatched
				if c.mode != "" && int64(len(p.items)) != p.r.FilesMatched {
					t.Errorf("page %d: %d items, files_matched %d", page, len(p.items), p.r.FilesMatched)
				}
				if !p.r.Truncated {
					if p.r.Partial || p.r.Cuts != nil {
						t.Errorf("last page: partial %v, cuts %q", p.r.Partial, p.r.Cuts)
					}
					break
				}
				if p.r.Limit != "timeout" || p.r.Partial != (c.mode != "") || !slices.Equal(p.r.Cuts, c.cuts) || p.r.NextCursor == "" {
					t.Fatalf("page %d: limit %q, partial %v, cuts %q, next_cursor %q; want timeout, a count's partial, %q and a cursor",
						page, p.r.Limit, p.r.Partial, p.r.Cuts, p.r.NextCursor, c.cuts)
				}
				if len(p.items) == 0 && p.r.FilesSearched == 0 {
					t.Fatalf("page %d gave nothing: no progress", page)
				}
				cursor = p.r.NextCursor
			}
			if !slices.Equal(items, whole.items) {
				t.Errorf("the pages list %q, the whole count %q", items, whole.items)
			}
			if count != whole.r.Count || matched != whole.r.FilesMatched {
				t.Errorf("the pages count %d in %d files, the whole count %d in %d", count, matched, whole.r.Count, whole.r.FilesMatched)
			}
			if !c.fire.listCut && searched != whole.r.FilesSearched {
				// Each page resumes at its first file not finished: no
				// file is searched twice.
				t.Errorf("the pages searched %d files, the whole count %d", searched, whole.r.FilesSearched)
			}
		})
	}
}

// slowStdin is standard input that fires the deadline on its second read
// (the search is then in the middle of it), once after is closed (nil:
// at once), and gives left lines of "needle" in all (with hay: of
// "hay!!!", and the last one "needle").
type slowStdin struct {
	ctx   *deadlineCtx
	after <-chan struct{}
	reads int
	left  int
	hay   bool
}

func (s *slowStdin) Read(b []byte) (int, error) {
	s.reads++
	if s.reads == 2 && s.ctx != nil {
		if s.after != nil {
			select {
			case <-s.after:
			case <-time.After(10 * time.Second):
				panic("the file before standard input was not given")
			}
		}
		s.ctx.fire()
	}
	if s.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for s.left > 0 && n+7 <= len(b) && n < 300<<10 {
		if s.hay && s.left > 1 {
			n += copy(b[n:], "hay!!!\n")
		} else {
			n += copy(b[n:], "needle\n")
		}
		s.left--
	}
	return n, nil
}

// TestCountDeadlineMidFile: a file the deadline catches in its middle is
// not counted: with other paths, the count is theirs (partial) and the
// next page starts at it; alone, the call fails with timeout (SPEC §2,
// Counts). grep -c, -l and wc alike.
func TestCountDeadlineMidFile(t *testing.T) {
	const lines = 200000 // over a read buffer: the search reads more than once
	_, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a.txt": "needle\nneedle\n"})
	// Standard input is read once per sandbox: each call gets its own,
	// under the same policy (a cursor is bound to it).
	withStdin := func(r io.Reader) *sandbox.Sandbox {
		sb := grepSandbox(t, dir, func(*policy.Limits) {})
		sb.SetStdin(r)
		return sb
	}
	for _, files := range []bool{false, true} {
		in := spec.NewInput(grepOp).Set("pattern", "needle").Set("paths", []string{"a.txt", "-"})
		in.Set("count", !files).Set("files-with-matches", files)
		in.Form = "json"
		ctx := newDeadlineCtx()
		given, give := signalOnce()
		sb := withStdin(&slowStdin{ctx: ctx, after: given, left: lines, hay: files})
		o, err := GrepInput(sb, in)
		if err != nil {
			t.Fatal(err)
		}
		if o.Paging, err = pagingOf(sb, in); err != nil {
			t.Fatal(err)
		}
		o.Sink = func(fr *FileResult) error {
			if fr.Path == "a.txt" {
				give() // stdin's search is cut once a.txt is given
			}
			return nil
		}
		r, err := Grep(ctx, sb, o)
		o.Sink = nil
		want := int64(2)
		if files {
			want = 1
		}
		if err != nil || r.Count != want || !r.Partial || r.Limit != "timeout" || r.FilesSearched != 1 {
			t.Fatalf("-l %v, a.txt and stdin cut in its middle: %v, count %d, partial %v, limit %q, files_searched %d; want a.txt's %d",
				files, err, r.Count, r.Partial, r.Limit, r.FilesSearched, want)
		}
		// The next page is standard input's, whole.
		in.Cursor = r.NextCursor
		sb = withStdin(&slowStdin{left: lines, hay: files})
		if o.Paging, err = pagingOf(sb, in); err != nil {
			t.Fatal(err)
		}
		r, err = Grep(context.Background(), sb, o)
		want = lines
		if files {
			want = 1
		}
		if err != nil || r.Count != want || r.Truncated || r.FilesSearched != 1 {
			t.Errorf("-l %v, the next page: %v, count %d, truncated %v, files_searched %d; want stdin's %d", files, err, r.Count, r.Truncated, r.FilesSearched, want)
		}

		// Standard input alone, cut in its middle: timeout.
		ctx = newDeadlineCtx()
		sb = withStdin(&slowStdin{ctx: ctx, left: lines, hay: files})
		o.Paths, o.From = []string{"-"}, nil
		if _, err := Grep(ctx, sb, o); fserr.AsError(err).Code != fserr.CodeTimeout {
			t.Errorf("-l %v, stdin alone cut in its middle: %v, want timeout", files, err)
		}
	}

	// wc: the paths before are counted; the next page counts the rest.
	paths := []string{"a.txt", "-", "a.txt"}
	in := spec.NewInput(wcOp).Set("paths", paths)
	in.Form = "json"
	ctx := newDeadlineCtx()
	sb := withStdin(&slowStdin{ctx: ctx, left: lines})
	pg, err := pagingOf(sb, in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Wc(ctx, sb, WcOptions{Paths: paths, Paging: pg})
	if err != nil || len(r.Files) != 1 || r.Total.Lines != 2 || !r.Partial || r.Limit != "timeout" || !slices.Equal(r.Cuts, []string{"timeout"}) || r.NextCursor == "" {
		t.Fatalf("wc a.txt - a.txt, stdin cut: %v, %d files, %d lines, partial %v, limit %q, cuts %q, next %q", err, len(r.Files), r.Total.Lines, r.Partial, r.Limit, r.Cuts, r.NextCursor)
	}
	in.Cursor = r.NextCursor
	sb = withStdin(&slowStdin{left: lines})
	if pg, err = pagingOf(sb, in); err != nil {
		t.Fatal(err)
	}
	r, err = Wc(context.Background(), sb, WcOptions{Paths: paths, Paging: pg})
	if err != nil || len(r.Files) != 2 || r.Total.Lines != lines+2 || r.Truncated {
		t.Errorf("wc's next page: %v, %d files, %d lines, truncated %v; want stdin and a.txt, %d lines", err, len(r.Files), r.Total.Lines, r.Truncated, lines+2)
	}
	ctx = newDeadlineCtx()
	sb = withStdin(&slowStdin{ctx: ctx, left: lines})
	if _, err := Wc(ctx, sb, WcOptions{Paths: []string{"-"}}); fserr.AsError(err).Code != fserr.CodeTimeout {
		t.Errorf("wc of stdin alone cut in its middle: %v, want timeout", err)
	}
}

// TestDeadlinePastAtStart: a deadline already past when a walk starts
// (it ran out while the policy loaded) gives the empty partial result, as
// one a moment later does, for find, grep and ls (and wc of several
// paths); a count of one file fails with timeout.
func TestDeadlinePastAtStart(t *testing.T) {
	sb, dir := testSandbox(t)
	tree(t, dir, deadlineTree)
	past := func() context.Context {
		ctx := newDeadlineCtx()
		ctx.fire()
		return ctx
	}
	timeoutCut := func(what string, tr Truncation) {
		t.Helper()
		if !tr.Truncated || tr.Limit != "timeout" || !slices.Equal(tr.Cuts, []string{"timeout"}) {
			t.Errorf("%s: truncated %v, limit %q, cuts %q; want true, timeout, [timeout]", what, tr.Truncated, tr.Limit, tr.Cuts)
		}
	}
	f, err := Find(past(), sb, FindOptions{Dir: ".", MaxDepth: -1})
	if err != nil || f.Paths == nil || len(*f.Paths) != 0 || f.Count != 0 {
		t.Fatalf("find: %v, %v", err, f.Paths)
	}
	timeoutCut("find", f.Truncation)
	l, err := Ls(past(), sb, LsOptions{Path: "."})
	if err != nil || len(l.Entries) != 0 || l.Entries == nil {
		t.Fatalf("ls: %v, %v", err, l.Entries)
	}
	timeoutCut("ls", l.Truncation)
	for _, o := range []GrepOptions{{}, {Count: true}, {FilesWithMatches: true}} {
		o.Pattern = "needle"
		g, err := Grep(past(), sb, o)
		if err != nil || g.Count != 0 || g.FilesSearched != 0 || g.Partial != (o.Count || o.FilesWithMatches) {
			t.Fatalf("grep -c %v -l %v: %v, count %d, searched %d, partial %v", o.Count, o.FilesWithMatches, err, g.Count, g.FilesSearched, g.Partial)
		}
		timeoutCut("grep", g.Truncation)
	}
	if _, err := Grep(past(), sb, GrepOptions{Pattern: "needle", Count: true, Paths: []string{"a.txt"}}); fserr.AsError(err).Code != fserr.CodeTimeout {
		t.Errorf("grep -c of one file past its deadline: %v, want timeout", err)
	}
	w, err := Wc(past(), sb, WcOptions{Paths: []string{"a.txt", "c.txt"}})
	if err != nil || len(w.Files) != 0 || !w.Partial || w.Limit != "timeout" {
		t.Errorf("wc of two files past its deadline: %v, %d files, partial %v, limit %q", err, len(w.Files), w.Partial, w.Limit)
	}
	// A switched-off command says so, deadline or not.
	p := policy.DefaultPolicy(dir)
	p.Commands = map[string]bool{"find": false}
	off, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if _, err := Find(past(), off, FindOptions{Dir: ".", MaxDepth: -1}); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("find switched off, past its deadline: %v, want denied", err)
	}
}
