package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/testbin"
)

// The fsbox binary links gojq (--jq runs in its own process) but not the
// MCP SDK: `fsbox mcp` replaces its process with fsbox-mcp from beside the
// binary, or, without it, says so and exits with config (8). fsbox-mcp is
// the server under its own name too: `fsbox-mcp ARGS` is `fsbox mcp ARGS`.
func TestLeanExecsMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fsbox and fsbox-mcp")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	deps := func(pkg string) string {
		out, err := exec.Command(gobin, "list", "-tags", "urfave_cli_no_docs", "-deps", pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	const sdk, gojq = "github.com/modelcontextprotocol/go-sdk/mcp\n", "github.com/fsbox/fsbox/internal/jq/gojq\n"
	if d := deps("."); strings.Contains(d, sdk) || !strings.Contains(d, gojq) {
		t.Errorf("cmd/fsbox: want gojq linked and the MCP SDK not (every call would pay its package init)")
	}
	// Nor the AWS SDK (internal/s3store): the binary that serves object
	// roots (fsbox-s3) registers it (sandbox.UseObjectStores).
	if d := deps("."); strings.Contains(d, "github.com/aws/") {
		t.Errorf("cmd/fsbox links the AWS SDK (every call would pay its package init)")
	}
	if d := deps("../fsbox-mcp"); !strings.Contains(d, sdk) {
		t.Errorf("cmd/fsbox-mcp does not link the MCP SDK")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	other := filepath.Join(dir, "other")
	os.MkdirAll(work, 0o755)
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(other, "b.txt"), []byte("other\n"), 0o644)
	env := []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "PATH=/usr/bin:/bin"}
	build := func(name string) { testbin.Install(t, bin, name) }
	command := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.Dir, c.Env = work, env
		return c
	}
	run := func(name string, args ...string) (string, string, int) {
		c := command(name, args...)
		c.Stdin = strings.NewReader("")
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
	if out, errOut, code := run("fsbox", "stat", "a.txt", "--jq", ".size"); code != 0 || out != "6\n" {
		t.Errorf("--jq in fsbox alone: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := run("fsbox", "stat", "a.txt", "--jq", ".[[["); code != 2 || !strings.Contains(errOut, "--jq") {
		t.Errorf("a bad jq program: exit %d, stderr %q; want usage", code, errOut)
	}
	if out, errOut, code := run("fsbox", "mcp", work); code != 8 || out != "" || !strings.Contains(errOut, `"code":"config"`) || !strings.Contains(errOut, "fsbox-mcp") {
		t.Errorf("mcp without fsbox-mcp: exit %d, stdout %q, stderr %q; want config naming fsbox-mcp", code, out, errOut)
	}

	build("fsbox-mcp")
	// tools lists the server's tools through an MCP client session on c.
	tools := func(t *testing.T, c *exec.Cmd) (names []string, cs *mcp.ClientSession) {
		t.Helper()
		var stderr strings.Builder
		c.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			t.Fatalf("connecting to %q: %v\nstderr: %s", c.Args, err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("tools/list from %q: %v", c.Args, err)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names, cs
	}
	read := func(t *testing.T, cs *mcp.ClientSession, tool, path string) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"path": path}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s %s: %v %+v", tool, path, err, res)
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		if text == nil {
			t.Fatalf("%s %s: %+v", tool, path, res.Content)
		}
		return text.Text
	}
	t.Run("fsbox mcp execs fsbox-mcp", func(t *testing.T) {
		names, cs := tools(t, command("fsbox", "mcp", work))
		if !slices.Contains(names, "fsbox_read") {
			t.Errorf("tools: %v", names)
		}
		if got := read(t, cs, "fsbox_read", "a.txt"); !strings.Contains(got, "hello") {
			t.Errorf("fsbox_read a.txt: %q", got)
		}
	})
	t.Run("fsbox-mcp named directly", func(t *testing.T) {
		names, cs := tools(t, command("fsbox-mcp", work))
		if !slices.Contains(names, "fsbox_read") {
			t.Errorf("tools: %v", names)
		}
		if got := read(t, cs, "fsbox_read", "a.txt"); !strings.Contains(got, "hello") {
			t.Errorf("fsbox_read a.txt: %q", got)
		}
	})
	// `fsbox-mcp --profile reference D1 D2` ≡ `fsbox mcp --profile reference D1 D2`.
	for _, argv := range [][]string{{"fsbox", "mcp", "--profile", "reference", work, other}, {"fsbox-mcp", "--profile", "reference", work, other}} {
		t.Run(argv[0]+" reference", func(t *testing.T) {
			names, cs := tools(t, command(argv[0], argv[1:]...))
			if !slices.Contains(names, "read_text_file") || slices.Contains(names, "fsbox_read") {
				t.Errorf("reference tools: %v", names)
			}
			if got := read(t, cs, "read_text_file", filepath.Join(other, "b.txt")); !strings.Contains(got, "other") {
				t.Errorf("read_text_file in the second directory: %q", got)
			}
		})
	}
	// Installed under another name (a versioned copy), it still serves.
	b, err := os.ReadFile(filepath.Join(bin, "fsbox-mcp"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "fsbox-mcp-1"), b, 0o755)
	t.Run("renamed", func(t *testing.T) {
		if names, _ := tools(t, command("fsbox-mcp-1", work)); !slices.Contains(names, "fsbox_read") {
			t.Errorf("tools: %v", names)
		}
	})
	if out, errOut, code := run("fsbox-mcp", "--version"); code != 0 || !strings.HasPrefix(out, "fsbox ") {
		t.Errorf("fsbox-mcp --version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Never on the built-in default: no policy and no directory is config.
	if out, errOut, code := run("fsbox-mcp"); code != 8 || out != "" || !strings.Contains(errOut, `"code":"config"`) {
		t.Errorf("fsbox-mcp with no directory and no policy: exit %d, stdout %q, stderr %q; want config", code, out, errOut)
	}
}
