package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Fails on 6a21fbf: over MCP, fsbox_patch renamed a.txt with mv switched
// off, and applied a patch text over max_write_bytes; fsbox_edit's old
// text over the cap was text_not_found.
func TestPatchDoorOverMCP(t *testing.T) {
	files := map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n"}
	h := newHarness(t, setup{toml: "workdir = \"$WORK\"\n[commands]\nmv = false\nrm = false\n[limits]\nmax_write_bytes = 256\n", files: files})
	unchanged := func(what string) {
		t.Helper()
		for name, want := range files {
			if b, err := os.ReadFile(filepath.Join(h.work, name)); err != nil || string(b) != want {
				t.Errorf("%s: %s is %q (%v), want %q", what, name, b, err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(h.work, "c.txt")); !os.IsNotExist(err) {
			t.Errorf("%s: c.txt exists", what)
		}
	}

	// Each action of a patch needs its command.
	h.fail("fsbox_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: c.txt\n*** End Patch\n"}, "denied", "command")
	h.fail("fsbox_patch", map[string]any{"patch": "diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\n"}, "denied", "command")
	h.fail("fsbox_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Delete File: b.txt\n*** End Patch\n"}, "denied", "command")
	unchanged("toggles")

	// The texts a change brings are capped, as arguments too.
	big := strings.Repeat("\n", 256) + "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
	long := strings.Repeat("x", 257)
	h.fail("fsbox_patch", map[string]any{"patch": big}, "too_large", "size_cap")
	h.fail("fsbox_patch", map[string]any{"patch": big, "dry_run": true}, "too_large", "size_cap")
	h.fail("fsbox_edit", map[string]any{"path": "a.txt", "old": long, "new": "x"}, "too_large", "size_cap")
	h.fail("fsbox_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old": "one", "new": long}}}, "too_large", "size_cap")
	h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": long}, "too_large", "size_cap")
	unchanged("caps")

	// explain says which actions the policy switches off.
	out := h.ok("fsbox_explain", map[string]any{"command": "patch", "path": "a.txt"})
	if reason, _ := out["reason"].(string); !strings.Contains(reason, "delete (rm off)") || !strings.Contains(reason, "move (mv off)") {
		t.Errorf("explain patch: %v", out)
	}
	if acts, _ := out["actions"].([]any); len(acts) != 5 {
		t.Errorf("explain patch: actions %v", out["actions"])
	}

	// What the policy allows still goes through.
	h.ok("fsbox_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"})
	if b, _ := os.ReadFile(filepath.Join(h.work, "a.txt")); string(b) != "ONE\ntwo\n" {
		t.Errorf("a.txt: %q", b)
	}
}

// Fails on 6a21fbf: the reference profile's edit_file with an oldText
// over max_write_bytes was text_not_found, not too_large.
func TestReferenceTextsCapped(t *testing.T) {
	work, _, p := refFixture(t)
	p.Limits.MaxWriteBytes = 256
	cs := refSession(t, p)
	long := strings.Repeat("x", 257)
	if c := errCode(t, cs, "edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": long, "newText": "x"}}}); c != string(fserr.CodeTooLarge) {
		t.Errorf("edit_file with a long oldText: code %s", c)
	}
	if c := errCode(t, cs, "write_file", map[string]any{"path": "a.txt", "content": long}); c != string(fserr.CodeTooLarge) {
		t.Errorf("write_file with long content: code %s", c)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\ntwo\nthree\nfour\n" {
		t.Errorf("a.txt changed: %q", b)
	}
}
