package cli

import (
	"context"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

var updateTour = flag.Bool("update-tour", false, "rewrite the outputs of README.md's tour")

// TestReadmeTour installs fsbox as README.md's install paragraph says,
// `GOBIN=DIR go install ./cmd/...` from the repository's root, checks
// that this gives both binaries (fsbox and fsbox-mcp) and that fsbox mcp
// and fsbox-mcp serve from there, then runs every command of the tour,
// in order, in a copy of testdata/demo with the built-in policy and that
// DIR on the PATH, and compares what it prints with what the README shows;
// every other console block of the README (stat --check's example) runs
// the same way, each in a fresh copy.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fsbox and fsbox-mcp")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh: the tour is shell")
	}
	readme := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	tour := strings.Index(text, "## A tour")
	if tour < 0 || !strings.Contains(text[tour:], "```console\n") {
		t.Fatal("README.md has no tour block")
	}
	// Every console block of the README runs, the tour's and the
	// examples further down (stat --check's), each in a fresh copy.
	type block struct{ start, end int }
	var blocks []block
	for at := 0; ; {
		open := strings.Index(text[at:], "```console\n")
		if open < 0 {
			break
		}
		start := at + open + len("```console\n")
		end := start + strings.Index(text[start:], "```\n")
		if end < start {
			t.Fatal("a console block of README.md does not end")
		}
		blocks = append(blocks, block{start, end})
		at = end
	}

	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin")
	// What a user runs from a clone: every command under cmd/, into a
	// GOBIN of the test's own, with the user's build settings (no tags).
	// Bounded: a cold build cache takes well under a minute here.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "install", "./cmd/...")
	install.Dir = filepath.Join("..", "..")
	install.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("GOBIN=%s go install ./cmd/...: %v\n%s", bin, err, out)
	}
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	var installed []string
	for _, e := range entries {
		installed = append(installed, strings.TrimSuffix(e.Name(), ".exe"))
	}
	if want := []string{"fsbox", MCPBinary, S3Binary}; !slices.Equal(installed, want) {
		t.Fatalf("go install ./cmd/... gave %q, want %q", installed, want)
	}
	demo := filepath.Join(base, "tour", "demo")
	fresh := func() {
		os.RemoveAll(demo)
		copyTree(t, filepath.Join("..", "..", "testdata", "demo"), demo)
		// The demo is a git repository, as a project is (git cannot keep a
		// .git in the tree): its .gitignore applies only in one.
		if err := os.Mkdir(filepath.Join(demo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fresh()
	os.WriteFile(filepath.Join(base, "tour", "secret.txt"), []byte("secret\n"), 0o644)
	home := filepath.Join(base, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C"}

	// The server from that GOBIN, both ways: fsbox mcp execs the
	// fsbox-mcp beside it, and fsbox-mcp is the server by its own name.
	// An empty input ends the session at once: exit 0, nothing said.
	for _, argv := range [][]string{{"fsbox", "mcp", demo}, {MCPBinary, demo}, {MCPBinary, "--profile", "reference", demo, home}} {
		c := exec.CommandContext(ctx, filepath.Join(bin, argv[0]), argv[1:]...)
		c.Dir, c.Env, c.Stdin = demo, env, strings.NewReader("")
		if out, err := c.CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%q from GOBIN, empty input: %v, output %q", argv, err, out)
		}
	}

	// Each block's output as it runs now; the README rewritten from the
	// last block up, so the offsets before stay good.
	updated, same := text, true
	for i := len(blocks) - 1; i >= 0; i-- {
		bl := blocks[i]
		fresh()
		var got strings.Builder
		for _, entry := range strings.Split(strings.TrimSuffix(text[bl.start:bl.end], "\n"), "\n\n") {
			cmdLine, _, _ := strings.Cut(entry, "\n")
			cmdText, ok := strings.CutPrefix(cmdLine, "$ ")
			if !ok {
				t.Fatalf("a README console entry does not start with '$ ': %q", entry)
			}
			c := exec.Command(sh, "-c", cmdText)
			c.Dir, c.Env = demo, env
			out, _ := c.CombinedOutput() // the exit status is part of what the tour shows
			if got.Len() > 0 {
				got.WriteString("\n")
			}
			got.WriteString(cmdLine + "\n" + string(out))
		}
		if text[bl.start:bl.end] == got.String() {
			continue
		}
		same = false
		updated = updated[:bl.start] + got.String() + updated[bl.end:]
		if !*updateTour {
			t.Errorf("README.md's console block at byte %d prints something else now (go test ./internal/cli -run TestReadmeTour -update-tour rewrites it):\n%s", bl.start, got.String())
		}
	}
	if !same && *updateTour {
		if err := os.WriteFile(readme, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
