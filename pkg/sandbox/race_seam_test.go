//go:build unix

// Races between a check and the act it guards (issue 12 items 2, 3, 10),
// made deterministic with sandbox.Seam: the test swaps a path at exactly
// the wrong moment instead of hoping a stress loop hits the window.
//
// Each test sweeps every seam point the call passes: it runs the call once
// to count how often each point fires, then, on a fresh tree each time,
// swaps at the k-th firing of each point. The point that guards the act
// (remove.checked, rename.checked, ...) must fire: on the pre-fix main (1b30963) the
// seam is declared but never called, so every test here fails there.
//
// Seam is a package variable: none of these tests runs in parallel.
package sandbox_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// seamCase is one prepared run: a fresh tree, the swap an attacker makes,
// the call, and the check of what followed.
type seamCase struct {
	fx    *fixture
	swap  func()
	act   func() (any, error)
	check func(t *testing.T, res any, err error, swapped bool)
}

// seamSweep runs mk's case once per (point, k) the call reaches, swapping
// at the k-th firing of point; must lists the points that have to fire.
func seamSweep(t *testing.T, must []string, mk func(t *testing.T) *seamCase) {
	t.Cleanup(func() { sandbox.Seam = nil })
	// Learn which points fire, and how often, without a swap.
	var mu sync.Mutex
	counts := map[string]int{}
	c := mk(t)
	sandbox.Seam = func(point string) {
		mu.Lock()
		counts[point]++
		mu.Unlock()
	}
	res, err := c.act()
	sandbox.Seam = nil
	c.check(t, res, err, false)
	for _, p := range must {
		if counts[p] == 0 {
			t.Errorf("seam point %q never fired (points seen: %v): the check and the act it guards are not separated by the seam", p, counts)
		}
	}
	points := make([]string, 0, len(counts))
	for p := range counts {
		points = append(points, p)
	}
	sort.Strings(points)
	for _, p := range points {
		for k := 1; k <= counts[p] && k <= 8; k++ {
			t.Run(fmt.Sprintf("%s#%d", p, k), func(t *testing.T) {
				c := mk(t)
				var once sync.Once
				n := 0
				swapped := false
				sandbox.Seam = func(point string) {
					mu.Lock()
					defer mu.Unlock()
					if point != p {
						return
					}
					if n++; n == k {
						once.Do(func() { c.swap(); swapped = true })
					}
				}
				res, err := c.act()
				sandbox.Seam = nil
				c.check(t, res, err, swapped)
			})
		}
	}
}

// noLeak fails when the answer holds any marker (content or its hash).
func noLeak(t *testing.T, what string, res any, err error, secrets ...string) {
	t.Helper()
	var markers []string
	for _, s := range secrets {
		markers = append(markers, s, sha256Hex(s))
	}
	if m := leaks(res, err, markers...); m != "" {
		t.Errorf("%s: the answer holds %q, from a file it must never read", what, m)
	}
}

// wantCode fails unless err is nil or has one of the codes.
func wantCode(t *testing.T, what string, err error, codes ...fserr.Code) {
	t.Helper()
	if err == nil {
		return
	}
	e := fserr.AsError(err)
	for _, c := range codes {
		if e.Code == c {
			return
		}
	}
	t.Errorf("%s: got %v (code %q), want success or one of %v", what, err, e.Code, codes)
}

func (fx *fixture) mode(rel string) fs.FileMode {
	fi, err := os.Lstat(fx.abs(rel))
	if err != nil {
		return 0
	}
	return fi.Mode()
}

// TestSeamRemoveTreeSwapped: rm -r checks target; at the wrong moment the
// attacker moves target away and a victim tree (protected files) into its
// name. rm -r deletes exactly the checked objects, through the directories
// it opened: the victim is untouched.
//
// Fails on the pre-fix main (1b30963) (issue 12 item 2): RemoveAll runs on the name
// again (and the seam is never called).
func TestSeamRemoveTreeSwapped(t *testing.T) {
	victim := map[string]string{"victim/.git/config": "[core] VICTIM", "victim/x.lock": "VICTIM-LOCK",
		"victim/.env": "VICTIM-ENV", "victim/v.txt": "VICTIM-V"}
	seamSweep(t, []string{"remove.checked"}, func(t *testing.T) *seamCase {
		files := map[string]string{"target/a.txt": "a", "target/sub/b.txt": "b"}
		for k, v := range victim {
			files[k] = v
		}
		fx := newFixture(t, files, func(p *policy.Policy) {
			p.Paths.Deny = []string{"**/.env"}
			p.Paths.WriteDeny = append(p.Paths.WriteDeny, "**/*.lock")
		})
		return &seamCase{fx: fx,
			swap: func() {
				must(t, os.Rename(fx.abs("target"), fx.abs("old")))
				must(t, os.Rename(fx.abs("victim"), fx.abs("target")))
			},
			act: func() (any, error) { return ops.Remove(context.Background(), fx.sb, "target", true) },
			check: func(t *testing.T, res any, err error, swapped bool) {
				wantCode(t, "rm -r target", err, fserr.CodeDenied, fserr.CodeConflict, fserr.CodeNotFound)
				at := "victim/"
				if swapped {
					at = "target/"
				}
				for rel, content := range victim {
					fx.mustHave(at+strings.TrimPrefix(rel, "victim/"), content)
				}
				if !swapped && err != nil {
					t.Errorf("rm -r target without a swap: %v", err)
				}
				if err == nil {
					// It removed what it checked, and claims it: the
					// checked files are gone wherever they were moved.
					for _, rel := range []string{"old/a.txt", "old/sub/b.txt", "target/a.txt", "target/sub/b.txt"} {
						if _, e := os.Lstat(fx.abs(rel)); e == nil && (swapped || strings.HasPrefix(rel, "target/")) {
							t.Errorf("rm -r answered removed, yet the checked %s is still there", rel)
						}
					}
				}
			}}
	})
}

// TestSeamMoveSwapped: mv checks proj (nothing protected in it); at the
// wrong moment the attacker puts a victim tree at proj, where
// proj/secrets/** denies its secret. The move must not carry the secret to
// a name no rule covers: after the call it is readable nowhere.
//
// Fails on the pre-fix main (1b30963) (issue 12 items 1 and 2; the seam is never called).
func TestSeamMoveSwapped(t *testing.T) {
	const secret = "SECRET-MOVED"
	seamSweep(t, []string{"rename.checked"}, func(t *testing.T) *seamCase {
		fx := newFixture(t, map[string]string{"proj/a.txt": "a", "incoming/secrets/k.txt": secret},
			func(p *policy.Policy) { p.Paths.Deny = []string{"proj/secrets/**"} })
		return &seamCase{fx: fx,
			swap: func() {
				must(t, os.Rename(fx.abs("proj"), fx.abs("proj.orig")))
				must(t, os.Rename(fx.abs("incoming"), fx.abs("proj")))
			},
			act: func() (any, error) { return ops.Move(context.Background(), fx.sb, "proj", "dest", false) },
			check: func(t *testing.T, res any, err error, swapped bool) {
				wantCode(t, "mv proj dest", err, fserr.CodeDenied, fserr.CodeConflict, fserr.CodeNotFound)
				noLeak(t, "mv proj dest", res, err, secret)
				if !swapped {
					if err != nil {
						t.Errorf("mv proj dest without a swap: %v", err)
					}
					return
				}
				// The victim stays where the attacker put it, under the
				// rule, and its secret is readable under no name.
				fx.mustHave("proj/secrets/k.txt", secret)
				assertUnreadable(t, fx, secret)
			}}
	})
}

// assertUnreadable reads every path fsbox can reach (find, then read each
// file; grep the whole tree) and fails if a marker shows up.
func assertUnreadable(t *testing.T, fx *fixture, markers ...string) {
	t.Helper()
	f, err := ops.Find(context.Background(), fx.sb, ops.FindOptions{Dir: ".", Hidden: true, NoIgnore: true, MaxDepth: -1, Follow: true})
	if err != nil {
		t.Fatalf("find .: %v", err)
	}
	for _, p := range *f.Paths {
		r, err := ops.Read(context.Background(), fx.sb, ops.ReadOptions{Path: p})
		if m := leaks(r, err, markers...); m != "" && err == nil {
			t.Errorf("read %s returns %q, which a rule protects", p, m)
		}
	}
	g, _ := ops.Grep(context.Background(), fx.sb, ops.GrepOptions{Pattern: "SECRET", Paths: []string{"."}, Hidden: true, NoIgnore: true, Follow: true})
	if m := leaks(g, nil, markers...); m != "" {
		t.Errorf("grep . shows %q, which a rule protects", m)
	}
}

// TestSeamNoClobberSwapped: write --no-clobber (and cp without --force)
// finds no file; at the wrong moment another process creates it. The
// commit is exclusive: exists, and the other file stays.
//
// Fails on the pre-fix main (1b30963) (issue 12 item 3): the temp file is renamed over
// the name (and the seam is never called).
func TestSeamNoClobberSwapped(t *testing.T) {
	for _, cmd := range []string{"write --no-clobber", "cp"} {
		t.Run(cmd, func(t *testing.T) {
			seamSweep(t, []string{"replace.checked"}, func(t *testing.T) *seamCase {
				fx := newFixture(t, map[string]string{"src.txt": "MINE"}, nil)
				return &seamCase{fx: fx,
					swap: func() { must(t, os.WriteFile(fx.abs("n.txt"), []byte("THEIRS"), 0o644)) },
					act: func() (any, error) {
						if cmd == "cp" {
							return ops.Copy(context.Background(), fx.sb, "src.txt", "n.txt", false)
						}
						return ops.Write(context.Background(), fx.sb, ops.WriteOptions{Path: "n.txt", NoClobber: true, Content: strings.NewReader("MINE")})
					},
					check: func(t *testing.T, res any, err error, swapped bool) {
						if !swapped {
							if err != nil {
								t.Errorf("%s without a swap: %v", cmd, err)
							}
							fx.mustHave("n.txt", "MINE")
							return
						}
						if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeExists {
							t.Errorf("%s with n.txt created concurrently: %v, want exists", cmd, err)
						}
						fx.mustHave("n.txt", "THEIRS")
					}}
			})
		})
	}
}

// TestSeamFollowSwapped: append, edit and edit --dry-run check t.txt; at
// the wrong moment t.txt becomes a symlink to .env (denied) or to a file
// outside the root. The call fails (denied or conflict) or acts on the
// original object; .env and the outside file are never read (nothing of
// them in any answer or diff, not even a hash) nor written.
//
// Fails on the pre-fix main (1b30963) (issue 12 item 10): the name is reopened through
// os.Root, which follows in-root links (and the seam is never called).
func TestSeamFollowSwapped(t *testing.T) {
	const envSecret, outSecret = "SECRET-ENV orig\n", "OUTSIDE-SECRET orig\n"
	type command struct {
		name  string
		must  string
		act   func(sb *sandbox.Sandbox) (any, error)
		after string // t.txt's content after the call acts on it
	}
	cmds := []command{
		{"append", "append.checked", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t.txt", Append: true, Content: strings.NewReader("APPENDED\n")})
		}, "hello orig\nAPPENDED\n"},
		{"append --mode", "append.checked", func(sb *sandbox.Sandbox) (any, error) {
			m := fs.FileMode(0o600)
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t.txt", Append: true, Mode: &m, Content: strings.NewReader("APPENDED\n")})
		}, "hello orig\nAPPENDED\n"},
		{"edit", "edit.checked", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: "t.txt", Edits: []ops.EditSpec{{Old: "orig", New: "EDITED"}}})
		}, "hello EDITED\n"},
		{"edit --dry-run", "", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: "t.txt", Edits: []ops.EditSpec{{Old: "orig", New: "EDITED"}}, DryRun: true})
		}, "hello orig\n"},
		{"write (replace)", "replace.checked", func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t.txt", Content: strings.NewReader("REPLACED\n")})
		}, "REPLACED\n"},
	}
	for _, cmd := range cmds {
		for _, to := range []string{".env", "../outside/o.txt", "ABS"} {
			t.Run(cmd.name+" -> "+to, func(t *testing.T) {
				var points []string
				if cmd.must != "" {
					points = []string{cmd.must}
				}
				seamSweep(t, points, func(t *testing.T) *seamCase {
					fx := newFixture(t, map[string]string{"t.txt": "hello orig\n", ".env": envSecret, "outside/o.txt": outSecret},
						func(p *policy.Policy) { p.Paths.Deny = []string{"**/.env"} })
					must(t, os.Chmod(fx.abs("outside/o.txt"), 0o640))
					target := to
					if to == "ABS" {
						target = fx.abs("outside/o.txt")
					}
					return &seamCase{fx: fx,
						swap: func() {
							must(t, os.Rename(fx.abs("t.txt"), fx.abs("t.orig")))
							must(t, os.Symlink(target, fx.abs("t.txt")))
						},
						act: func() (any, error) { return cmd.act(fx.sb) },
						check: func(t *testing.T, res any, err error, swapped bool) {
							noLeak(t, cmd.name, res, err, envSecret, outSecret, "SECRET-ENV", "OUTSIDE-SECRET")
							fx.mustHave(".env", envSecret)
							fx.mustHave("outside/o.txt", outSecret)
							// Nothing of them was copied where fsbox reads.
							assertUnreadable(t, fx, "SECRET-ENV", "OUTSIDE-SECRET")
							if m := fx.mode("outside/o.txt"); m != 0o640 {
								t.Errorf("%s: the outside file's mode changed to %v", cmd.name, m)
							}
							if !swapped {
								if err != nil {
									t.Errorf("%s without a swap: %v", cmd.name, err)
								}
								fx.mustHave("t.txt", cmd.after)
								return
							}
							wantCode(t, cmd.name, err, fserr.CodeDenied, fserr.CodeConflict)
							if err == nil {
								// Acted on the original object, or replaced
								// the name itself (the link, never its target).
								orig, _ := fx.content("t.orig")
								now, _ := fx.content("t.txt")
								if orig != cmd.after && orig != "hello orig\n" {
									t.Errorf("%s: the original file holds %q", cmd.name, orig)
								}
								if fx.mode("t.txt")&fs.ModeSymlink == 0 && now != cmd.after {
									t.Errorf("%s: t.txt holds %q", cmd.name, now)
								}
							}
						}}
				})
			})
		}
	}
}

// TestConcurrentNoClobberCreators: eight goroutines create one name with
// write --no-clobber (then cp without --force): exactly one succeeds, the
// others get exists, and the surviving content is the winner's.
//
// Fails on the pre-fix main (1b30963) in most rounds (issue 12 item 3).
func TestConcurrentNoClobberCreators(t *testing.T) {
	const creators, rounds = 8, 10
	for _, cmd := range []string{"write --no-clobber", "cp"} {
		t.Run(cmd, func(t *testing.T) {
			files := map[string]string{}
			for i := range creators {
				files[fmt.Sprintf("s%d.txt", i)] = fmt.Sprintf("creator-%d", i)
			}
			fx := newFixture(t, files, nil)
			bad := 0
			for r := range rounds {
				name := fmt.Sprintf("n%d.txt", r)
				start := make(chan struct{})
				errs := make([]error, creators)
				var wg sync.WaitGroup
				for i := range creators {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						if cmd == "cp" {
							_, errs[i] = ops.Copy(context.Background(), fx.sb, fmt.Sprintf("s%d.txt", i), name, false)
						} else {
							_, errs[i] = ops.Write(context.Background(), fx.sb, ops.WriteOptions{Path: name, NoClobber: true,
								Content: strings.NewReader(fmt.Sprintf("creator-%d", i))})
						}
					}()
				}
				close(start)
				wg.Wait()
				var won []int
				for i, err := range errs {
					switch {
					case err == nil:
						won = append(won, i)
					case fserr.AsError(err).Code != fserr.CodeExists:
						t.Errorf("round %d, creator %d: %v, want success or exists", r, i, err)
					}
				}
				got, _ := fx.content(name)
				if len(won) != 1 || got != fmt.Sprintf("creator-%d", won[0]) {
					bad++
					if bad <= 3 {
						t.Errorf("round %d: creators %v succeeded (want exactly one), %s holds %q", r, won, name, got)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d rounds lost an acknowledged write", bad, rounds)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSeamMkdirSwapped: write and mkdir make missing parents one at a
// time; at the wrong moment a directory just made is replaced by a symlink
// into a denied directory. Nothing is ever created below the denied
// directory: the call answers conflict (or denied) and stops.
//
// On 954f6a3 the parents were made by os.Root.MkdirAll on the whole path
// again, which follows such a symlink (and the seam did not exist).
func TestSeamMkdirSwapped(t *testing.T) {
	for _, cmd := range []string{"write", "mkdir"} {
		t.Run(cmd, func(t *testing.T) {
			seamSweep(t, []string{"mkdir.made"}, func(t *testing.T) *seamCase {
				fx := newFixture(t, map[string]string{"secret/k.txt": "S"}, func(p *policy.Policy) {
					p.Paths.Deny = []string{"secret/**"}
				})
				return &seamCase{fx: fx,
					swap: func() { // the deepest directory made so far becomes a symlink to secret
						for _, d := range []string{"a/b/c", "a/b", "a"} {
							if _, err := os.Lstat(fx.abs(d)); err == nil {
								must(t, os.RemoveAll(fx.abs(d)))
								must(t, os.Symlink(strings.Repeat("../", strings.Count(d, "/"))+"secret", fx.abs(d)))
								return
							}
						}
					},
					act: func() (any, error) {
						if cmd == "mkdir" {
							return ops.Mkdir(context.Background(), fx.sb, "a/b/c/d")
						}
						return ops.Write(context.Background(), fx.sb, ops.WriteOptions{Path: "a/b/c/f.txt", Content: strings.NewReader("x")})
					},
					check: func(t *testing.T, res any, err error, swapped bool) {
						if ents, _ := os.ReadDir(fx.abs("secret")); len(ents) != 1 {
							t.Errorf("%s created something in the denied directory: %v", cmd, ents)
						}
						if !swapped && err != nil {
							t.Errorf("%s without a swap: %v", cmd, err)
						}
						if swapped {
							wantCode(t, cmd, err, fserr.CodeConflict, fserr.CodeDenied)
						}
					}}
			})
		})
	}
}
