//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/testbin"
)

// install copies the built fsbox and fsbox-mcp (or names) from built
// into dir (made), mode 0755.
func install(t *testing.T, built, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		names = []string{"fsbox", "fsbox-mcp"}
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(built, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompanion installs the shared fsbox and fsbox-mcp (testbin) in
// and out of writable roots.
func TestCompanion(t *testing.T) {
	built := testbin.Dir(t)
	t.Run("InWorkdirRefused", func(t *testing.T) { testCompanionInWorkdirRefused(t, built) })
	t.Run("OwnFilesNotWritten", func(t *testing.T) { testOwnFilesNotWritten(t, built) })
	t.Run("OutsideRuns", func(t *testing.T) { testCompanionOutsideRuns(t, built) })
	t.Run("NeedsPolicy", func(t *testing.T) { testCompanionNeedsPolicy(t, built) })
	t.Run("NarrowedKeepsWriteRoots", func(t *testing.T) { testCompanionNarrowedKeepsWriteRoots(t, built) })
}

// companionEnv is a temporary tree (canonical path) with a home of its own,
// so no host policy applies: the built-in default's workdir is the
// directory fsbox runs in.
type companionEnv struct {
	t   *testing.T
	dir string
}

func newCompanionEnv(t *testing.T) *companionEnv {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "home"), 0o755)
	return &companionEnv{t, dir}
}

func (e *companionEnv) path(p string) string { return filepath.Join(e.dir, p) }

// run runs bin (a path under the tree) in the directory cwd with args and
// an empty stdin.
func (e *companionEnv) run(bin, cwd string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	c := exec.Command(e.path(bin), args...)
	c.Dir = e.path(cwd)
	c.Env = []string{"HOME=" + e.path("home"), "XDG_CONFIG_HOME=" + e.path("xdg"), "XDG_STATE_HOME=" + e.path("state"), "PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}
	c.Stdin = strings.NewReader("")
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// refused checks that a call was refused for running a companion that lies
// in a writable root: denied, exit 3, with the hint, nothing on stdout.
func (e *companionEnv) refused(what string, out, errOut string, code int) {
	e.t.Helper()
	if code != 3 || out != "" || !strings.Contains(errOut, `"code":"denied"`) || !strings.Contains(errOut, "install fsbox outside every writable root") {
		e.t.Errorf("%s: exit %d, stdout %q, stderr %q; want denied (exit 3) saying to install fsbox outside every writable root", what, code, out, errOut)
	}
}

// planted is a companion an attacker would write: it leaves a mark.
func (e *companionEnv) planted() string {
	return "#!/bin/sh\ntouch " + e.path("pwned") + "\n"
}

func (e *companionEnv) notPwned(what string) {
	e.t.Helper()
	if _, err := os.Lstat(e.path("pwned")); err == nil {
		e.t.Errorf("%s: a planted companion ran", what)
	}
}

// fsbox and fsbox-mcp built into a directory inside the workdir (a
// checkout that builds into its own bin/; make install PREFIX=~/.local
// with workdir $HOME): fsbox never runs the companion from there for
// mcp, whatever lies at its name. --jq, in fsbox itself, runs no
// companion and works from there.
//
// Fails on 6a21fbf: --jq and mcp exec'd bin/fsbox-full from the workdir
// (exit 0, and a planted one left its mark).
func testCompanionInWorkdirRefused(t *testing.T, built string) {
	e := newCompanionEnv(t)
	install(t, built, e.path("work/bin"))
	out, errOut, code := e.run("work/bin/fsbox", "work", "mcp", e.path("work"))
	e.refused("mcp WORKDIR", out, errOut, code)
	// A planted companion (written here by hand, as a call fsbox had let
	// through would): still never run.
	if err := os.WriteFile(e.path("work/bin/fsbox-mcp"), []byte(e.planted()), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = e.run("work/bin/fsbox", "work", "mcp", e.path("work"))
	e.refused("mcp with a planted fsbox-mcp", out, errOut, code)
	out, errOut, code = e.run("work/bin/fsbox", "work", "--jq", ".workdir", "roots")
	if code != 0 || out != e.path("work")+"\n" {
		t.Errorf("--jq from a binary in the workdir, a planted fsbox-mcp beside it: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	e.notPwned("planted in the workdir")
	// The other commands still work from there.
	if out, errOut, code := e.run("work/bin/fsbox", "work", "--fields", "workdir", "roots"); code != 0 || !strings.Contains(out, e.path("work")) {
		t.Errorf("roots from a binary in the workdir: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// fsbox's own files inside the workdir: its executables and the
// companion's lookup name (fsbox-mcp, even where it does not exist) are
// never written, renamed or removed through fsbox, nor is a directory
// holding them; so nothing can be planted there.
//
// Fails on 6a21fbf: `fsbox write bin/fsbox-full --content '#!/bin/sh …'`
// succeeded, kept the 0755 mode, and the next --jq ran it; fsbox also
// overwrote its own binary. Needs the sandbox to enforce Protect (the
// door work): until that lands, the write checks here fail.
func testOwnFilesNotWritten(t *testing.T, built string) {
	e := newCompanionEnv(t)
	// Each attempt starts from the same tree, so that one let through
	// does not decide the next: both binaries installed, or (lean) fsbox
	// alone, its companion's name free.
	fresh := func(lean bool) {
		for _, p := range []string{"work/bin", "work/bin2", "work/moved"} {
			os.RemoveAll(e.path(p))
		}
		if lean {
			install(t, built, e.path("work/bin"), "fsbox")
		} else {
			install(t, built, e.path("work/bin"))
		}
		os.WriteFile(e.path("work/a.txt"), []byte("a\n"), 0o644)
	}
	for _, c := range []struct {
		lean bool
		args []string
	}{
		{false, []string{"write", "bin/fsbox-mcp", "--content", e.planted()}},
		{false, []string{"write", "bin/fsbox", "--content", e.planted()}},
		{false, []string{"write", "bin/fsbox-mcp", "--append", "--content", "x"}},
		{false, []string{"cp", "--force", "a.txt", "bin/fsbox-mcp"}},
		{false, []string{"mv", "bin/fsbox-mcp", "moved"}},
		{false, []string{"rm", "bin/fsbox-mcp"}},
		{false, []string{"mv", "bin", "bin2"}}, // an ancestor
		{true, []string{"write", "bin/fsbox-mcp", "--content", e.planted()}},
		{true, []string{"cp", "a.txt", "bin/fsbox-mcp"}},
		{true, []string{"mv", "a.txt", "bin/fsbox-mcp"}},
	} {
		fresh(c.lean)
		out, errOut, code := e.run("work/bin/fsbox", "work", c.args...)
		if code != 3 || !strings.Contains(errOut, `"code":"denied"`) {
			t.Errorf("%q (lean %v): exit %d, stdout %q, stderr %q; want denied (exit 3)", c.args, c.lean, code, out, errOut)
		}
		names := []string{"fsbox", "fsbox-mcp"}
		if c.lean {
			names = names[:1]
			if _, err := os.Lstat(e.path("work/bin/fsbox-mcp")); err == nil {
				t.Errorf("%q: bin/fsbox-mcp was planted", c.args)
			}
		}
		for _, n := range names {
			want, _ := os.ReadFile(filepath.Join(built, n))
			if now, err := os.ReadFile(e.path("work/bin/" + n)); err != nil || !bytes.Equal(now, want) {
				t.Errorf("%q: bin/%s changed (%v)", c.args, n, err)
			}
		}
	}
	fresh(false)
	out, errOut, code := e.run("work/bin/fsbox", "work", "mcp", e.path("work"))
	e.refused("mcp after the attempts", out, errOut, code)
	e.notPwned("own files")
	// Other files in the same directory stay writable.
	if out, errOut, code := e.run("work/bin/fsbox", "work", "write", "bin/notes.txt", "--content", "x"); code != 0 {
		t.Errorf("write bin/notes.txt: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A companion outside every writable root still runs, for mcp.
//
// Fails on 6a21fbf: no (this is what must keep working; it passes there).
// The other cases here fail on 6a21fbf: a companion whose canonical path
// lies in the workdir through a symlink beside fsbox, and one in a
// write_roots directory, ran (exit 0).
func testCompanionOutsideRuns(t *testing.T, built string) {
	e := newCompanionEnv(t)
	install(t, built, e.path("inst/bin"))
	os.MkdirAll(e.path("work"), 0o755)
	os.WriteFile(e.path("work/a.txt"), []byte("hello\n"), 0o644)
	if out, errOut, code := e.run("inst/bin/fsbox", "work", "stat", "a.txt", "--jq", ".size"); code != 0 || out != "6\n" {
		t.Errorf("--jq: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := e.run("inst/bin/fsbox", "work", "mcp", e.path("work")); code != 0 || strings.Contains(errOut, `"code"`) {
		t.Errorf("mcp with fsbox-mcp outside the workdir, empty input: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Writing in the workdir is unaffected by the own files elsewhere.
	if out, errOut, code := e.run("inst/bin/fsbox", "work", "write", "b.txt", "--content", "x"); code != 0 {
		t.Errorf("write b.txt: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// fsbox outside, but its fsbox-mcp a symlink to a file in the
	// workdir: the canonical path decides.
	install(t, built, e.path("inst2/bin"), "fsbox")
	install(t, built, e.path("work/planted"), "fsbox-mcp")
	if err := os.Symlink(e.path("work/planted/fsbox-mcp"), e.path("inst2/bin/fsbox-mcp")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := e.run("inst2/bin/fsbox", "work", "mcp", e.path("work"))
	e.refused("mcp, fsbox-mcp a symlink into the workdir", out, errOut, code)

	// A write_roots directory is writable as the workdir is.
	policy := e.path("policy/p.toml")
	os.MkdirAll(filepath.Dir(policy), 0o755)
	os.WriteFile(policy, []byte("workdir = \""+e.path("work")+"\"\nwrite_roots = [\""+e.path("inst")+"\"]\n"), 0o644)
	out, errOut, code = e.run("inst/bin/fsbox", "work", "--config", policy, "mcp")
	e.refused("mcp, fsbox-mcp in a write root", out, errOut, code)
}

// A policy that does not load: mcp reports its error and runs nothing.
//
// Fails on 6a21fbf: fsbox exec'd fsbox-full for --jq before loading the
// policy (here a script that leaves a mark).
func testCompanionNeedsPolicy(t *testing.T, built string) {
	e := newCompanionEnv(t)
	install(t, built, e.path("inst/bin"), "fsbox")
	os.WriteFile(e.path("inst/bin/fsbox-mcp"), []byte(e.planted()), 0o755)
	os.MkdirAll(e.path("work"), 0o755)
	for _, args := range [][]string{{"mcp"}, {"mcp", e.path("work")}} {
		out, errOut, code := e.run("inst/bin/fsbox", "work", append([]string{"--config", e.path("missing.toml")}, args...)...)
		if code != 8 || out != "" || !strings.Contains(errOut, `"code":"config"`) || !strings.Contains(errOut, "missing.toml") || strings.Contains(errOut, "fsbox-mcp") {
			t.Errorf("%q with a policy that does not load: exit %d, stdout %q, stderr %q; want the policy's config error", args, code, out, errOut)
		}
	}
	// Nor does --jq, in fsbox itself, run anything.
	out, errOut, code := e.run("inst/bin/fsbox", "work", "--config", e.path("missing.toml"), "--jq", ".", "roots")
	if code != 8 || out != "" || !strings.Contains(errOut, "missing.toml") {
		t.Errorf("--jq with a policy that does not load: exit %d, stdout %q, stderr %q; want the policy's config error", code, out, errOut)
	}
	e.notPwned("a policy that does not load")
}

// fsbox mcp DIR... narrows the policy, never which roots a sandboxed call
// could have written: the companion check goes by every writable root of
// the policy in force before the narrowing, by canonical path and by
// identity. Here fsbox is installed in W2/bin, W2 a write root, and a
// fsbox-mcp is planted beside it.
//
// Fails on c24bc27: plain `fsbox mcp` refused the planted W2/bin/fsbox-mcp,
// but `fsbox mcp WORK` ran it (the check used the narrowed policy's
// writable roots, which no longer held W2); through a bind mount of W2 the
// companion ran too, and a policy file in W2 named through the mount was
// accepted (paths compared, never identities).
func testCompanionNarrowedKeepsWriteRoots(t *testing.T, built string) {
	e := newCompanionEnv(t)
	install(t, built, e.path("w2/bin"), "fsbox")
	os.WriteFile(e.path("w2/bin/fsbox-mcp"), []byte(e.planted()), 0o755)
	os.MkdirAll(e.path("work/sub"), 0o755)
	policy := e.path("policy/p.toml")
	os.MkdirAll(filepath.Dir(policy), 0o755)
	os.WriteFile(policy, []byte("workdir = \""+e.path("work")+"\"\nwrite_roots = [\""+e.path("w2")+"\"]\n"), 0o644)
	for _, args := range [][]string{
		{"mcp"},
		{"mcp", e.path("work")},
		{"mcp", e.path("work/sub")},
		{"mcp", "--profile", "reference", e.path("work")},
	} {
		out, errOut, code := e.run("w2/bin/fsbox", "work", append([]string{"--config", policy}, args...)...)
		e.refused(strings.Join(args, " "), out, errOut, code)
	}
	e.notPwned("fsbox in a write root the directories leave out")

	// The same write root bind-mounted outside every root: the path
	// shows nothing, the identity does. Only where the test can make a
	// mount namespace.
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Log("no unshare: the bind-mount case is skipped")
		return
	}
	os.MkdirAll(e.path("inst"), 0o755)
	script := `mount --bind "$1" "$2" && exec "$2/bin/fsbox" --config "$3" mcp "$4"`
	c := exec.Command(unshare, "-rm", "sh", "-c", script, "sh", e.path("w2"), e.path("inst"), policy, e.path("work"))
	c.Dir = e.path("work")
	c.Env = []string{"HOME=" + e.path("home"), "XDG_CONFIG_HOME=" + e.path("xdg"), "XDG_STATE_HOME=" + e.path("state"), "PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}
	c.Stdin = strings.NewReader("")
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if strings.Contains(errb.String(), "mount") || strings.Contains(errb.String(), "unshare") {
		t.Logf("no mount namespace here (%s): the bind-mount case is skipped", strings.TrimSpace(errb.String()))
		return
	}
	e.refused("mcp WORK, fsbox in a bind mount of the write root", out.String(), errb.String(), code)
	if !strings.Contains(errb.String(), "lies in the writable root "+e.path("w2")) {
		t.Errorf("bind mount: stderr %q; want it to name the write root %s", errb.String(), e.path("w2"))
	}
	e.notPwned("fsbox in a bind mount of a write root")

	// A policy file in the write root, named through the bind mount: its
	// own write root by identity, whatever directories are served.
	install(t, built, e.path("ok/bin"))
	os.WriteFile(e.path("w2/p2.toml"), []byte("workdir = \""+e.path("work")+"\"\nwrite_roots = [\""+e.path("w2")+"\"]\n"), 0o644)
	for _, args := range [][]string{{"roots"}, {"mcp", e.path("work")}} {
		script := `mount --bind "$1" "$2" && shift 2 && exec "$@"`
		c := exec.Command(unshare, append([]string{"-rm", "sh", "-c", script, "sh", e.path("w2"), e.path("inst"), e.path("ok/bin/fsbox"), "--config", e.path("inst/p2.toml")}, args...)...)
		c.Dir = e.path("work")
		c.Env = []string{"HOME=" + e.path("home"), "XDG_CONFIG_HOME=" + e.path("xdg"), "XDG_STATE_HOME=" + e.path("state"), "PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}
		c.Stdin = strings.NewReader("")
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 8 || out.String() != "" || !strings.Contains(errb.String(), "lies inside its own write root "+e.path("w2")) {
			t.Errorf("--config through a bind mount of the write root, %q: exit %d, stdout %q, stderr %q; want config (its own write root, by identity)", args, code, out.String(), errb.String())
		}
	}
}
