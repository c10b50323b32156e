//go:build unix

package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A served root removed (SPEC §5): a running server whose workdir was
// removed and re-created answers not_found naming the root and saying
// to restart, never a symlink denial, and serves nothing of the new
// directory; fsbox_roots lists the root in gone_roots.
func TestServedRootRecreatedNative(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "old\n", "sub/b.txt": "old\n"}})
	h.ok("fsbox_read", map[string]any{"path": "a.txt"})
	must(t, os.RemoveAll(h.work))
	writeFile(t, filepath.Join(h.work, "a.txt"), "NEW\n")
	writeFile(t, filepath.Join(h.work, "sub", "b.txt"), "NEW\n")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"fsbox_read", map[string]any{"path": "a.txt"}},
		{"fsbox_read", map[string]any{"path": "missing.txt"}},
		{"fsbox_ls", map[string]any{"path": "."}},
		{"fsbox_ls", map[string]any{"path": "sub"}},
		{"fsbox_stat", map[string]any{"path": "sub"}},
		{"fsbox_find", map[string]any{}},
		{"fsbox_grep", map[string]any{"pattern": "NEW"}},
		{"fsbox_write", map[string]any{"path": "c.txt", "content": "x"}},
		{"fsbox_mkdir", map[string]any{"path": "d"}},
	} {
		e := h.fail(c.tool, c.args, "not_found", "")
		if e.Rule != "" || !strings.Contains(e.Message, h.work) || !strings.Contains(e.Message, "re-created") ||
			!strings.Contains(e.Message, "restart") || strings.Contains(e.Message, "symlink") {
			t.Errorf("%s %v: %+v, want not_found naming %s, re-created and restart", c.tool, c.args, e, h.work)
		}
	}
	for _, name := range []string{"c.txt", "d"} {
		if _, err := os.Lstat(filepath.Join(h.work, name)); err == nil {
			t.Errorf("%s was made in the directory re-created at the root's path", name)
		}
	}
	roots := h.ok("fsbox_roots", nil)
	gone, _ := roots["gone_roots"].([]any)
	if len(gone) != 1 {
		t.Fatalf("fsbox_roots: gone_roots = %v, want the workdir", roots["gone_roots"])
	}
	g, _ := gone[0].(map[string]any)
	if g["root"] != h.work || g["state"] != "re-created" {
		t.Errorf("fsbox_roots: gone_roots = %v, want [{root: %s, state: re-created}]", gone, h.work)
	}
}

// The reference profile answers as the native one, and
// list_allowed_directories says which root is gone.
func TestServedRootRemovedReference(t *testing.T) {
	work, _, p := refFixture(t)
	cs := refSession(t, p)
	okText(t, cs, "read_text_file", map[string]any{"path": "a.txt"})
	realWork, _ := filepath.EvalSymlinks(work)
	must(t, os.RemoveAll(work))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": "a.txt"}},
		{"list_directory", map[string]any{"path": "."}},
		{"write_file", map[string]any{"path": "c.txt", "content": "x"}},
		{"get_file_info", map[string]any{"path": "sub"}},
	} {
		res := callTool(t, cs, c.tool, c.args)
		text := refTextOf(res)
		if !res.IsError || !strings.Contains(text, `"not_found"`) || !strings.Contains(text, realWork) ||
			!strings.Contains(text, "restart") || strings.Contains(text, "symlink") {
			t.Errorf("%s %v: %s, want not_found naming %s and restart", c.tool, c.args, text, realWork)
		}
	}
	got := okText(t, cs, "list_allowed_directories", nil)
	if !strings.Contains(got, "Gone: "+realWork+" (removed") || !strings.Contains(got, "restart") {
		t.Errorf("list_allowed_directories after the workdir was removed: %q", got)
	}
}
