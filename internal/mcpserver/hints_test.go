package mcpserver

import (
	"strings"
	"testing"
)

// TestHintsInEachFacesWords: an error that names an option a call could
// pass speaks the face's language (issue 27). The CLI says --force (its
// goldens: mv_basic), a native tool names its argument, and a reference
// tool, which has no such argument, says what to do instead.
// Fails before the structured hint: every face read "pass --force".
func TestHintsInEachFacesWords(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d/x.txt": "x\n"},
		toml: "workdir = \"$WORK\"\n[commands]\nrm = true\n"})
	e := h.fail("fsbox_mv", map[string]any{"src": "a.txt", "dst": "b.txt"}, "exists", "")
	if want := `b.txt exists: pass "force": true to replace it`; e.Message != want {
		t.Errorf("native mv onto an existing file: %q, want %q", e.Message, want)
	}
	e = h.fail("fsbox_rm", map[string]any{"path": "d"}, "not_a_file", "")
	if want := `d is a directory: pass "recursive": true to remove it and everything below`; e.Message != want {
		t.Errorf("native rm of a directory: %q, want %q", e.Message, want)
	}

	work, _, p := refFixture(t)
	_ = work
	cs := refSession(t, p)
	res := callTool(t, cs, "move_file", map[string]any{"source": "a.txt", "destination": "dup.txt"})
	text := refTextOf(res)
	if !res.IsError || !strings.Contains(text, "dup.txt exists: move or remove it first") || strings.Contains(text, "force") {
		t.Errorf("reference move_file onto an existing file: %s", text)
	}
}
