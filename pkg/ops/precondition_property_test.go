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

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// preSandbox is a sandbox on dir under [write] require_precondition, rm
// on, with its own journal state (state shared when given).
func preSandbox(t *testing.T, dir, state string) *sandbox.Sandbox {
	t.Helper()
	p := sandbox.DefaultPolicy(dir)
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
		before := preSnapshot(t, dir)
		// named: the precondition the call carries per path ("" absent);
		// a path left out names nothing.
		named := map[string]string{}
		exempt := map[string]bool{}
		// pre gives a path's precondition: right, wrong, or none.
		pre := func(p string) (string, bool) {
			switch r.IntN(3) {
			case 0:
				return "", false
			case 1:
				return sha256Hex([]byte("wrong" + p)), true
			}
			c, ok := before[p]
			if !ok {
				return "", true // absent
			}
			return sha256Hex([]byte(c)), true
		}
		p, q := pick(r, names), pick(r, names)
		content := fmt.Sprintf("s%d-%d\n", seed, step)
		var label string
		var err error
		switch r.IntN(9) {
		case 0, 1: // write, append
			o := WriteOptions{Path: p, Content: strings.NewReader(content), Append: r.IntN(3) == 0}
			if h, ok := pre(p); ok {
				if h == "" {
					o.NoClobber = true
				} else {
					o.ExpectSHA256 = h
				}
				named[p] = h
			}
			label = fmt.Sprintf("write %+v", o)
			_, err = Write(ctx, sb, o)
		case 2: // edit
			o := EditOptions{Path: p, Edits: []EditSpec{{Old: "\n", New: "!\n", All: true}}}
			if h, ok := pre(p); ok && h != "" {
				o.ExpectSHA256 = h
				named[p] = h
			}
			label = fmt.Sprintf("edit %+v", o)
			_, err = Edit(ctx, sb, o)
		case 3: // rm
			h, ok := pre(p)
			if ok && h != "" {
				named[p] = h
			}
			label = fmt.Sprintf("rm %s %s", p, h)
			_, err = RemoveExpect(ctx, sb, p, false, h)
		case 4: // rm -r of a directory
			d := pick(r, []string{"d", "e"})
			label = "rm -r " + d
			_, err = RemoveExpect(ctx, sb, d, true, "")
		case 5, 6: // cp, mv
			force := r.IntN(2) == 0
			h, ok := pre(q)
			if !ok || h == "" {
				h = ""
			}
			if force && h != "" {
				named[q] = h
			}
			if !force {
				named[q] = "" // without force the destination must be free
			}
			if r.IntN(2) == 0 {
				label = fmt.Sprintf("cp %s %s force=%v %s", p, q, force, h)
				_, err = CopyExpect(ctx, sb, p, q, force, h)
			} else {
				label = fmt.Sprintf("mv %s %s force=%v %s", p, q, force, h)
				exempt[p] = true
				_, err = MoveExpect(ctx, sb, p, q, force, h)
			}
			if force && h == "" {
				named[q] = "" // force naming nothing replaces nothing
			}
		case 7: // patch: update p, add q
			o := PatchOptions{Expect: map[string]string{}}
			c, ok := before[p]
			if !ok || p == q {
				continue
			}
			first, _, _ := strings.Cut(c, "\n")
			o.Patch = fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** Add File: %s\n+%s*** End Patch\n", p, first, strings.TrimSuffix(content, "\n"), q, content)
			if h, ok := pre(p); ok && h != "" {
				o.Expect[p] = h
				named[p] = h
			}
			named[q] = ""
			label = fmt.Sprintf("patch %q %v", o.Patch, o.Expect)
			_, err = Patch(ctx, sb, o)
		case 8: // undo --force: always refused
			label = "undo --force"
			_, err = Undo(ctx, sb, "", true)
			if err == nil {
				t.Fatalf("step %d: undo --force succeeded under the switch", step)
			}
			if c := sandbox.AsError(err).Code; c != sandbox.CodePreconditionRequired && c != sandbox.CodeNotFound {
				t.Fatalf("step %d: undo --force: %v", step, err)
			}
		}
		if err == nil {
			oks++
		}
		after := preSnapshot(t, dir)
		changed := map[string]bool{}
		for k, v := range before {
			if w, ok := after[k]; !ok || w != v {
				changed[k] = true
			}
		}
		for k := range after {
			if _, ok := before[k]; !ok {
				changed[k] = true
			}
		}
		if err != nil && len(changed) > 0 {
			t.Fatalf("step %d: %s failed (%v) and still changed %v", step, label, err, changed)
		}
		if err != nil {
			// No refusal gives a hash the call did not bring itself.
			msg := sandbox.AsError(err).Message(nil)
			for k, c := range before {
				if h := sha256Hex([]byte(c)); strings.Contains(msg, h) && named[k] != h {
					t.Fatalf("step %d: %s: the refusal gives the hash of %s: %v", step, label, k, err)
				}
			}
		}
		for k := range changed {
			if exempt[k] {
				continue
			}
			want := ""
			if c, ok := before[k]; ok {
				want = sha256Hex([]byte(c))
			}
			if h, ok := named[k]; !ok || h != want {
				t.Fatalf("step %d: %s changed %s without naming what it held (named %q, ok=%v; it held %q)", step, label, k, h, ok, want)
			}
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
					if c := sandbox.AsError(err2).Code; c != sandbox.CodeConflict {
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
