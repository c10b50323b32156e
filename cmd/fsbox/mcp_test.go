package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The fsbox binary links neither the MCP SDK nor gojq; a call that needs
// one replaces its process with fsbox-full from beside the binary, or,
// without it, says so and exits with config (8).
func TestLeanExecsFull(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	deps, err := exec.Command(gobin, "list", "-tags", "urfave_cli_no_docs", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, heavy := range []string{"github.com/itchyny/gojq", "github.com/modelcontextprotocol/go-sdk/mcp"} {
		if strings.Contains(string(deps), heavy+"\n") {
			t.Errorf("cmd/fsbox links %s: every call would pay its package init", heavy)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("hello\n"), 0o644)
	build := func(name string) {
		out, err := exec.Command(gobin, "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(bin, name), "../"+name).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	run := func(args ...string) (string, string, int) {
		c := exec.Command(filepath.Join(bin, "fsbox"), args...)
		c.Dir = work
		c.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"), "PATH=/usr/bin:/bin"}
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	build("fsbox")
	for _, args := range [][]string{{"stat", "a.txt", "--jq", ".size"}, {"mcp", work}} {
		out, errOut, code := run(args...)
		if code != 8 || out != "" || !strings.Contains(errOut, `"code":"config"`) || !strings.Contains(errOut, "fsbox-full") {
			t.Errorf("%q without fsbox-full: exit %d, stdout %q, stderr %q; want config naming fsbox-full", args, code, out, errOut)
		}
	}
	if out, _, code := run("stat", "a.txt", "--fields", "size"); code != 0 || out != "{\"size\":6}\n" {
		t.Errorf("a call without extras: exit %d, %q", code, out)
	}
	build("fsbox-full")
	if out, errOut, code := run("stat", "a.txt", "--jq", ".size"); code != 0 || out != "6\n" {
		t.Errorf("--jq through fsbox-full: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := run("stat", "a.txt", "--jq", ".[[["); code != 2 || !strings.Contains(errOut, "--jq") {
		t.Errorf("a bad jq program through fsbox-full: exit %d, stderr %q; want usage", code, errOut)
	}
}
