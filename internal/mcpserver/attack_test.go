//go:build unix

package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// attackPolicy is the attack catalogue's policy: denied secrets, .git
// never written, hard links refused.
const attackPolicy = `workdir = "$WORK"
deny_hardlinks = true
[paths]
deny = ["**/.env", "secrets/**", "**/*.pem"]
write_deny = ["**/.git/**"]
`

// TestAttacks replays the catalogue of testdata/script/attack_*.txtar
// through the MCP server: each call is refused with the right code (and
// rule), no reply ever holds secretMarker (the harness checks every
// reply), and nothing outside the workdir, nor any protected file,
// changes.
func TestAttacks(t *testing.T) {
	h := newHarness(t, setup{toml: attackPolicy, files: map[string]string{
		"a.txt":           "hello\n",
		".env":            secretMarker + "\n",
		"secrets/key":     secretMarker + "\n",
		"app/cert.PEM":    secretMarker + "\n",
		"app/.env":        secretMarker + "\n",
		"app/ok.txt":      "fine\n",
		"pub/p.txt":       "public\n",
		"repo/.git/HEAD":  "ref: refs/heads/main\n",
		"repo/.git/x/y":   "obj\n",
		"sub/keep.txt":    "keep\n",
		"sub/deeper/k.md": "k\n",
	}})
	base, work, outside := h.base, h.work, h.outside
	secret := filepath.Join(outside, "secret.txt")
	// Siblings whose names start like the workdir's.
	for _, sib := range []string{"work2", "work ", "work.bak", "wor"} {
		writeFile(t, filepath.Join(base, sib, "secret.txt"), secretMarker+"\n")
	}
	link := func(target, name string) { must(t, os.Symlink(target, filepath.Join(work, name))) }
	link("../outside/secret.txt", "out")
	link("out", "chain")
	link("chain", "chain2")
	link("../outside", "outdir")
	link(secret, "abs")
	link(filepath.Join(work, "a.txt"), "absin")
	link("../../outside", "sub/upout")
	link(".env", "notes")
	link("../secrets", "app/sec")
	link("pipe", "pipelink")
	link("/dev/zero", "zero")
	link("/proc/self/environ", "environ")
	must(t, syscall.Mkfifo(filepath.Join(work, "pipe"), 0o644))
	must(t, os.Link(secret, filepath.Join(work, "hl.txt")))

	type attack struct {
		tool       string
		args       map[string]any
		code, rule string
	}
	r := func(tool string, args map[string]any, code, rule string) attack {
		return attack{tool, args, code, rule}
	}
	p := func(path string) map[string]any { return map[string]any{"path": path} }
	ps := func(paths ...string) map[string]any {
		l := []any{}
		for _, x := range paths {
			l = append(l, x)
		}
		return map[string]any{"paths": l}
	}
	grepIn := func(paths ...string) map[string]any {
		m := ps(paths...)
		m["pattern"] = "c0ffee4[2]"
		return m
	}
	wr := func(path string) map[string]any { return map[string]any{"path": path, "content": "PWNED"} }
	mv := func(src, dst string) map[string]any { return map[string]any{"src": src, "dst": dst} }

	attacks := []attack{
		// '..' climbing, every spelling.
		r("fsbox_read", p("../outside/secret.txt"), "denied", "root"),
		r("fsbox_read", p("sub/../../outside/secret.txt"), "denied", "root"),
		r("fsbox_read", p("./../outside/secret.txt"), "denied", "root"),
		r("fsbox_read", p(".//..//outside//secret.txt"), "denied", "root"),
		r("fsbox_read", p(".."), "denied", "root"),
		r("fsbox_stat", p("../outside/secret.txt"), "denied", "root"),
		r("fsbox_ls", p(".."), "denied", "root"),
		r("fsbox_ls", p("../outside"), "denied", "root"),
		r("fsbox_wc", ps("../outside/secret.txt"), "denied", "root"),
		r("fsbox_slice", p("../outside/secret.txt"), "denied", "root"),
		r("fsbox_sort", p("../outside/secret.txt"), "denied", "root"),
		r("fsbox_cut", map[string]any{"path": "../outside/secret.txt", "fields": "1"}, "denied", "root"),
		r("fsbox_grep", grepIn("../outside"), "denied", "root"),
		r("fsbox_find", map[string]any{"dir": "../outside"}, "denied", "root"),
		// Absolute paths outside, and back out of the workdir.
		r("fsbox_read", p(secret), "denied", "root"),
		r("fsbox_read", p(filepath.Join(work, "..", "outside", "secret.txt")), "denied", "root"),
		r("fsbox_read", p(work+"/../outside/secret.txt"), "denied", "root"),
		r("fsbox_read", p("/etc/passwd"), "denied", "root"),
		r("fsbox_read", p("/dev/zero"), "denied", "root"),
		r("fsbox_read", p("/proc/self/environ"), "denied", "root"),
		r("fsbox_read", p("~/x"), "denied", "root"),
		// Sibling directories whose names extend the workdir's.
		r("fsbox_read", p(base+"/work2/secret.txt"), "denied", "root"),
		r("fsbox_read", p(base+"/work /secret.txt"), "denied", "root"),
		r("fsbox_read", p(base+"/work.bak/secret.txt"), "denied", "root"),
		r("fsbox_read", p(base+"/wor/secret.txt"), "denied", "root"),
		r("fsbox_read", p("../work2/secret.txt"), "denied", "root"),
		r("fsbox_read", p("../work /secret.txt"), "denied", "root"),
		r("fsbox_ls", p(base+"/work2"), "denied", "root"),
		r("fsbox_grep", grepIn(base+"/work2"), "denied", "root"),
		// Symlinks out of the workdir: a file, a chain, a directory, an
		// absolute link (even to inside).
		r("fsbox_read", p("out"), "denied", "symlink"),
		r("fsbox_read", p("chain2"), "denied", "symlink"),
		r("fsbox_read", p("outdir/secret.txt"), "denied", "symlink"),
		r("fsbox_read", p("sub/upout/secret.txt"), "denied", "symlink"),
		r("fsbox_read", p("abs"), "denied", "symlink"),
		r("fsbox_read", p("absin"), "denied", "symlink"),
		r("fsbox_read", p("zero"), "denied", "symlink"),
		r("fsbox_read", p("environ"), "denied", "symlink"),
		r("fsbox_wc", ps("outdir/secret.txt"), "denied", "symlink"),
		r("fsbox_slice", p("chain"), "denied", "symlink"),
		r("fsbox_sort", p("out"), "denied", "symlink"),
		r("fsbox_cut", map[string]any{"path": "out", "fields": "1"}, "denied", "symlink"),
		r("fsbox_ls", p("outdir"), "denied", "symlink"),
		r("fsbox_grep", grepIn("out"), "denied", "symlink"),
		r("fsbox_grep", grepIn("outdir"), "denied", "symlink"),
		r("fsbox_find", map[string]any{"dir": "outdir"}, "denied", "symlink"),
		r("fsbox_write", wr("out"), "denied", ""),
		r("fsbox_write", map[string]any{"path": "out", "content": "PWNED", "append": true}, "denied", ""),
		r("fsbox_write", wr("outdir/new.txt"), "denied", ""),
		r("fsbox_edit", map[string]any{"path": "out", "old": "OUTSIDE", "new": "PWNED"}, "denied", ""),
		r("fsbox_cp", mv("out", "copy.txt"), "denied", ""),
		r("fsbox_cp", mv("a.txt", "outdir/copy.txt"), "denied", ""),
		r("fsbox_mv", mv("a.txt", "outdir/moved.txt"), "denied", ""),
		r("fsbox_mkdir", p("outdir/newdir"), "denied", ""),
		// FIFOs: refused before any open (a read would hang).
		r("fsbox_read", p("pipe"), "denied", "special_file"),
		r("fsbox_read", p("pipelink"), "denied", "special_file"),
		r("fsbox_wc", ps("pipe"), "denied", "special_file"),
		r("fsbox_slice", p("pipe"), "denied", "special_file"),
		r("fsbox_sort", p("pipe"), "denied", "special_file"),
		r("fsbox_cut", map[string]any{"path": "pipe", "fields": "1"}, "denied", "special_file"),
		r("fsbox_grep", grepIn("pipe"), "denied", "special_file"),
		r("fsbox_write", wr("pipe"), "denied", "special_file"),
		r("fsbox_edit", map[string]any{"path": "pipe", "old": "a", "new": "b"}, "denied", "special_file"),
		r("fsbox_cp", mv("pipe", "copy.txt"), "denied", "special_file"),
		// A hard link to a file outside, with deny_hardlinks.
		r("fsbox_read", p("hl.txt"), "denied", "hardlink"),
		r("fsbox_wc", ps("hl.txt"), "denied", "hardlink"),
		r("fsbox_grep", grepIn("hl.txt"), "denied", "hardlink"),
		r("fsbox_write", wr("hl.txt"), "denied", "hardlink"),
		r("fsbox_write", map[string]any{"path": "hl.txt", "content": "PWNED", "append": true}, "denied", "hardlink"),
		r("fsbox_edit", map[string]any{"path": "hl.txt", "old": "OUTSIDE", "new": "PWNED"}, "denied", "hardlink"),
		r("fsbox_edit", map[string]any{"path": "hl.txt", "old": "OUTSIDE", "new": "PWNED", "dry_run": true}, "denied", "hardlink"),
		r("fsbox_cp", mv("hl.txt", "copy.txt"), "denied", "hardlink"),
		// Denied names: other case, a '..' detour, a link to them, a
		// linked directory, everything below a denied directory.
		r("fsbox_read", p(".env"), "denied", "deny"),
		r("fsbox_read", p(".ENV"), "denied", "deny"),
		r("fsbox_read", p("app/../.env"), "denied", "deny"),
		r("fsbox_read", p("app/.env"), "denied", "deny"),
		r("fsbox_read", p("notes"), "denied", "deny"),
		r("fsbox_read", p("secrets/key"), "denied", "deny"),
		r("fsbox_read", p("SECRETS/KEY"), "denied", "deny"),
		r("fsbox_read", p("app/sec/key"), "denied", "deny"),
		r("fsbox_read", p("app/cert.PEM"), "denied", "deny"),
		r("fsbox_ls", p("secrets"), "denied", "deny"),
		r("fsbox_ls", p("app/sec"), "denied", "deny"),
		r("fsbox_stat", p("secrets/key"), "denied", "deny"),
		r("fsbox_wc", ps("app/sec/key"), "denied", "deny"),
		r("fsbox_grep", grepIn("app/sec/key"), "denied", "deny"),
		r("fsbox_grep", grepIn("secrets"), "denied", "deny"),
		r("fsbox_find", map[string]any{"dir": "secrets"}, "denied", "deny"),
		r("fsbox_slice", p(".env"), "denied", "deny"),
		r("fsbox_cp", mv(".env", "leak.txt"), "denied", "deny"),
		r("fsbox_cp", mv("secrets", "leakdir"), "denied", "deny"),
		r("fsbox_mv", mv(".env", "leak.txt"), "denied", "deny"),
		r("fsbox_write", wr(".env"), "denied", "deny"),
		r("fsbox_write", wr("secrets/new"), "denied", "deny"),
		r("fsbox_edit", map[string]any{"path": ".env", "old": "OUTSIDE", "new": "x", "dry_run": true}, "denied", "deny"),
		// Renames: rules follow content, not names. A directory holding a
		// denied file moved elsewhere, a directory moved into a denied
		// name, a file renamed into a denied name.
		r("fsbox_mv", mv("app", "app2"), "denied", "deny"),
		r("fsbox_mv", mv("pub", "secrets/pub"), "denied", "deny"),
		r("fsbox_mv", mv("pub", "pub.pem"), "denied", "deny"),
		r("fsbox_mv", mv("a.txt", ".env2/../.env"), "", ""),
		r("fsbox_cp", mv("a.txt", "sub/.env"), "denied", "deny"),
		// .git is never written, nor moved away or into.
		r("fsbox_write", wr("repo/.git/HEAD"), "denied", "write_deny"),
		r("fsbox_write", wr("repo/.git/hooks/pre-commit"), "denied", "write_deny"),
		r("fsbox_edit", map[string]any{"path": "repo/.git/HEAD", "old": "main", "new": "evil"}, "denied", "write_deny"),
		r("fsbox_mkdir", p("repo/.git/hooks"), "denied", "write_deny"),
		r("fsbox_mv", mv("repo/.git", "repo/git2"), "denied", "write_deny"),
		r("fsbox_mv", mv("repo", "repo2"), "denied", "write_deny"),
		r("fsbox_mv", mv("pub", "repo/.git/pub"), "denied", "write_deny"),
		r("fsbox_cp", mv("a.txt", "repo/.git/config"), "denied", "write_deny"),
		// Writing outside the workdir.
		r("fsbox_write", wr("../outside/new.txt"), "denied", ""),
		r("fsbox_write", wr(filepath.Join(outside, "new.txt")), "denied", ""),
		r("fsbox_write", wr(base+"/work2/new.txt"), "denied", ""),
		r("fsbox_write", wr(secret), "denied", ""),
		r("fsbox_mkdir", p("../outside/newdir"), "denied", ""),
		r("fsbox_cp", mv("a.txt", "../outside/copy.txt"), "denied", ""),
		r("fsbox_mv", mv("a.txt", "../outside/moved.txt"), "denied", ""),
		r("fsbox_mv", mv("../outside/secret.txt", "stolen.txt"), "denied", ""),
		r("fsbox_write", wr("."), "", ""),
		// explain tells, and shows nothing.
		r("fsbox_explain", map[string]any{"command": "read", "path": "../outside/secret.txt"}, "", ""),
		r("fsbox_explain", map[string]any{"command": "read", "path": "out"}, "", ""),
	}
	for _, a := range attacks {
		if a.code == "" {
			// Refused with whatever code fits, or (explain) answered: only
			// the leak and the changes below are checked.
			res, err := h.call(a.tool, a.args)
			if a.tool == "fsbox_explain" {
				if out := okResult(t, a.tool, a.args, res, err); out["allowed"] != false {
					t.Errorf("%s %v: allowed: %v", a.tool, a.args, out)
				}
			} else if err == nil && !res.IsError {
				t.Errorf("%s %v: succeeded: %s", a.tool, a.args, textOf(t, res))
			}
			continue
		}
		h.fail(a.tool, a.args, a.code, a.rule)
	}

	// A denied path among others is reported by the path as given, and
	// nothing of it is shown (SPEC §2: the rest are processed).
	if out := h.ok("fsbox_wc", ps("a.txt", "app/sec/key")); len(out["files"].([]any)) != 1 ||
		fmt.Sprint(out["errors"]) != "[map[code:denied message:app/sec/key is denied by the policy path:app/sec/key]]" {
		t.Errorf("wc a.txt app/sec/key: %v", out)
	}

	// Tree searches pass over what they may not open, and show none of it.
	for _, follow := range []bool{false, true} {
		out := h.ok("fsbox_grep", map[string]any{"pattern": "c0ffee4[2]", "hidden": true, "follow": follow})
		if out["count"] != float64(0) {
			t.Errorf("grep (follow %v) over the workdir found the secret: %v", follow, out)
		}
		h.ok("fsbox_find", map[string]any{"hidden": true, "follow": follow})
		h.ok("fsbox_ls", map[string]any{"all": true})
	}

	// Nothing outside changed, nothing new appeared, nothing protected moved.
	for _, f := range []string{secret, base + "/work2/secret.txt", base + "/work /secret.txt"} {
		if b, err := os.ReadFile(f); err != nil || string(b) != secretMarker+"\n" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	entries, err := os.ReadDir(outside)
	must(t, err)
	if len(entries) != 1 {
		t.Errorf("the outside directory holds %d entries, want only secret.txt", len(entries))
	}
	for _, gone := range []string{"copy.txt", "leak.txt", "leakdir", "app2", "repo2", "repo/git2", "sub/.env", "pub.pem", "stolen.txt", "secrets/pub", "repo/.git/pub", "repo/.git/config", "repo/.git/hooks"} {
		if _, err := os.Lstat(filepath.Join(work, gone)); !os.IsNotExist(err) {
			t.Errorf("%s exists after the attacks", gone)
		}
	}
	for name, want := range map[string]string{"a.txt": "hello\n", ".env": secretMarker + "\n", "repo/.git/HEAD": "ref: refs/heads/main\n",
		"app/.env": secretMarker + "\n", "pub/p.txt": "public\n", "secrets/key": secretMarker + "\n"} {
		if b, err := os.ReadFile(filepath.Join(work, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(work, "pipe")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO changed: %v %v", fi, err)
	}
	// Every refusal was audited as denied (and none leaked into the log).
	b, err := os.ReadFile(h.audit)
	must(t, err)
	if len(b) == 0 {
		t.Fatal("no audit records")
	}
	for _, rec := range h.auditRecords() {
		if rec.RequestID == nil {
			t.Errorf("audit record without request_id: %+v", rec)
		}
	}
	if strings.Contains(string(b), secretMarker) {
		t.Errorf("the audit log holds the secret")
	}
}
