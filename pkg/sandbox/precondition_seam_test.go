//go:build unix

package sandbox_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestSeamPreconditionChanged: under [write] require_precondition each
// change carries the sha256 of t.txt as it was read; at every point
// between the early check and the act, another writer replaces t.txt
// (by rename, or in place). The change is then conflict, and t.txt holds
// the other writer's content: the precondition is checked under the lock,
// at the moment of the change, so no update is lost. The refusal never
// gives the current hash.
func TestSeamPreconditionChanged(t *testing.T) {
	mine := sha256Hex("MINE\n")
	cmds := map[string]func(sb *sandbox.Sandbox) (any, error){
		"write": func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t.txt", Content: strings.NewReader("NEW\n"), ExpectSHA256: mine})
		},
		"write --append": func(sb *sandbox.Sandbox) (any, error) {
			return ops.Write(context.Background(), sb, ops.WriteOptions{Path: "t.txt", Append: true, Content: strings.NewReader("NEW\n"), ExpectSHA256: mine})
		},
		"edit": func(sb *sandbox.Sandbox) (any, error) {
			return ops.Edit(context.Background(), sb, ops.EditOptions{Path: "t.txt", Edits: []ops.EditSpec{{Old: "\n", New: "!\n", All: true}}, ExpectSHA256: mine})
		},
		"rm": func(sb *sandbox.Sandbox) (any, error) {
			return ops.RemoveExpect(context.Background(), sb, "t.txt", false, mine)
		},
		"cp --force": func(sb *sandbox.Sandbox) (any, error) {
			return ops.CopyExpect(context.Background(), sb, "src.txt", "t.txt", true, mine)
		},
		"mv --force": func(sb *sandbox.Sandbox) (any, error) {
			return ops.MoveExpect(context.Background(), sb, "src.txt", "t.txt", true, mine)
		},
		"patch": func(sb *sandbox.Sandbox) (any, error) {
			return ops.Patch(context.Background(), sb, ops.PatchOptions{Patch: "*** Begin Patch\n*** Update File: t.txt\n@@\n-MINE\n+NEW\n*** End Patch\n", Expect: map[string]string{"t.txt": mine}})
		},
	}
	for name, act := range cmds {
		for _, how := range []string{"rename", "in place"} {
			t.Run(name+" "+how, func(t *testing.T) {
				seamSweep(t, nil, func(t *testing.T) *seamCase {
					fx := newFixture(t, map[string]string{"t.txt": "MINE\n", "src.txt": "SRC\n"}, func(p *policy.Policy) { p.Write.RequirePrecondition = true })
					var point, at string // the point firing now; the one the swap came at
					return &seamCase{fx: fx,
						swap: func() {
							at = point
							if how == "in place" {
								must(t, os.WriteFile(fx.abs("t.txt"), []byte("THEIRS\n"), 0o644))
								return
							}
							must(t, os.WriteFile(fx.abs("other.tmp"), []byte("THEIRS\n"), 0o644))
							must(t, os.Rename(fx.abs("other.tmp"), fx.abs("t.txt")))
						},
						act: func() (any, error) {
							if prev := sandbox.Seam; prev != nil {
								sandbox.Seam = func(p string) { point = p; prev(p) }
							}
							return act(fx.sb)
						},
						check: func(t *testing.T, res any, err error, swapped bool) {
							if !swapped {
								if err != nil {
									t.Errorf("%s without a swap: %v", name, err)
								}
								return
							}
							if at == "batch.swapped" {
								// After the change: theirs is the later one.
								fx.mustHave("t.txt", "THEIRS\n")
								return
							}
							if how == "in place" && (at == "batch.planned" || at == "replace.locked" || at == "rename.locked") {
								// Past the last check, in place: the window the
								// README names (an in-place writer outside fsbox
								// during the commit can be lost).
								return
							}
							if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConflict {
								t.Errorf("%s with t.txt replaced (%s, at %s) during the call: %v, want conflict", name, how, at, err)
								return
							}
							fx.mustHave("t.txt", "THEIRS\n")
							if strings.Contains(fserr.AsError(err).Message(nil), sha256Hex("THEIRS\n")) {
								t.Errorf("%s: the refusal gives the current hash: %v", name, err)
							}
						}}
				})
			})
		}
	}
}
