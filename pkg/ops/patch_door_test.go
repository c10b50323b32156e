//go:build unix

package ops

// Issue 25 ("one door"): a patch obeys the command toggles of what it
// does, the texts a change brings are capped by max_write_bytes however
// they arrive, and explain patch says which of a patch's actions the
// policy allows. The calls go through the operations' Run with tool-call
// input (spec.FromJSON) or the command line's stdin, as every face does.

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// doorSandbox is a sandbox on a fresh workdir holding files, under the
// built-in policy with the given commands switched off and, when
// maxWrite > 0, that max_write_bytes.
func doorSandbox(t *testing.T, files map[string]string, off []string, maxWrite int64) (*sandbox.Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	p := policy.DefaultPolicy(dir)
	p.Journal.State = t.TempDir()
	for _, c := range off {
		p.Commands[c] = false
	}
	if maxWrite > 0 {
		p.Limits.MaxWriteBytes = maxWrite
	}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, dir
}

// runTool runs operation name on a tool call's JSON arguments.
func runTool(sb *sandbox.Sandbox, name string, args map[string]any) (any, error) {
	op, _ := Registry.Lookup(name)
	raw, _ := json.Marshal(args)
	in, err := spec.FromJSON(op, raw)
	if err != nil {
		return nil, err
	}
	return op.Run(context.Background(), sb, in)
}

// runStdin runs operation name with text on standard input, as the
// command line gives it.
func runStdin(sb *sandbox.Sandbox, name string, text string) (any, error) {
	op, _ := Registry.Lookup(name)
	in := spec.NewInput(op)
	in.Stdin = strings.NewReader(text)
	sb.SetStdin(in.Stdin)
	return op.Run(context.Background(), sb, in)
}

// readTree is every regular file under dir, by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = string(b)
		return err
	})
	must(t, err)
	return tree
}

// wantRefused checks that err is code (with rule, if given) and mentions
// each of says.
func wantRefused(t *testing.T, what string, err error, code fserr.Code, rule fserr.Rule, says ...string) {
	t.Helper()
	e := fserr.AsError(err)
	if e == nil {
		t.Errorf("%s: succeeded, want %s", what, code)
		return
	}
	if e.Code != code || (rule != "" && e.Rule != rule) {
		t.Errorf("%s: got %s/%s (%s), want %s/%s", what, e.Code, e.Rule, e.Msg, code, rule)
	}
	for _, s := range says {
		if !strings.Contains(e.Msg, s) {
			t.Errorf("%s: message %q does not say %q", what, e.Msg, s)
		}
	}
}

// Fails on 6a21fbf: the patch renamed a.txt to b.txt with mv switched
// off, and changed a.txt with edit switched off (only a delete checked its
// command, rm).
func TestPatchObeysCommandToggles(t *testing.T) {
	files := map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n", "run.sh": "#!/bin/sh\n"}
	env := func(body ...string) string {
		return "*** Begin Patch\n" + strings.Join(body, "\n") + "\n*** End Patch\n"
	}
	cases := []struct {
		name  string
		off   []string
		patch string
		cmd   string // the command named in the refusal; "" for none (applied)
	}{
		{"rename with mv and rm off", []string{"mv", "rm"}, env("*** Update File: a.txt", "*** Move to: c.txt"), "mv"},
		{"rename with hunks, mv off", []string{"mv"}, env("*** Update File: a.txt", "*** Move to: c.txt", "@@", "-one", "+ONE"), "mv"},
		{"rename with hunks, edit off", []string{"edit"}, env("*** Update File: a.txt", "*** Move to: c.txt", "@@", "-one", "+ONE"), "edit"},
		{"rename alone, edit off", []string{"edit"}, env("*** Update File: a.txt", "*** Move to: c.txt"), ""},
		{"update, edit off", []string{"edit"}, env("*** Update File: a.txt", "@@", "-one", "+ONE"), "edit"},
		{"delete, rm off", nil, env("*** Delete File: b.txt"), "rm"},
		{"delete after an update, rm off", nil, env("*** Update File: a.txt", "@@", "-one", "+ONE", "*** Delete File: b.txt"), "rm"},
		{"add, write off", []string{"write"}, env("*** Add File: new.txt", "+x"), "write"},
		{"git rename, mv off", []string{"mv"}, "diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\n", "mv"},
		{"git rename with a hunk, edit off", []string{"edit"}, "diff --git a/a.txt b/c.txt\nsimilarity index 80%\nrename from a.txt\nrename to c.txt\n--- a/a.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n", "edit"},
		{"unified change, edit off", []string{"edit"}, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n", "edit"},
		{"git mode change, edit off", []string{"edit"}, "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n", "edit"},
		{"unified delete, rm off", nil, "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bee\n", "rm"},
		{"unified add after a change, mv off", []string{"mv", "rm"}, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n", ""},
	}
	for _, c := range cases {
		for _, dry := range []bool{false, true} {
			sb, dir := doorSandbox(t, files, c.off, 0)
			args := map[string]any{"patch": c.patch}
			if dry {
				args["dry_run"] = true
			}
			what := c.name
			if dry {
				what += " (dry run)"
			}
			_, err := runTool(sb, "patch", args)
			after := readTree(t, dir)
			if c.cmd == "" {
				if err != nil {
					t.Errorf("%s: %v", what, err)
				}
				continue
			}
			wantRefused(t, what, err, fserr.CodeDenied, fserr.RuleCommand, `"`+c.cmd+`"`, "switched off")
			if !maps.Equal(after, files) {
				t.Errorf("%s: a refused patch changed the tree: %v", what, after)
			}
		}
	}
}

// Fails on 6a21fbf: the patch given as the tool's (or --patch's) text,
// over max_write_bytes, was applied, and an edit's old text over the cap
// was text_not_found, not too_large.
func TestChangeTextsCappedHoweverTheyArrive(t *testing.T) {
	const max = 256
	files := map[string]string{"a.txt": "one\ntwo\n", "old.txt": strings.Repeat("o", max+1), "p/big.patch": ""}
	// A patch whose result fits, padded past the cap by the blank lines
	// the envelope may start with.
	big := strings.Repeat("\n", max) + "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
	files["p/big.patch"] = big
	long := strings.Repeat("x", max+1)
	check := func(what string, run func(sb *sandbox.Sandbox) (any, error), says string) {
		t.Helper()
		sb, dir := doorSandbox(t, files, nil, max)
		_, err := run(sb)
		wantRefused(t, what, err, fserr.CodeTooLarge, fserr.RuleSizeCap, "max_write_bytes = 256", says)
		if after := readTree(t, dir); !maps.Equal(after, files) {
			t.Errorf("%s: refused, but the tree changed: %v", what, after)
		}
	}
	tool := func(name string, args map[string]any) func(*sandbox.Sandbox) (any, error) {
		return func(sb *sandbox.Sandbox) (any, error) { return runTool(sb, name, args) }
	}
	check("patch text", tool("patch", map[string]any{"patch": big}), "patch")
	check("patch text, dry run", tool("patch", map[string]any{"patch": big, "dry_run": true}), "patch")
	check("patch file", tool("patch", map[string]any{"patch_file": "p/big.patch"}), "patch")
	check("patch on stdin", func(sb *sandbox.Sandbox) (any, error) { return runStdin(sb, "patch", big) }, "patch")
	check("edit old text", tool("edit", map[string]any{"path": "a.txt", "old": long, "new": "x"}), "old text")
	check("edit new text", tool("edit", map[string]any{"path": "a.txt", "old": "one", "new": long}), "new text")
	check("edit new text, dry run", tool("edit", map[string]any{"path": "a.txt", "old": "one", "new": long, "dry_run": true}), "new text")
	check("edits", tool("edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old": "one", "new": "1"}, {"old": long, "new": "2"}}}), "old text")
	check("edit old file", func(sb *sandbox.Sandbox) (any, error) {
		op, _ := Registry.Lookup("edit")
		in := spec.NewInput(op).Set("path", "a.txt").Set("old-file", "old.txt").Set("new", "x")
		return op.Run(context.Background(), sb, in)
	}, "old-file")
	check("write content", tool("write", map[string]any{"path": "a.txt", "content": long}), "content")
	check("write content, no clobber", tool("write", map[string]any{"path": "a.txt", "content": long, "no_clobber": true}), "content")
	check("write content on stdin", func(sb *sandbox.Sandbox) (any, error) {
		op, _ := Registry.Lookup("write")
		in := spec.NewInput(op).Set("path", "w.txt")
		in.Stdin = io.LimitReader(strings.NewReader(long), max+1)
		return op.Run(context.Background(), sb, in)
	}, "content")

	// At the cap, each goes through.
	sb, dir := doorSandbox(t, files, nil, int64(len(big)))
	if _, err := runTool(sb, "patch", map[string]any{"patch": big}); err != nil {
		t.Fatalf("a patch of exactly max_write_bytes: %v", err)
	}
	if got := readTree(t, dir)["a.txt"]; got != "ONE\ntwo\n" {
		t.Errorf("patched a.txt: %q", got)
	}
}

// Fails on 6a21fbf: explain patch PATH said "patch takes no path", and
// nothing about the commands a patch's actions need.
func TestExplainPatchActions(t *testing.T) {
	sb, _ := doorSandbox(t, map[string]string{"a.txt": "one\n"}, []string{"mv", "rm"}, 0)
	d, err := Explain(context.Background(), sb, "patch", "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
		Actions []struct {
			Action  string   `json:"action"`
			Needs   []string `json:"needs"`
			Off     []string `json:"off"`
			Allowed bool     `json:"allowed"`
		} `json:"actions"`
	}
	b, _ := json.Marshal(d)
	must(t, json.Unmarshal(b, &got))
	want := map[string]struct {
		needs, off string
		allowed    bool
	}{
		"update":          {"edit", "", true},
		"add":             {"write", "", true},
		"delete":          {"rm", "rm", false},
		"move":            {"mv", "mv", false},
		"move_and_update": {"mv edit", "mv", false},
	}
	if !got.Allowed || len(got.Actions) != len(want) {
		t.Fatalf("explain patch a.txt: %s", b)
	}
	for _, a := range got.Actions {
		w, ok := want[a.Action]
		if !ok || strings.Join(a.Needs, " ") != w.needs || strings.Join(a.Off, " ") != w.off || a.Allowed != w.allowed {
			t.Errorf("action %+v, want %+v", a, w)
		}
	}
	for _, s := range []string{"delete (rm off)", "move (mv off)", "update (edit)"} {
		if !strings.Contains(got.Reason, s) {
			t.Errorf("reason %q does not say %q", got.Reason, s)
		}
	}
	// The path is checked as a patch would write it.
	d, err = Explain(context.Background(), sb, "patch", "../outside.txt")
	if err != nil || d.Allowed || d.Rule != string(fserr.RuleRoot) {
		t.Errorf("explain patch ../outside.txt: %+v %v", d, err)
	}
}
