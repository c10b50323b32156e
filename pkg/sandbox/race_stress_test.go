//go:build unix

// Stress loops (issue 12, "Race tests for every mutating command against a
// concurrent swapper"): each mutating command runs a bounded number of
// times (FSBOX_STRESS_N, default 50, 20 with -short) while raceSwapper
// flips a parent or the target between a real entry and a symlink, in and
// out of the root. Zero escapes are allowed. The loops are bounded by
// count, not time; a lost race is likely, not certain, so the
// deterministic proof of each race is its seam test (race_seam_test.go).
// On the main these were written against (1b30963), TestStressTargetFlip,
// TestStressRemoveSwap and TestStressMoveSwap failed; TestStressParentFlip
// found no escape (parents were already pinned).
package sandbox_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func stressN(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("FSBOX_STRESS_N")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 20
	}
	return 50
}

// snapshot records every entry below dir: name -> content (or "dir", or
// "-> target"), with the mode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		switch {
		case fi == nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out[rel] = "-> " + tg
		case fi.IsDir():
			out[rel] = "dir " + fi.Mode().String()
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s was %q, now %q", what, k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared (%q)", what, k, v)
		}
	}
}

// TestStressParentFlip: every mutating command on esc/... and den/...
// while esc flips with a symlink to ../outside and den with one to the
// denied secrets/. Nothing in outside/ or secrets/ is created, changed or
// removed, and no answer holds their content.
func TestStressParentFlip(t *testing.T) {
	n := stressN(t)
	type command struct {
		name string
		do   func(sb *sandbox.Sandbox, d string) (any, error)
	}
	rd := strings.NewReader
	cmds := []command{
		{"write", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: d + "/f", Content: rd(sandbox.RaceInside)})
		}},
		{"write --no-clobber", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: d + "/new.txt", NoClobber: true, Content: rd("new")})
		}},
		{"write --append", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: d + "/log.txt", Append: true, Content: rd("x")})
		}},
		{"edit", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: d + "/f", Edits: []ops.EditSpec{{Old: "ins", New: "ins"}}})
		}},
		{"edit --dry-run", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: d + "/f", Edits: []ops.EditSpec{{Old: "SECRET", New: "x"}}, DryRun: true})
		}},
		{"cp --force", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Copy(context.Background(), sb, d+"/f", d+"/copy.txt", true)
		}},
		{"mv", func(sb *sandbox.Sandbox, d string) (any, error) {
			r, err := ops.Move(context.Background(), sb, d+"/f", d+"/g", false)
			if err == nil {
				ops.Move(context.Background(), sb, d+"/g", d+"/f", false)
			}
			return r, err
		}},
		{"mkdir", func(sb *sandbox.Sandbox, d string) (any, error) { return ops.Mkdir(context.Background(), sb, d+"/sub") }},
		{"rm", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Remove(context.Background(), sb, d+"/new.txt", false)
		}},
		{"rm -r", func(sb *sandbox.Sandbox, d string) (any, error) {
			return ops.Remove(context.Background(), sb, d+"/sub", true)
		}},
	}
	for _, c := range cmds {
		t.Run(c.name, func(t *testing.T) {
			sb, work, sws := sandbox.RaceSetup(t)
			base := filepath.Dir(work)
			outBefore := snapshot(t, filepath.Join(base, "outside"))
			secBefore := snapshot(t, filepath.Join(work, "secrets"))
			leaked := 0
			codes := map[fserr.Code]int{}
			var swaps int64
			for i := range n {
				sw := sws[i%2]
				stop := sw.Start()
				res, err := c.do(sb, sw.Name())
				swaps, _ = stop() // a write may create the name while it is missing: repaired below
				repairParent(t, work, sw.Name())
				codes[codeOf(err)]++
				if m := leaks(res, err, sandbox.RaceOutside, sandbox.RaceDenied); m != "" {
					if leaked++; leaked <= 3 {
						t.Errorf("%s %s: the answer holds %q", c.name, sw.Name(), m)
					}
				}
			}
			if swaps == 0 {
				t.Fatalf("the swapper never swapped")
			}
			sameSnapshot(t, c.name+": outside/", outBefore, snapshot(t, filepath.Join(base, "outside")))
			sameSnapshot(t, c.name+": secrets/", secBefore, snapshot(t, filepath.Join(work, "secrets")))
			t.Logf("%s x %d: %v", c.name, n, codes)
		})
	}
}

// repairParent puts back work/name (the directory holding inside_only)
// and work/name.alt (the symlink), wherever the swapper left them, and
// removes a directory a write created while the name was missing.
func repairParent(t *testing.T, work, name string) {
	t.Helper()
	var dir, link string
	tmp := filepath.Join(work, name+".repair")
	for _, nm := range []string{name, name + ".alt", name + ".hold"} {
		p := filepath.Join(work, nm)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0 && link == "":
			link = tmp + ".link"
			must(t, os.Rename(p, link))
		case fi.IsDir() && dir == "" && fileExists(filepath.Join(p, "inside_only")):
			dir = tmp + ".dir"
			must(t, os.Rename(p, dir))
		default:
			must(t, os.RemoveAll(p))
		}
	}
	if dir == "" || link == "" {
		t.Fatalf("repair %s: lost the directory or the link", name)
	}
	must(t, os.Rename(dir, filepath.Join(work, name)))
	must(t, os.Rename(link, filepath.Join(work, name+".alt")))
}

// TestStressTargetFlip: append and edit of t while t flips with a symlink
// to .env (denied) or to a file outside the root. Neither is ever read
// into an answer nor written. (Item 10; on today's main the .env case
// loses some of the races.)
func TestStressTargetFlip(t *testing.T) {
	n := stressN(t)
	const envSecret, outSecret = "SECRET-ENV orig\n", "OUTSIDE-SECRET orig\n"
	type command struct {
		name string
		do   func(sb *sandbox.Sandbox) (any, error)
	}
	rd := strings.NewReader
	cmds := []command{
		{"append", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t", Append: true, Content: rd("A")})
		}},
		{"edit", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: "t", Edits: []ops.EditSpec{{Old: "orig", New: "orig"}}})
		}},
		{"edit --dry-run", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: "t", Edits: []ops.EditSpec{{Old: "orig", New: "X"}}, DryRun: true})
		}},
		{"write --expect-sha256", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t", ExpectSHA256: sha256Hex("inside orig\n"), Content: rd("inside orig\n")})
		}},
	}
	for _, c := range cmds {
		for _, to := range []string{".env", "../outside/o.txt"} {
			t.Run(c.name+" -> "+to, func(t *testing.T) {
				fx := newFixture(t, map[string]string{"t": "inside orig\n", ".env": envSecret, "outside/o.txt": outSecret},
					func(p *policy.Policy) { p.Paths.Deny = []string{"**/.env"} })
				must(t, os.Chmod(fx.abs("outside/o.txt"), 0o640))
				// repair puts back one regular t and one symlink, whichever
				// names they have now (a replace may have taken the link's
				// name).
				repair := func() {
					for _, nm := range []string{"t", "t.alt", "t.hold"} {
						if fx.mode(nm)&fs.ModeSymlink != 0 {
							os.Remove(fx.abs(nm))
						}
					}
					if _, ok := fx.content("t"); !ok {
						for _, nm := range []string{"t.alt", "t.hold"} {
							if _, ok := fx.content(nm); ok {
								must(t, os.Rename(fx.abs(nm), fx.abs("t")))
								break
							}
						}
					}
					os.Remove(fx.abs("t.alt"))
					os.Remove(fx.abs("t.hold"))
					must(t, os.Symlink(to, fx.abs("t.alt")))
				}
				repair()
				sw := sandbox.NewRaceSwapper(fx.work, "t")
				leaked, swaps := 0, int64(0) // swaps: the total, over every run
				codes := map[fserr.Code]int{}
				for range n {
					stop := sw.Start()
					res, err := c.do(fx.sb)
					s, _ := stop()
					swaps = s
					codes[codeOf(err)]++
					if m := leaks(res, err, "SECRET-ENV", "OUTSIDE-SECRET", sha256Hex(envSecret), sha256Hex(outSecret)); m != "" {
						if leaked++; leaked <= 3 {
							t.Errorf("%s: the answer holds %q", c.name, m)
						}
					}
					if got, _ := fx.content(".env"); got != envSecret {
						t.Fatalf("%s: .env now holds %q", c.name, got)
					}
					if got, _ := fx.content("outside/o.txt"); got != outSecret || fx.mode("outside/o.txt") != 0o640 {
						t.Fatalf("%s: the outside file now holds %q (mode %v)", c.name, got, fx.mode("outside/o.txt"))
					}
					repair()
				}
				if swaps == 0 {
					t.Fatalf("the swapper never swapped")
				}
				if leaked > 0 {
					t.Errorf("%d of %d calls leaked", leaked, n)
				}
				t.Logf("%s x %d: %v", c.name, n, codes)
			})
		}
	}
}

// TestStressRemoveSwap: rm -r t while t flips with a victim tree holding
// protected files (item 2's reproduction, bounded by count). The victim
// is never touched, wherever the swapper left it.
func TestStressRemoveSwap(t *testing.T) {
	n := stressN(t)
	victim := map[string]string{".git/config": "[core] VICTIM", "x.lock": "VICTIM-LOCK", ".env": "VICTIM-ENV"}
	fx := newFixture(t, nil, func(p *policy.Policy) {
		p.Paths.Deny = []string{"**/.env"}
		p.Paths.WriteDeny = append(p.Paths.WriteDeny, "**/*.lock")
	})
	chain := strings.Repeat("d/", 40)
	lost := 0
	removed := 0
	codes := map[fserr.Code]int{}
	for i := range n {
		for _, nm := range []string{"t", "t.alt", "t.hold"} {
			must(t, os.RemoveAll(fx.abs(nm)))
		}
		fx.put("t/"+chain+"leaf.txt", "leaf")
		fx.put("t/a.txt", "a")
		for rel, content := range victim {
			fx.put("t.alt/"+rel, content)
		}
		sw := sandbox.NewRaceSwapper(fx.work, "t")
		stop := sw.Start()
		_, err := ops.Remove(context.Background(), fx.sb, "t", true)
		stop() // an error is expected once t is gone
		if err == nil {
			removed++
		}
		codes[codeOf(err)]++
		found := false
		for _, nm := range []string{"t", "t.alt", "t.hold"} {
			if got, ok := fx.content(nm + "/x.lock"); ok && got == victim["x.lock"] {
				found = true
				for rel, content := range victim {
					if got, _ := fx.content(nm + "/" + rel); got != content {
						found = false
					}
				}
			}
		}
		if !found {
			if lost++; lost <= 3 {
				t.Errorf("iteration %d: rm -r t deleted (part of) the victim tree (err %v)", i, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d rm -r calls deleted protected files", lost, n)
	}
	t.Logf("rm -r x %d: %v (%d removed a tree)", n, codes, removed)
}

// TestStressMoveSwap: mv proj dest while proj flips with a victim tree
// whose secret proj*/secrets/** denies. The secret never becomes readable
// at dest.
func TestStressMoveSwap(t *testing.T) {
	n := stressN(t)
	const secret = "SECRET-MOVED"
	fx := newFixture(t, nil, func(p *policy.Policy) { p.Paths.Deny = []string{"proj*/secrets/**"} })
	chain := strings.Repeat("d/", 40)
	lost := 0
	codes := map[fserr.Code]int{}
	for i := range n {
		for _, nm := range []string{"proj", "proj.alt", "proj.hold", "dest"} {
			must(t, os.RemoveAll(fx.abs(nm)))
		}
		fx.put("proj/"+chain+"leaf.txt", "leaf")
		fx.put("proj.alt/secrets/k.txt", secret)
		sw := sandbox.NewRaceSwapper(fx.work, "proj")
		stop := sw.Start()
		res, err := ops.Move(context.Background(), fx.sb, "proj", "dest", false)
		stop()
		codes[codeOf(err)]++
		r, rerr := ops.Read(context.Background(), fx.sb, ops.ReadOptions{Path: "dest/secrets/k.txt"})
		if m := leaks([]any{res, r}, rerr, secret); (m != "" && rerr == nil) || fileExists(fx.abs("dest/secrets/k.txt")) {
			if lost++; lost <= 3 {
				t.Errorf("iteration %d: mv carried the victim to dest (mv: %v)", i, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d mv calls moved a denied tree out from under its rule", lost, n)
	}
	t.Logf("mv x %d: %v", n, codes)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// codeOf is err's code, "ok" for nil.
func codeOf(err error) fserr.Code {
	if err == nil {
		return "ok"
	}
	return fserr.AsError(err).Code
}
