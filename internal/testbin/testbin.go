// Package testbin gives tests that run fsbox as a separate process the
// fsbox and fsbox-mcp binaries, built once and shared.
//
// `make test` builds both once, before any package's tests start, into a
// directory it names in FSBOX_TEST_BIN; every test package that execs
// fsbox then uses that pair instead of linking its own (a link of both
// costs seconds of CPU, and six test sites used to pay it each). Outside
// make (a plain `go test ./...`), the first test in a process that asks
// builds the pair into a temporary directory, and the rest of that
// process reuses it.
//
// Only tests import this package. Its file access (the built binaries,
// the test's own directories) is the test harness's, outside every policy:
// it never runs inside fsbox, so it does not go through pkg/sandbox.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Env is the variable that names a directory holding prebuilt fsbox and
// fsbox-mcp (make test sets it).
const Env = "FSBOX_TEST_BIN"

// Names are the binaries a directory from Dir holds.
var Names = []string{"fsbox", "fsbox-mcp", "fsbox-s3"}

var (
	once     sync.Once
	built    string
	buildErr error
)

// Dir returns a directory holding every command of the module (fsbox
// and fsbox-mcp), built with the release build's tag (urfave_cli_no_docs)
// and otherwise go's defaults, so the build reuses the packages that go
// vet and the tests compiled (-trimpath or a CGO_ENABLED other than the
// default would compile the standard library again). Callers must not write into it: copy a binary
// out (Install) to place it somewhere of a test's own.
func Dir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(Env); dir != "" {
		for _, n := range Names {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil { // the harness's build (package comment)
				t.Fatalf("%s=%s: %v (make test builds it; unset %s to build here)", Env, dir, err, Env)
			}
		}
		return dir
	}
	once.Do(func() { built, buildErr = build() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// Path returns the path of the shared binary name ("fsbox" or "fsbox-mcp").
func Path(t testing.TB, name string) string {
	return filepath.Join(Dir(t), name)
}

// Install copies the shared binaries names (both when none is named) into
// dir, made if missing, mode 0755, and returns dir.
func Install(t testing.TB, dir string, names ...string) string {
	t.Helper()
	src := Dir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil { // a test's own directory (package comment)
		t.Fatal(err)
	}
	if len(names) == 0 {
		names = Names
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n)) // the harness's build (package comment)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o755); err != nil { // into the test's own directory
			t.Fatal(err)
		}
	}
	return dir
}

// Main runs a package's tests (m.Run) and then removes the pair Dir
// built for them, if it built one: a package whose tests use Dir calls
// it from its TestMain, `os.Exit(testbin.Main(m))`.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if built != "" {
		os.RemoveAll(built)
	}
	return code
}

// build links both binaries into a fresh temporary directory, which Main
// removes.
func build() (string, error) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("testbin: no go to build fsbox with: %v", err)
		}
	}
	out, err := exec.Command(gobin, "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("testbin: cannot find the module root (go env GOMOD: %q, %v)", mod, err)
	}
	dir, err := os.MkdirTemp("", "fsbox-testbin-")
	if err != nil {
		return "", err
	}
	// Every command under cmd/ in one go build, with make test's flags.
	cmd := exec.Command(gobin, "build", "-tags", "urfave_cli_no_docs", "-o", dir+string(filepath.Separator), "./cmd/...")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("testbin: go build ./cmd/...: %v\n%s", err, out)
	}
	return dir, nil
}

// RepoAbove reports whether a directory above dir (its parent, and so on
// up to /) holds .git: then every tree below dir is inside a git
// repository, as fsbox (and rg) see it, and a test that needs a tree
// outside every repository skips.
func RepoAbove(dir string) bool {
	for d := filepath.Clean(dir); d != filepath.Dir(d); {
		d = filepath.Dir(d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
	}
	return false
}
