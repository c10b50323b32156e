package cli

import (
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var updateTour = flag.Bool("update-tour", false, "rewrite the outputs of README.md's tour")

// TestReadmeTour runs every command of README.md's tour, in order, in a
// copy of testdata/demo with the built-in policy and a built fsbox on the
// PATH, and compares what it prints with what the README shows.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fsbox")
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
	open := strings.Index(text[tour:], "```console\n")
	if tour < 0 || open < 0 {
		t.Fatal("README.md has no tour block")
	}
	start := tour + open + len("```console\n")
	end := start + strings.Index(text[start:], "```\n")

	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	// Both binaries, as make install puts them: the tour's --jq runs in
	// fsbox-full, which fsbox execs from beside itself.
	for _, name := range []string{"fsbox", FullBinary} {
		build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(bin, name), "../../cmd/"+name)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	demo := filepath.Join(base, "tour", "demo")
	copyTree(t, filepath.Join("..", "..", "testdata", "demo"), demo)
	os.WriteFile(filepath.Join(base, "tour", "secret.txt"), []byte("secret\n"), 0o644)
	home := filepath.Join(base, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C"}

	var got strings.Builder
	for _, entry := range strings.Split(strings.TrimSuffix(text[start:end], "\n"), "\n\n") {
		cmdLine, _, _ := strings.Cut(entry, "\n")
		cmdText, ok := strings.CutPrefix(cmdLine, "$ ")
		if !ok {
			t.Fatalf("a tour entry does not start with '$ ': %q", entry)
		}
		c := exec.Command(sh, "-c", cmdText)
		c.Dir, c.Env = demo, env
		out, _ := c.CombinedOutput() // the exit status is part of what the tour shows
		if got.Len() > 0 {
			got.WriteString("\n")
		}
		got.WriteString(cmdLine + "\n" + string(out))
	}
	if text[start:end] == got.String() {
		return
	}
	if *updateTour {
		if err := os.WriteFile(readme, []byte(text[:start]+got.String()+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's tour prints something else now (go test ./internal/cli -run TestReadmeTour -update-tour rewrites it):\n%s", got.String())
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
