//go:build unix

package sandbox_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// lateCtx is a call whose deadline passes when the test says (pass), not
// by a clock: no test waits for it.
type lateCtx struct {
	context.Context
	done chan struct{}
	past atomic.Bool
}

func newLateCtx() *lateCtx { return &lateCtx{Context: context.Background(), done: make(chan struct{})} }

func (c *lateCtx) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (c *lateCtx) Done() <-chan struct{}       { return c.done }
func (c *lateCtx) Err() error {
	if c.past.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *lateCtx) pass() {
	if c.past.CompareAndSwap(false, true) {
		close(c.done)
	}
}

// slowPipe gives its text, then lets the deadline pass, then ends: a
// pipe whose writer closes it after the call's deadline.
type slowPipe struct {
	text string
	ctx  *lateCtx
}

func (p *slowPipe) Read(b []byte) (int, error) {
	if p.text != "" {
		n := copy(b, p.text)
		p.text = p.text[n:]
		return n, nil
	}
	p.ctx.pass()
	return 0, io.EOF
}

// tricklePipe gives a byte a read; the deadline passes at the third, and
// it ends 1,000 reads later: a pipe that goes on past the deadline.
type tricklePipe struct {
	n   int
	ctx *lateCtx
}

func (p *tricklePipe) Read(b []byte) (int, error) {
	if p.n++; p.n == 3 {
		p.ctx.pass()
	}
	if p.n > 1003 || len(b) == 0 {
		return 0, io.EOF
	}
	b[0] = 'x'
	return 1, nil
}

// TestDeadlineBeforeCommit: a change checks the call's deadline after its
// input is in, under its locks, just before it commits (SPEC "Roots by
// identity [seal]"): past it, timeout, and nothing changed (no file, no
// temporary file left, the journal as it was). The deadline passes as
// stdin ends (write), or while it goes on (then the read stops: a pipe
// that trickles on cannot hold a write past its deadline), or as the
// change is about to take its locks (the seam point change.lock) for the
// others.
//
// Fails on c24bc27: `fsbox --timeout 1 write slow.txt` fed by a pipe
// that ended after the deadline committed (the deadline was checked
// before the content was read); edit, cp, mv, patch and undo checked it
// before the sandbox's commit, never after their input was in and their
// locks were taken, so each committed here.
func TestDeadlineBeforeCommit(t *testing.T) {
	t.Cleanup(func() { sandbox.Seam = nil })
	files := map[string]string{"t.txt": "OLD\n", "src.txt": "SRC\n"}
	cmds := []struct {
		name string
		seam bool // the deadline passes at change.lock
		act  func(ctx context.Context, sb *sandbox.Sandbox) (any, error)
	}{
		{"write from stdin", false, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "t.txt", Content: &slowPipe{"NEW\n", ctx.(*lateCtx)}})
		}},
		{"write from a pipe that trickles on", false, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "t.txt", Content: &tricklePipe{ctx: ctx.(*lateCtx)}})
		}},
		{"write --append from a pipe that trickles on", false, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "t.txt", Append: true, Content: &tricklePipe{ctx: ctx.(*lateCtx)}})
		}},
		{"write a new file from stdin", false, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "new.txt", Content: &slowPipe{"NEW\n", ctx.(*lateCtx)}})
		}},
		{"write --append from stdin", false, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "t.txt", Append: true, Content: &slowPipe{"NEW\n", ctx.(*lateCtx)}})
		}},
		{"write", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Write(ctx, sb, ops.WriteOptions{Path: "t.txt", Content: strings.NewReader("NEW\n")})
		}},
		{"edit", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(ctx, sb, ops.EditOptions{Path: "t.txt", Edits: []ops.EditSpec{{Old: "OLD", New: "NEW"}}})
		}},
		{"edit --sequential", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(ctx, sb, ops.EditOptions{Path: "t.txt", Sequential: true, Edits: []ops.EditSpec{{Old: "OLD", New: "MID"}, {Old: "MID", New: "NEW"}}})
		}},
		{"cp", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Copy(ctx, sb, "src.txt", "copy.txt", false)
		}},
		{"cp --force", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Copy(ctx, sb, "src.txt", "t.txt", true)
		}},
		{"mv", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Move(ctx, sb, "src.txt", "moved.txt", false)
		}},
		{"patch", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Patch(ctx, sb, ops.PatchOptions{Patch: "*** Begin Patch\n*** Update File: t.txt\n@@\n-OLD\n+NEW\n*** Add File: added.txt\n+A\n*** End Patch\n"})
		}},
		{"rm", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Remove(ctx, sb, "src.txt", false)
		}},
		{"mkdir", true, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			return ops.Mkdir(ctx, sb, "d/e")
		}},
	}
	journal := func(t *testing.T) func(p *policy.Policy) {
		state := t.TempDir()
		return func(p *policy.Policy) { p.Journal.State = state }
	}
	for _, c := range cmds {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, files, journal(t))
			before, changes := listing(t, fx.work), journalLen(t, fx.sb)
			ctx := newLateCtx()
			if c.seam {
				sandbox.Seam = func(p string) {
					if p == "change.lock" {
						ctx.pass()
					}
				}
				defer func() { sandbox.Seam = nil }()
			}
			_, err := c.act(ctx, fx.sb)
			sandbox.Seam = nil
			if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeTimeout {
				t.Fatalf("%s past its deadline: %v, want timeout", c.name, err)
			}
			if !ctx.past.Load() {
				t.Fatalf("%s: the deadline never passed (no change.lock)", c.name)
			}
			if after := listing(t, fx.work); after != before {
				t.Errorf("%s past its deadline changed the workdir:\n%s\nwas\n%s", c.name, after, before)
			}
			if n := journalLen(t, fx.sb); n != changes {
				t.Errorf("%s past its deadline: the journal holds %d changes, was %d", c.name, n, changes)
			}
		})
	}

	// undo: a write made with time to spare, taken back past the deadline.
	t.Run("undo", func(t *testing.T) {
		fx := newFixture(t, files, journal(t))
		if _, err := ops.Write(context.Background(), fx.sb, ops.WriteOptions{Path: "t.txt", Content: strings.NewReader("NEW\n")}); err != nil {
			t.Fatal(err)
		}
		before, changes := listing(t, fx.work), journalLen(t, fx.sb)
		ctx := newLateCtx()
		sandbox.Seam = func(p string) {
			if p == "change.lock" {
				ctx.pass()
			}
		}
		_, err := ops.Undo(ctx, fx.sb, "", false)
		sandbox.Seam = nil
		if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeTimeout {
			t.Fatalf("undo past its deadline: %v, want timeout", err)
		}
		if after := listing(t, fx.work); after != before {
			t.Errorf("undo past its deadline changed the workdir:\n%s\nwas\n%s", after, before)
		}
		if n := journalLen(t, fx.sb); n != changes {
			t.Errorf("undo past its deadline: the journal holds %d changes, was %d", n, changes)
		}
		// In time, the same undo takes the write back.
		if _, err := ops.Undo(context.Background(), fx.sb, "", false); err != nil {
			t.Fatal(err)
		}
		fx.mustHave("t.txt", "OLD\n")
	})

	// A client's cancel is no timeout: the change still stops, with the
	// context's own error.
	t.Run("cancelled", func(t *testing.T) {
		fx := newFixture(t, files, nil)
		ctx, cancel := context.WithCancel(context.Background())
		sandbox.Seam = func(p string) {
			if p == "change.lock" {
				cancel()
			}
		}
		_, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: "t.txt", Content: strings.NewReader("NEW\n")})
		sandbox.Seam = nil
		if err != context.Canceled {
			t.Errorf("write cancelled before its commit: %v, want context.Canceled", err)
		}
		fx.mustHave("t.txt", "OLD\n")
	})
}

// journalLen is how many changes the journal holds.
func journalLen(t *testing.T, sb *sandbox.Sandbox) int {
	t.Helper()
	n := 0
	if err := sb.Changes(func(sandbox.Change) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// listing is every entry below dir with its content (files) or kind, a
// line each, sorted: what a change past its deadline must leave alone.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
		case d.IsDir():
			lines = append(lines, p+"/")
		case d.Type().IsRegular():
			b, err := os.ReadFile(dir + "/" + p)
			if err != nil {
				return err
			}
			lines = append(lines, p+": "+string(b))
		default:
			lines = append(lines, p+" ("+d.Type().String()+")")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
