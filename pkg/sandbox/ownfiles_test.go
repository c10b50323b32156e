//go:build unix

// fsbox's own files (SPEC §4, "fsbox's own files [door]"): the policy
// file, the executables, the journal and the audit log are never written,
// renamed or removed through fsbox, by canonical path both ways — the
// target is, holds or lies in one — so renaming or removing an ancestor
// directory is refused too, and so is reaching one through a symlink.
//
// A policy loaded from a file can place none of them in a writable root
// (config, see TestWriteRootsLoad and the goldens): the rule is reachable
// where the command layer protects its executables (Protect) and, here, by
// building the policy in Go so the audit log lies in the workdir.
//
// Fails on 6a21fbf: there is no Protect and no own_file rule (the file
// does not compile there); an audit log in the workdir was writable.
package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
)

func TestOwnFilesNeverChanged(t *testing.T) {
	files := map[string]string{
		"var/logs/audit.jsonl": "AUDIT\n",  // the audit log (the policy's)
		"var/logs/other.txt":   "other\n",  // beside it: writable
		"bin/fsbox":            "BINARY\n", // an executable (Protect)
		"jn/changes.jsonl":     "JOURNAL\n",
		"etc/policy.toml":      "POLICY\n", // protected as the policy file
		"free.txt":             "free\n",
		"free/x.txt":           "x\n",
	}
	fx := newFixture(t, files, func(p *policy.Policy) {
		p.Audit.Log = filepath.Join(p.Workdir, "var", "logs", "audit.jsonl")
		p.Journal.Enabled = false
	})
	if err := os.Symlink("var/logs", filepath.Join(fx.work, "lnk")); err != nil {
		t.Fatal(err)
	}
	fx.sb.Protect("fsbox's own executable", filepath.Join(fx.work, "bin", "fsbox"))
	fx.sb.Protect("fsbox's journal", filepath.Join(fx.work, "jn"))
	fx.sb.Protect("the active policy file", filepath.Join(fx.work, "etc", "policy.toml"))
	ctx := context.Background()
	write := func(p string) error {
		_, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: p, Content: strings.NewReader("PWNED\n")})
		return err
	}
	appendTo := func(p string) error {
		_, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: p, Append: true, Content: strings.NewReader("PWNED\n")})
		return err
	}
	edit := func(p, old string) error {
		_, err := ops.Edit(ctx, fx.sb, ops.EditOptions{Path: p, Edits: []ops.EditSpec{{Old: old, New: "PWNED"}}})
		return err
	}
	mv := func(src, dst string, force bool) error { _, err := ops.Move(ctx, fx.sb, src, dst, force); return err }
	cp := func(src, dst string) error { _, err := ops.Copy(ctx, fx.sb, src, dst, true); return err }
	rm := func(p string, r bool) error { _, err := ops.Remove(ctx, fx.sb, p, r); return err }
	mkdir := func(p string) error { _, err := ops.Mkdir(ctx, fx.sb, p); return err }
	patch := func(text string) error {
		// PatchOptions.Patch is []byte or string, as the patch work in
		// progress leaves it: set it either way.
		var o ops.PatchOptions
		f := reflect.ValueOf(&o).Elem().FieldByName("Patch")
		f.Set(reflect.ValueOf(text).Convert(f.Type()))
		_, err := ops.Patch(ctx, fx.sb, o)
		return err
	}

	own, cfg := fserr.RuleOwnFile, fserr.RuleConfigFile
	cases := []struct {
		name string
		rule fserr.Rule
		do   func() error
	}{
		// The audit log itself, under every spelling and every command.
		{"write the audit log", own, func() error { return write("var/logs/audit.jsonl") }},
		{"append to the audit log", own, func() error { return appendTo("var/logs/audit.jsonl") }},
		{"write it by its absolute path", own, func() error { return write(filepath.Join(fx.work, "var/logs/audit.jsonl")) }},
		{"write it through a symlinked directory", own, func() error { return write("lnk/audit.jsonl") }},
		{"write it through dotdot", own, func() error { return write("var/logs/../logs/audit.jsonl") }},
		{"edit the audit log", own, func() error { return edit("var/logs/audit.jsonl", "AUDIT") }},
		{"cp onto the audit log", own, func() error { return cp("free.txt", "var/logs/audit.jsonl") }},
		{"mv onto the audit log", own, func() error { return mv("free.txt", "var/logs/audit.jsonl", true) }},
		{"mv the audit log away", own, func() error { return mv("var/logs/audit.jsonl", "stolen.jsonl", false) }},
		{"rm the audit log", own, func() error { return rm("var/logs/audit.jsonl", false) }},
		{"patch the audit log", own, func() error {
			return patch("*** Begin Patch\n*** Update File: var/logs/audit.jsonl\n@@\n-AUDIT\n+PWNED\n*** End Patch\n")
		}},
		{"patch deletes the audit log", own, func() error {
			return patch("*** Begin Patch\n*** Delete File: var/logs/audit.jsonl\n*** End Patch\n")
		}},
		// Its ancestors: renaming or removing one moves it.
		{"mv its directory", own, func() error { return mv("var/logs", "logs2", false) }},
		{"mv its grandparent", own, func() error { return mv("var", "var2", false) }},
		{"mv its grandparent by an absolute path", own, func() error { return mv(filepath.Join(fx.work, "var"), "var2", false) }},
		{"rm -r its grandparent", own, func() error { return rm("var", true) }},
		{"rm -r its directory", own, func() error { return rm("var/logs", true) }},
		{"mv a directory over its directory", own, func() error { return mv("free", "var/logs", true) }},
		// An executable (Protect), and its directory.
		{"write the executable", own, func() error { return write("bin/fsbox") }},
		{"append to the executable", own, func() error { return appendTo("bin/fsbox") }},
		{"cp onto the executable", own, func() error { return cp("free.txt", "bin/fsbox") }},
		{"mv the executable's directory", own, func() error { return mv("bin", "bin2", false) }},
		{"rm -r the executable's directory", own, func() error { return rm("bin", true) }},
		// A protected directory (the journal): what lies in it too.
		{"write into the journal", own, func() error { return write("jn/plan.json") }},
		{"replace a journal file", own, func() error { return write("jn/changes.jsonl") }},
		{"mkdir in the journal", own, func() error { return mkdir("jn/pending/x") }},
		{"mv a file into the journal", own, func() error { return mv("free.txt", "jn/free.txt", false) }},
		{"cp a file into the journal", own, func() error { return cp("free.txt", "jn/free.txt") }},
		{"mv the journal", own, func() error { return mv("jn", "jn2", false) }},
		{"rm -r the journal", own, func() error { return rm("jn", true) }},
		// The policy file keeps its own rule.
		{"write the policy file", cfg, func() error { return write("etc/policy.toml") }},
		{"mv the policy file's directory", cfg, func() error { return mv("etc", "etc2", false) }},
		{"rm the policy file", cfg, func() error { return rm("etc/policy.toml", false) }},
	}
	for _, c := range cases {
		wantDenied(t, c.name, c.do(), c.rule)
	}
	for rel, content := range files {
		fx.mustHave(rel, content)
	}
	for _, rel := range []string{"stolen.jsonl", "logs2", "var2", "bin2", "jn2", "etc2", "jn/plan.json", "jn/pending", "jn/free.txt"} {
		fx.mustNotExist(rel)
	}

	// Nothing else is over-protected: a sibling, a name sharing a prefix,
	// a file moved next to the log.
	must(t, write("var/logs/other.txt"))
	must(t, write("var/logs.bak"))
	must(t, write("bin-old"))
	must(t, write("jn2/x"))
	must(t, mv("free.txt", "var/logs/free.txt", false))
	must(t, rm("var/logs/free.txt", false))
	fx.mustHave("var/logs/audit.jsonl", "AUDIT\n")
}

// TestOwnFilesInWriteRoot: an own file in a write root (an executable the
// command layer protects) is covered as one in the workdir: the file, its
// directory and a move of either between the roots are refused.
func TestOwnFilesInWriteRoot(t *testing.T) {
	var wr string
	fx := newFixture(t, map[string]string{"free.txt": "free\n"}, func(p *policy.Policy) {
		wr = filepath.Join(filepath.Dir(p.Workdir), "wr")
		for rel, content := range map[string]string{"tools/bin/fsbox-mcp": "MCP\n", "tools/other": "other\n"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(wr, rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(wr, rel), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p.WriteRoots = []string{wr}
		p.Journal.Enabled = false
	})
	exe := filepath.Join(wr, "tools/bin/fsbox-mcp")
	fx.sb.Protect("the name fsbox runs its companion by", exe)
	ctx := context.Background()
	own := fserr.RuleOwnFile
	_, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: exe, Content: strings.NewReader("PWNED\n")})
	wantDenied(t, "write the companion", err, own)
	_, err = ops.Write(ctx, fx.sb, ops.WriteOptions{Path: exe, Append: true, Content: strings.NewReader("PWNED\n")})
	wantDenied(t, "append to the companion", err, own)
	_, err = ops.Copy(ctx, fx.sb, "free.txt", exe, true)
	wantDenied(t, "cp onto the companion", err, own)
	_, err = ops.Move(ctx, fx.sb, exe, "stolen", false)
	wantDenied(t, "mv the companion into the workdir", err, own)
	_, err = ops.Move(ctx, fx.sb, filepath.Join(wr, "tools"), "tools", false)
	wantDenied(t, "mv its grandparent into the workdir", err, own)
	_, err = ops.Move(ctx, fx.sb, filepath.Join(wr, "tools/bin"), filepath.Join(wr, "bin2"), false)
	wantDenied(t, "mv its directory inside the write root", err, own)
	_, err = ops.Remove(ctx, fx.sb, filepath.Join(wr, "tools"), true)
	wantDenied(t, "rm -r its grandparent", err, own)
	_, err = ops.Move(ctx, fx.sb, "free.txt", exe, true)
	wantDenied(t, "mv a file from the workdir over it", err, own)
	if b, err := os.ReadFile(exe); err != nil || string(b) != "MCP\n" {
		t.Errorf("the companion holds %q (%v), want it unchanged", b, err)
	}
	fx.mustHave("free.txt", "free\n")
	fx.mustNotExist("stolen")
	fx.mustNotExist("tools")
	// Its sibling is an ordinary file of the write root.
	if _, err := ops.Move(ctx, fx.sb, filepath.Join(wr, "tools/other"), "other", false); err != nil {
		t.Errorf("mv a sibling of the companion: %v", err)
	}
}
