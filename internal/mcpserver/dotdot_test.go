//go:build unix

package mcpserver

import (
	"testing"
)

// TestDotDotThroughDeniedOverMCP: over MCP, as on the command line, a
// path that passes through a denied directory with '..' gets the same
// answer whether what it names there is a directory, a file or nothing
// ('..' is resolved lexically before any rule or open). Fails on
// c24bc27: fsbox_read secret/sub/../../a.txt returned a.txt,
// secret/nosuch/../../a.txt was not_found and secret/key/../../a.txt
// not_found "(a parent is not a directory)".
func TestDotDotThroughDeniedOverMCP(t *testing.T) {
	h := newHarness(t, setup{toml: `workdir = "$WORK"
[paths]
deny = ["secret", "secret/**"]
`, files: map[string]string{
		"a.txt":        "hello\n",
		"secret/sub/k": secretMarker + "\n",
		"secret/key":   secretMarker + "\n",
		"d/readme.md":  "hello\n",
	}})
	calls := []struct {
		tool string
		args func(p string) map[string]any
	}{
		{"fsbox_read", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"fsbox_stat", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"fsbox_wc", func(p string) map[string]any { return map[string]any{"paths": []any{p}} }},
		{"fsbox_grep", func(p string) map[string]any { return map[string]any{"pattern": "hello", "paths": []any{p}} }},
	}
	for _, c := range calls {
		var first string
		for _, x := range []string{"sub", "nosuch", "key"} {
			p := "secret/" + x + "/../../a.txt"
			res, err := h.call(c.tool, c.args(p))
			if err != nil {
				t.Fatalf("%s %s: %v", c.tool, p, err)
			}
			text := textOf(t, res)
			if res.IsError {
				t.Errorf("%s %s: %s", c.tool, p, text)
				continue
			}
			if first == "" {
				first = text
			} else if text != first {
				t.Errorf("%s: secret/%s/../../a.txt answers\n%s\nsecret/sub/../../a.txt answers\n%s", c.tool, x, text, first)
			}
		}
	}
	if out := h.ok("fsbox_read", map[string]any{"path": "secret/key/../../a.txt"}); out["path"] != "a.txt" || out["content"] != "hello\n" {
		t.Errorf("fsbox_read secret/key/../../a.txt: %v", out)
	}
	h.fail("fsbox_read", map[string]any{"path": "secret/nosuch/../key"}, "denied", "deny")
	h.fail("fsbox_ls", map[string]any{"path": "secret/nosuch/.."}, "denied", "deny")
}
