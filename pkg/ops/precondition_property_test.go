//go:build unix

package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// preSandbox is a sandbox on dir under [write] require_precondition, rm
// on, with its own journal state (state shared when given).
func preSandbox(t *testing.T, dir, state string) *sandbox.Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(dir)
	p.Journal.State = state
	p.Write.RequirePrecondition = true
	p.Commands["rm"] = true
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// preSnapshot is every regular file under dir by its path relative to dir.
func preSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

// TestPropertyNoChangeWithoutPrecondition: under the switch, random
// sequences of changes (write, append, edit, rm, cp and mv with and without
// force, patch, rm -r, undo --force), each carrying the right precondition,
// a wrong one or none, never change a path unless the call named what the
// path held: the sha256 of its content before, or absent for a new file.
// The one change that names nothing is the name mv moves away from (its
// content lives on at the destination). A refused call changes nothing.
func TestPropertyNoChangeWithoutPrecondition(t *testing.T) {
	n := envInt("PROPERTY_N", 20)
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { preconditionSequence(t, uint64(seed)) })
	}
}

func preconditionSequence(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 31))
	dir := t.TempDir()
	sb := preSandbox(t, dir, t.TempDir())
	ctx := context.Background()
	names := []string{"a.txt", "b.txt", "c.txt", "d/x.txt", "d/y.txt", "e/z.txt"}
	for _, n := range names[:3] {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755)
		os.WriteFile(filepath.Join(dir, n), []byte(n+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d/x.txt"), []byte("x\n"), 0o644)
	oks := 0
	defer func() {
		if oks == 0 && !t.Failed() {
			t.Errorf("no change succeeded in the sequence")
		}
	}()
	for step := range 40 {
		s := &preStep{t: t, step: step, r: r, before: preSnapshot(t, dir), named: map[string]string{}, exempt: map[string]bool{}}
		p, q := pick(r, names), pick(r, names)
		content := fmt.Sprintf("s%d-%d\n", seed, step)
		label, made, err := s.change(ctx, sb, p, q, content)
		if !made {
			continue
		}
		if err == nil {
			oks++
		}
		s.check(label, err, preSnapshot(t, dir))
	}
}

// preStep is one step of a precondition sequence: the tree before it, and
// what the change it makes names.
type preStep struct {
	t      *testing.T
	step   int
	r      *rand.Rand
	before map[string]string
	// named: the precondition the call carries per path ("" absent); a
	// path left out names nothing.
	named  map[string]string
	exempt map[string]bool // paths that may change naming nothing (mv's source)
}

// pre gives a path's precondition: right, wrong, or none.
func (s *preStep) pre(p string) (string, bool) {
	switch s.r.IntN(3) {
	case 0:
		return "", false
	case 1:
		return sha256Hex([]byte("wrong" + p)), true
	}
	c, ok := s.before[p]
	if !ok {
		return "", true // absent
	}
	return sha256Hex([]byte(c)), true
}

// change makes one random change of p (and q), with a random
// precondition; made is false when the step makes none.
func (s *preStep) change(ctx context.Context, sb *sandbox.Sandbox, p, q, content string) (label string, made bool, err error) {
	switch s.r.IntN(9) {
	case 0, 1:
		label, err = s.write(ctx, sb, p, content)
	case 2:
		label, err = s.edit(ctx, sb, p)
	case 3:
		label, err = s.rm(ctx, sb, p)
	case 4: // rm -r of a directory
		d := pick(s.r, []string{"d", "e"})
		label = "rm -r " + d
		_, err = RemoveExpect(ctx, sb, d, true, "")
	case 5, 6:
		label, err = s.copyOrMove(ctx, sb, p, q)
	case 7:
		return s.patch(ctx, sb, p, q, content)
	case 8:
		label, err = s.undoForce(ctx, sb)
	}
	return label, true, err
}

// write writes or appends to p.
func (s *preStep) write(ctx context.Context, sb *sandbox.Sandbox, p, content string) (string, error) {
	o := WriteOptions{Path: p, Content: strings.NewReader(content), Append: s.r.IntN(3) == 0}
	if h, ok := s.pre(p); ok {
		if h == "" {
			o.NoClobber = true
		} else {
			o.ExpectSHA256 = h
		}
		s.named[p] = h
	}
	_, err := Write(ctx, sb, o)
	return fmt.Sprintf("write %+v", o), err
}

// edit edits p.
func (s *preStep) edit(ctx context.Context, sb *sandbox.Sandbox, p string) (string, error) {
	o := EditOptions{Path: p, Edits: []EditSpec{{Old: "\n", New: "!\n", All: true}}}
	if h, ok := s.pre(p); ok && h != "" {
		o.ExpectSHA256 = h
		s.named[p] = h
	}
	_, err := Edit(ctx, sb, o)
	return fmt.Sprintf("edit %+v", o), err
}

// rm removes p.
func (s *preStep) rm(ctx context.Context, sb *sandbox.Sandbox, p string) (string, error) {
	h, ok := s.pre(p)
	if ok && h != "" {
		s.named[p] = h
	}
	_, err := RemoveExpect(ctx, sb, p, false, h)
	return fmt.Sprintf("rm %s %s", p, h), err
}

// copyOrMove copies or moves p onto q, with or without force.
func (s *preStep) copyOrMove(ctx context.Context, sb *sandbox.Sandbox, p, q string) (label string, err error) {
	force := s.r.IntN(2) == 0
	h, ok := s.pre(q)
	if !ok || h == "" {
		h = ""
	}
	if force && h != "" {
		s.named[q] = h
	}
	if !force {
		s.named[q] = "" // without force the destination must be free
	}
	if s.r.IntN(2) == 0 {
		label = fmt.Sprintf("cp %s %s force=%v %s", p, q, force, h)
		_, err = CopyExpect(ctx, sb, p, q, force, h)
	} else {
		label = fmt.Sprintf("mv %s %s force=%v %s", p, q, force, h)
		s.exempt[p] = true
		_, err = MoveExpect(ctx, sb, p, q, force, h)
	}
	if force && h == "" {
		s.named[q] = "" // force naming nothing replaces nothing
	}
	return label, err
}

// patch updates p and adds q in one patch; none when p does not exist or
// is q.
func (s *preStep) patch(ctx context.Context, sb *sandbox.Sandbox, p, q, content string) (label string, made bool, err error) {
	o := PatchOptions{Expect: map[string]string{}}
	c, ok := s.before[p]
	if !ok || p == q {
		return "", false, nil
	}
	first, _, _ := strings.Cut(c, "\n")
	o.Patch = fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** Add File: %s\n+%s*** End Patch\n", p, first, strings.TrimSuffix(content, "\n"), q, content)
	if h, ok := s.pre(p); ok && h != "" {
		o.Expect[p] = h
		s.named[p] = h
	}
	s.named[q] = ""
	_, err = Patch(ctx, sb, o)
	return fmt.Sprintf("patch %q %v", o.Patch, o.Expect), true, err
}

// undoForce runs undo --force, which the switch always refuses.
func (s *preStep) undoForce(ctx context.Context, sb *sandbox.Sandbox) (string, error) {
	_, err := Undo(ctx, sb, "", true)
	if err == nil {
		s.t.Fatalf("step %d: undo --force succeeded under the switch", s.step)
	}
	if c := fserr.AsError(err).Code; c != fserr.CodePreconditionRequired && c != fserr.CodeNotFound {
		s.t.Fatalf("step %d: undo --force: %v", s.step, err)
	}
	return "undo --force", err
}

// check holds the step's change (label, its error) to the property: a
// refused call changed nothing and gave no hash it did not bring; every
// path it changed (but an exempt one) it named with what the path held.
func (s *preStep) check(label string, err error, after map[string]string) {
	t, step := s.t, s.step
	changed := map[string]bool{}
	for k, v := range s.before {
		if w, ok := after[k]; !ok || w != v {
			changed[k] = true
		}
	}
	for k := range after {
		if _, ok := s.before[k]; !ok {
			changed[k] = true
		}
	}
	if err != nil && len(changed) > 0 {
		t.Fatalf("step %d: %s failed (%v) and still changed %v", step, label, err, changed)
	}
	if err != nil {
		// No refusal gives a hash the call did not bring itself.
		msg := fserr.AsError(err).Message(nil)
		for k, c := range s.before {
			if h := sha256Hex([]byte(c)); strings.Contains(msg, h) && s.named[k] != h {
				t.Fatalf("step %d: %s: the refusal gives the hash of %s: %v", step, label, k, err)
			}
		}
	}
	for k := range changed {
		if s.exempt[k] {
			continue
		}
		want := ""
		if c, ok := s.before[k]; ok {
			want = sha256Hex([]byte(c))
		}
		if h, ok := s.named[k]; !ok || h != want {
			t.Fatalf("step %d: %s changed %s without naming what it held (named %q, ok=%v; it held %q)", step, label, k, h, ok, want)
		}
	}
}

// TestPropertyRacingWritersKeepEveryUpdate: several fsbox writers (each
// its own sandbox, as separate processes are) loop read → hash → change
// with that hash as the precondition (write, edit, cp --force, mv
// --force) on the same files. Every acknowledged change must be the base
// of the next acknowledged one: the acknowledged changes of a file form
// one chain from its first content to its last, so no acknowledged update
// is lost.
func TestPropertyRacingWritersKeepEveryUpdate(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	files := []string{"f1.txt", "f2.txt"}
	for _, f := range files {
		os.WriteFile(filepath.Join(dir, f), []byte("start "+f+"\n"), 0o644)
	}
	const writers, rounds = 4, 40
	type ack struct{ base, next string }
	var mu sync.Mutex
	acks := map[string][]ack{}
	var wg sync.WaitGroup
	for w := range writers {
		sb := preSandbox(t, dir, state)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range rounds {
				f := files[r.IntN(len(files))]
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				base := sha256Hex(b)
				next := fmt.Sprintf("base %s\nby %d.%d\n", base, w, i)
				var err2 error
				switch i % 4 {
				case 0:
					_, err2 = Write(ctx, sb, WriteOptions{Path: f, Content: strings.NewReader(next), ExpectSHA256: base})
				case 1:
					_, err2 = Edit(ctx, sb, EditOptions{Path: f, Edits: []EditSpec{{Old: string(b), New: next}}, ExpectSHA256: base})
				case 2, 3:
					tmp := fmt.Sprintf("tmp-%d-%d.txt", w, i)
					if _, err := Write(ctx, sb, WriteOptions{Path: tmp, Content: strings.NewReader(next), NoClobber: true}); err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					if i%4 == 2 {
						_, err2 = CopyExpect(ctx, sb, tmp, f, true, base)
					} else {
						_, err2 = MoveExpect(ctx, sb, tmp, f, true, base)
					}
				}
				if err2 != nil {
					if c := fserr.AsError(err2).Code; c != fserr.CodeConflict {
						t.Errorf("writer %d round %d: %v", w, i, err2)
					}
					continue
				}
				mu.Lock()
				acks[f] = append(acks[f], ack{base, sha256Hex([]byte(next))})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, f := range files {
		byBase := map[string]string{}
		for _, a := range acks[f] {
			if other, dup := byBase[a.base]; dup {
				t.Fatalf("%s: two acknowledged changes from one base %s (to %s and %s): one update was lost", f, a.base, other, a.next)
			}
			byBase[a.base] = a.next
		}
		cur := sha256Hex([]byte("start " + f + "\n"))
		n := 0
		for {
			next, ok := byBase[cur]
			if !ok {
				break
			}
			cur, n = next, n+1
		}
		if n != len(acks[f]) {
			t.Fatalf("%s: the chain from the first content covers %d of %d acknowledged changes", f, n, len(acks[f]))
		}
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if sha256Hex(b) != cur {
			t.Fatalf("%s: holds %q, not the last acknowledged change", f, b)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("no change was acknowledged")
	}
	var names []string
	for f, a := range acks {
		names = append(names, fmt.Sprintf("%s:%d", f, len(a)))
	}
	sort.Strings(names)
	t.Logf("acknowledged: %v", names)
}
