//go:build unix

package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyTreeTool: fsbox_cp's recursive argument copies a tree in one
// call (the same descriptor as the CLI's cp -r): denied entries are
// skipped and counted, a link whose target is denied where the copy
// would put it refuses the whole copy, and expect goes with a file copy
// only (with recursive, expect_sha256 takes PATH=HEX).
func TestCopyTreeTool(t *testing.T) {
	h := newHarness(t, setup{toml: attackPolicy, files: map[string]string{
		"app/ok.txt":   "fine\n",
		"app/.env":     secretMarker + "\n",
		"app/k/c.PEM":  secretMarker + "\n",
		"app/d/x.txt":  "x\n",
		"secrets/key":  secretMarker + "\n",
		"dst/app/x.md": "old\n",
	}})
	got := h.ok("fsbox_cp", map[string]any{"src": "app", "dst": "copy", "recursive": true})
	if got["to"] != "copy" || got["files"] != float64(2) || got["skipped"].(map[string]any)["denied"] != float64(2) {
		t.Errorf("cp recursive: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(h.work, "copy/d/x.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("copy/d/x.txt: %q, %v", b, err)
	}
	// Into an existing directory: dst/app, which exists: exists without force.
	h.fail("fsbox_cp", map[string]any{"src": "app", "dst": "dst", "recursive": true}, "exists", "")
	got = h.ok("fsbox_cp", map[string]any{"src": "app", "dst": "dst", "recursive": true, "force": true})
	if got["to"] != "dst/app" {
		t.Errorf("cp recursive force: %v", got)
	}
	// A symlink to a denied path, once copied.
	must(t, os.Symlink("../secrets", filepath.Join(h.work, "app/sec")))
	h.fail("fsbox_cp", map[string]any{"src": "app", "dst": "copy2", "recursive": true}, "denied", "deny")
	if _, err := os.Lstat(filepath.Join(h.work, "copy2")); err == nil {
		t.Errorf("copy2 exists after a refused copy")
	}
	h.fail("fsbox_cp", map[string]any{"src": "app", "dst": "copy3", "recursive": true, "expect_sha256": []any{"abc"}}, "usage", "")
}
