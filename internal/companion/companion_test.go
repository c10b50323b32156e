//go:build unix

package companion

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestSelf(t *testing.T) {
	s, err := Self()
	if err != nil {
		t.Skip(err)
	}
	if !filepath.IsAbs(s) {
		t.Errorf("Self = %q, not absolute", s)
	}
	if real, err := filepath.EvalSymlinks(s); err != nil || real != s {
		t.Errorf("Self = %q, canonical %q (%v)", s, real, err)
	}
}

func TestOwnPaths(t *testing.T) {
	if got, want := Lookups("/opt/bin/fsbox"), []string{"/opt/bin/fsbox-mcp", "/opt/bin/fsbox-s3"}; !slices.Equal(got, want) {
		t.Errorf("Lookups = %q, want %q", got, want)
	}
	if got, want := Executables("/opt/bin/fsbox-mcp"), []string{"/opt/bin/fsbox-mcp", "/opt/bin/fsbox"}; !slices.Equal(got, want) {
		t.Errorf("Executables of fsbox-mcp = %q, want %q", got, want)
	}
	if got, want := Executables("/opt/bin/fsbox"), []string{"/opt/bin/fsbox"}; !slices.Equal(got, want) {
		t.Errorf("Executables of fsbox = %q, want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/home/u/bin/fsbox-mcp", "/home/u", true},
		{"/home/u", "/home/u", true},
		{"/home/u/bin/fsbox-mcp", "/", true},
		{"/home/u/bin/fsbox-mcp", "/home/u/", true},
		{"/home/user/bin/fsbox-mcp", "/home/u", false},
		{"/home", "/home/u", false},
		{"/usr/local/bin/fsbox-mcp", "/home/u", false},
		{"/x", "", false},
	} {
		if got := within(c.p, c.dir); got != c.want {
			t.Errorf("within(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}

// canonTemp is a canonical temporary directory.
func canonTemp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Exec refuses, before opening anything, a companion whose lookup path or
// canonical path lies in a writable root, and says when there is none.
func TestExecRefuses(t *testing.T) {
	d := canonTemp(t)
	bin := filepath.Join(d, "inst", "bin")
	work := filepath.Join(d, "work")
	for _, p := range []string{bin, work} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(bin, "fsbox")
	exe := []byte("#!/bin/sh\nexit 0\n")
	os.WriteFile(filepath.Join(bin, MCP), exe, 0o755)
	os.WriteFile(filepath.Join(work, "planted"), exe, 0o755)
	os.Symlink(filepath.Join(work, "planted"), filepath.Join(bin, "linked"))
	os.WriteFile(filepath.Join(bin, "plain"), exe, 0o644)
	os.Mkdir(filepath.Join(bin, "dir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(bin, "fifo"), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{"fsbox", "roots"}
	inRoot := func(name string, writable []string, wantPath string) {
		t.Helper()
		err := execBeside(self, name, writable, argv, nil)
		var w *WritableError
		if !errors.As(err, &w) || w.Path != wantPath {
			t.Errorf("%s with writable %q: %v; want it refused as lying in a writable root (%s)", name, writable, err, wantPath)
		}
	}
	// The lookup path in a writable root (the directory, or an ancestor).
	inRoot(MCP, []string{work, bin}, filepath.Join(bin, MCP))
	inRoot(MCP, []string{filepath.Join(d, "inst")}, filepath.Join(bin, MCP))
	inRoot(MCP, []string{"/"}, filepath.Join(bin, MCP))
	// The canonical path in one, reached through a symlink from outside.
	inRoot("linked", []string{work}, filepath.Join(work, "planted"))
	// Even when the name holds nothing yet.
	inRoot("missing", []string{bin}, filepath.Join(bin, "missing"))
	for _, name := range []string{"missing", "plain", "dir", "fifo"} {
		err := execBeside(self, name, []string{work}, argv, nil)
		var m *MissingError
		if !errors.As(err, &m) || m.Path != filepath.Join(bin, name) {
			t.Errorf("%s: %v; want it missing", name, err)
		}
	}
}

// A companion outside every writable root runs, through the descriptor
// checked, with the arguments given (the helper process execs a copy of
// echo as its companion).
func TestExecRuns(t *testing.T) {
	if dir := os.Getenv("COMPANION_TEST_SELF_DIR"); dir != "" {
		err := execBeside(filepath.Join(dir, "fsbox"), MCP, strings.Split(os.Getenv("COMPANION_TEST_WRITABLE"), ":"), []string{"echo", "ran", "as", "companion"}, os.Environ())
		os.Stderr.WriteString("exec: " + err.Error() + "\n")
		os.Exit(3)
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(echo)
	if err != nil {
		t.Skip(err)
	}
	d := canonTemp(t)
	bin := filepath.Join(d, "bin")
	os.Mkdir(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, MCP), b, 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(d, "work")
	run := func(writable string) (string, error) {
		c := exec.Command(os.Args[0], "-test.run=^TestExecRuns$")
		c.Env = append(os.Environ(), "COMPANION_TEST_SELF_DIR="+bin, "COMPANION_TEST_WRITABLE="+writable)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := run(work); err != nil || out != "ran as companion\n" {
		t.Errorf("companion outside the writable roots: %v, output %q", err, out)
	}
	if out, err := run(work + ":" + d); err == nil || !strings.Contains(out, "lies in the writable root "+d) {
		t.Errorf("companion in a writable root: %v, output %q; want refused", err, out)
	}
}

// A companion that lies in a writable root by identity, not by path, is
// refused too: here the root is reached through a name that is not its
// path (a symlink stands for a bind mount, which shows one directory
// under two names; cmd/fsbox's TestCompanion mounts one where it can).
//
// Fails on c24bc27: outside compared canonical paths only, so the
// lookup path under the other name passed.
func TestOutsideByIdentity(t *testing.T) {
	d := canonTemp(t)
	w2 := filepath.Join(d, "w2")
	if err := os.MkdirAll(filepath.Join(w2, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(d, "mnt")
	if err := os.Symlink(w2, other); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(other, "bin", MCP)
	var w *WritableError
	if err := outside(p, []string{filepath.Join(d, "work"), w2}); !errors.As(err, &w) || w.Root != w2 || w.Path != p {
		t.Errorf("outside(%s, [work, %s]) = %v; want it in the writable root %s by identity", p, w2, err, w2)
	}
	// The root itself under the other name, and a root holding it.
	if err := outside(filepath.Join(other, MCP), []string{w2}); !errors.As(err, &w) {
		t.Errorf("a file directly in the root under another name: %v, want refused", err)
	}
	if err := outside(p, []string{d}); !errors.As(err, &w) || w.Root != d {
		t.Errorf("a root holding it: %v, want refused", err)
	}
	// Neither by path nor by identity: runs.
	if err := outside(filepath.Join(d, "elsewhere", MCP), []string{w2, filepath.Join(d, "missing")}); err != nil {
		t.Errorf("outside every root: %v", err)
	}
}
