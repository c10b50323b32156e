//go:build unix

package ops

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
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
	if e := sandbox.AsError(err); e == nil || e.Code != sandbox.CodeTimeout {
		t.Errorf("edit past its deadline: %v, want timeout", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "old\n" {
		t.Errorf("f.txt holds %q after a change that timed out", b)
	}
}
