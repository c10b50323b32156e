package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// inputSchemas lists the server's tools' input schemas by name, as a
// client sees them.
func (h *harness) inputSchemas() map[string]map[string]any {
	h.t.Helper()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		var m map[string]any
		json.Unmarshal(b, &m)
		out[tl.Name] = m
	}
	return out
}

func required(schema map[string]any) []string {
	var out []string
	r, _ := schema["required"].([]any)
	for _, v := range r {
		out = append(out, v.(string))
	}
	return out
}

func hasProperty(schema map[string]any, name string) bool {
	p, _ := schema["properties"].(map[string]any)
	_, ok := p[name]
	return ok
}

const preconditionPolicy = "workdir = \"$WORK\"\n[commands]\nrm = true\n[paths]\ndeny = [\"secret/**\"]\n[write]\nrequire_precondition = true\n"

// TestExpectArgumentSchema: the native tools that change one file take
// one argument expect (a sha256 or "absent"); under [write]
// require_precondition it is required where every call can name one
// (write, edit, cp, mv; rm of a directory names none), and without the
// switch it is optional everywhere.
func TestExpectArgumentSchema(t *testing.T) {
	on := newHarness(t, setup{toml: preconditionPolicy}).inputSchemas()
	off := newHarness(t, setup{toml: "workdir = \"$WORK\"\n[commands]\nrm = true\n"}).inputSchemas()
	for _, tool := range []string{"fsbox_write", "fsbox_edit", "fsbox_cp", "fsbox_mv", "fsbox_rm"} {
		for name, schemas := range map[string]map[string]map[string]any{"on": on, "off": off} {
			s := schemas[tool]
			if !hasProperty(s, "expect") {
				t.Errorf("%s (switch %s): no expect argument: %v", tool, name, s["properties"])
			}
			want := name == "on" && tool != "fsbox_rm"
			if got := slices.Contains(required(s), "expect"); got != want {
				t.Errorf("%s (switch %s): expect required = %v, want %v", tool, name, got, want)
			}
		}
	}
	for _, tool := range []string{"fsbox_read", "fsbox_patch", "fsbox_mkdir", "fsbox_undo"} {
		if hasProperty(on[tool], "expect") {
			t.Errorf("%s takes expect", tool)
		}
	}
}

// TestExpectArgument: expect maps onto each operation's own
// preconditions; a missing one is precondition_required whose message
// names the tool's argument; a wrong one is conflict without the current
// hash; a denied path is denied whatever it holds.
func TestExpectArgument(t *testing.T) {
	h := newHarness(t, setup{toml: preconditionPolicy, files: map[string]string{
		"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "secret/s.txt": "s\n", "d/y.txt": "y\n"}})
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(h.work, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}

	e := h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": "A"}, "precondition_required", "")
	if !strings.Contains(e.Message, `pass "expect" with the file's current sha256`) {
		t.Errorf("write over a file without expect: %q", e.Message)
	}
	e = h.fail("fsbox_write", map[string]any{"path": "n.txt", "content": "N"}, "precondition_required", "")
	if !strings.Contains(e.Message, `pass "expect": "absent" to create it`) {
		t.Errorf("write of a new file without expect: %q", e.Message)
	}
	h.ok("fsbox_write", map[string]any{"path": "n.txt", "content": "N", "expect": "absent"})
	h.fail("fsbox_write", map[string]any{"path": "n.txt", "content": "N2", "expect": "absent"}, "exists", "")
	e = h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": "A", "expect": sumOf("b\n")}, "conflict", "")
	if strings.Contains(e.Message, sumOf("a\n")) {
		t.Errorf("conflict names the current hash: %q", e.Message)
	}
	h.ok("fsbox_write", map[string]any{"path": "a.txt", "content": "A", "expect": strings.ToUpper(sumOf("a\n"))})
	if got := read("a.txt"); got != "A" {
		t.Errorf("a.txt = %q", got)
	}
	h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": "A", "expect": "nope"}, "usage", "")
	h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": "A", "expect": "absent", "expect_sha256": sumOf("A")}, "usage", "")
	h.ok("fsbox_write", map[string]any{"path": "a.txt", "content": "B", "append": true, "expect": sumOf("A")})

	h.fail("fsbox_edit", map[string]any{"path": "b.txt", "old": "b", "new": "B"}, "precondition_required", "")
	h.fail("fsbox_edit", map[string]any{"path": "b.txt", "old": "b", "new": "B", "expect": "absent"}, "usage", "")
	h.ok("fsbox_edit", map[string]any{"path": "b.txt", "old": "b", "new": "B", "expect": sumOf("b\n")})

	// cp and mv: a sha256 replaces that file (force); "absent" keeps dst.
	h.fail("fsbox_cp", map[string]any{"src": "c.txt", "dst": "b.txt", "force": true}, "precondition_required", "")
	h.fail("fsbox_cp", map[string]any{"src": "c.txt", "dst": "b.txt", "expect": "absent"}, "exists", "")
	h.fail("fsbox_cp", map[string]any{"src": "c.txt", "dst": "b.txt", "expect": "absent", "force": true}, "usage", "")
	h.fail("fsbox_cp", map[string]any{"src": "c.txt", "dst": "b.txt", "expect": sumOf("b\n")}, "conflict", "")
	h.ok("fsbox_cp", map[string]any{"src": "c.txt", "dst": "b.txt", "expect": sumOf("B\n")})
	h.ok("fsbox_cp", map[string]any{"src": "c.txt", "dst": "c2.txt", "expect": "absent"})
	h.fail("fsbox_mv", map[string]any{"src": "c2.txt", "dst": "n.txt", "force": true}, "precondition_required", "")
	h.ok("fsbox_mv", map[string]any{"src": "c2.txt", "dst": "n.txt", "expect": sumOf("N")})
	if got := read("n.txt"); got != "c\n" {
		t.Errorf("n.txt = %q", got)
	}

	// rm: a file by its sha256; a directory only when empty.
	h.fail("fsbox_rm", map[string]any{"path": "n.txt"}, "precondition_required", "")
	h.ok("fsbox_rm", map[string]any{"path": "n.txt", "expect": sumOf("c\n")})
	h.fail("fsbox_rm", map[string]any{"path": "d", "recursive": true}, "precondition_required", "")

	// undo: force refused.
	h.fail("fsbox_undo", map[string]any{"force": true}, "precondition_required", "")

	// A denied path: denied, the same answer with any expect and whether
	// it holds a file or not.
	var answers []string
	for _, args := range []map[string]any{
		{"path": "secret/s.txt", "content": "X"},
		{"path": "secret/s.txt", "content": "X", "expect": "absent"},
		{"path": "secret/s.txt", "content": "X", "expect": sumOf("s\n")},
		{"path": "secret/s.txt", "content": "X", "expect": sumOf("t\n")},
	} {
		answers = append(answers, h.fail("fsbox_write", args, "denied", "deny").Message)
	}
	if err := os.Remove(filepath.Join(h.work, "secret", "s.txt")); err != nil {
		t.Fatal(err)
	}
	answers = append(answers, h.fail("fsbox_write", map[string]any{"path": "secret/s.txt", "content": "X", "expect": sumOf("s\n")}, "denied", "deny").Message)
	answers = append(answers, h.fail("fsbox_write", map[string]any{"path": "secret/s.txt", "content": "X", "expect": "absent"}, "denied", "deny").Message)
	for _, a := range answers[1:] {
		if a != answers[0] {
			t.Errorf("a denied path answers differently: %q vs %q", a, answers[0])
		}
	}
}
