package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestReferenceEveryDirWritable: served with the reference profile,
// every directory on the command line is writable, as the reference
// server lets each be written: write_file, create_directory, edit_file
// and move_file work in the second as in the first (the served policy:
// the first the workdir, the rest write roots), and
// list_allowed_directories lists both.
func TestReferenceEveryDirWritable(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	d1, d2 := filepath.Join(base, "one"), filepath.Join(base, "two")
	for _, d := range []string{d1, d2} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := policy.ServePolicyWritable(policy.DefaultPolicy(base), []string{d1, d2}, true)
	if err != nil {
		t.Fatal(err)
	}
	p.Journal.State = t.TempDir()
	cs := refSession(t, p)
	f := filepath.Join(d2, "notes.txt")
	okText(t, cs, "write_file", map[string]any{"path": f, "content": "old\n"})
	okText(t, cs, "edit_file", map[string]any{"path": f, "edits": []map[string]any{{"oldText": "old", "newText": "new"}}})
	okText(t, cs, "create_directory", map[string]any{"path": filepath.Join(d2, "sub")})
	okText(t, cs, "move_file", map[string]any{"source": f, "destination": filepath.Join(d2, "sub", "notes.txt")})
	if b, err := os.ReadFile(filepath.Join(d2, "sub", "notes.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("the second directory after write, edit, mkdir, move: %q, %v", b, err)
	}
	allowed := okText(t, cs, "list_allowed_directories", map[string]any{})
	if !strings.Contains(allowed, d1) || !strings.Contains(allowed, d2) {
		t.Errorf("list_allowed_directories: %q, want both directories", allowed)
	}
	// Outside both: still denied.
	if c := errCode(t, cs, "write_file", map[string]any{"path": filepath.Join(base, "x.txt"), "content": "x"}); c != "denied" {
		t.Errorf("write outside the directories: %s, want denied", c)
	}
}

// TestReferenceHintsInToolTerms: a refusal's hint never names an option
// the reference tool has not (move_file onto an existing file: no
// "pass --force"; it says what to do instead).
func TestReferenceHintsInToolTerms(t *testing.T) {
	_, _, p := refFixture(t)
	cs := refSession(t, p)
	okText(t, cs, "write_file", map[string]any{"path": "b.txt", "content": "b\n"})
	res := callTool(t, cs, "move_file", map[string]any{"source": "b.txt", "destination": "a.txt"})
	msg := refTextOf(res)
	if !res.IsError || strings.Contains(msg, "force") || !strings.Contains(msg, "move or remove it first") {
		t.Errorf("move_file onto an existing file: %q, want exists with the hint in the tool's terms", msg)
	}
}

// sandboxBirth is p's creation time as statx reports it, in the
// reference's format (ok false where the file system keeps none).
func sandboxBirth(t *testing.T, p string) (string, bool) {
	t.Helper()
	sb, err := sandbox.New(policy.DefaultPolicy(filepath.Dir(p)), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	bt, ok := sb.BirthTime(filepath.Base(p))
	return bt.Format("2006-01-02T15:04:05.000Z"), ok
}
