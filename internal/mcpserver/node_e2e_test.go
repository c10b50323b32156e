package mcpserver

// The end-to-end test with the reference TypeScript SDK's client: the real
// fsbox and fsbox-mcp binaries, spawned by testdata/mcp-node/client.mjs
// over stdio (StdioClientTransport), once with the native tools and once
// with the reference profile. It skips when node or npm is missing, or
// when npm cannot install the SDK (offline, say), and says which; under
// CI=true it fails instead (.ci/run installs node and the packages).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/internal/testbin"
)

// nodeClientFiles are testdata/mcp-node's files that the client needs;
// node_modules is installed beside them in a cache directory.
var nodeClientFiles = []string{"package.json", "package-lock.json", ".npmrc", "client.mjs"}

// nodeClient returns node's path and client.mjs's, in a directory whose
// node_modules holds the SDK at the lock file's versions: a cache
// directory keyed by the files' hash, installed with `npm ci` the first
// time (a few seconds from npm's own cache) and reused after. The cache
// lies under $FSBOX_TEST_CACHE when set (make test sets it to
// ~/.cache/fsbox-test, outside the tree and the test's own home, so an
// install outlives the run), else under the user's cache directory.
func nodeClient(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed (%v): apt-get install nodejs npm", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipOrFail(t, "npm is not installed (%v): apt-get install npm", err)
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp-node"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	files := map[string][]byte{}
	for _, f := range nodeClientFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
		h.Write([]byte(f + "\x00"))
		h.Write(b)
	}
	base := os.Getenv("FSBOX_TEST_CACHE")
	if base == "" {
		if base, err = os.UserCacheDir(); err != nil {
			base = os.TempDir()
		}
		base = filepath.Join(base, "fsbox-test")
	}
	dir := filepath.Join(base, "mcp-node-"+hex.EncodeToString(h.Sum(nil))[:16])
	script = filepath.Join(dir, "client.mjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return node, script
	}

	// Install into a directory of its own, then rename it into place, so
	// that test processes running at once never see half an install.
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(base, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		skipOrFail(t, "npm could not install testdata/mcp-node (offline?): %v\n%s", err, out)
	}
	t.Logf("npm ci: %v", time.Since(t0).Round(time.Millisecond))
	if err := os.Rename(tmp, dir); err != nil {
		// Another test process got there first: use its install.
		if _, serr := os.Stat(script); serr != nil {
			t.Fatal(err)
		}
	}
	return node, script
}

// TestNodeClientInstalled installs (or finds) the node client and the
// reference server at the lock file's versions; `make test-deps` runs it
// alone, with CI=true, so a fresh machine has them before make test.
func TestNodeClientInstalled(t *testing.T) {
	_, script := nodeClient(t)
	for _, f := range []string{
		filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json"),
		filepath.Join("node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"),
	} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(script), f)); err != nil {
			t.Errorf("beside client.mjs: %v", err)
		}
	}
}

// skipOrFail skips t, saying why, or under CI=true fails it: what a
// developer's machine may lack, CI installs (.ci/run), so a skip there
// would hide a test that never ran.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, and this test cannot run: "+format, args...)
	}
	t.Skipf(format, args...)
}

// buildFsbox returns the shared fsbox's path, fsbox-mcp beside it
// (testbin: built once).
func buildFsbox(t *testing.T) string { return testbin.Path(t, "fsbox") }

// nodeSummary is client.mjs's output.
type nodeSummary struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Capabilities map[string]any `json:"capabilities"`
	Tools        []string       `json:"tools"`
	Calls        []struct {
		Name       string          `json:"name"`
		IsError    bool            `json:"isError"`
		Text       string          `json:"text"`
		Structured json.RawMessage `json:"structured"`
	} `json:"calls"`
}

type nodeCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// runNodeClient runs client.mjs with calls against argv and returns its summary.
func runNodeClient(t *testing.T, node, script string, env []string, calls []nodeCall, argv ...string) nodeSummary {
	t.Helper()
	spec, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script, string(spec)}, argv...)...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || ctx.Err() != nil {
			t.Fatalf("node client.mjs %s: %v\nstderr:\n%s", strings.Join(argv, " "), err, stderr.String())
		}
		t.Fatal(err)
	}
	var s nodeSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("client.mjs's output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if len(s.Calls) != len(calls) {
		t.Fatalf("client.mjs made %d calls, want %d", len(s.Calls), len(calls))
	}
	return s
}

func TestNodeSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no npm install and no go build")
	}
	node, script := nodeClient(t)
	fsbox := buildFsbox(t)

	work := t.TempDir()
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	const text = "hello from the node SDK\nsecond line\n"
	if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty config directory: no user config.toml changes the server.
	env := append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())

	t.Run("native", func(t *testing.T) {
		s := runNodeClient(t, node, script, env, []nodeCall{
			{Name: "fsbox_read", Arguments: map[string]any{"path": "hello.txt"}},
			{Name: "fsbox_read", Arguments: map[string]any{"path": "../outside.txt"}},
		}, fsbox, "mcp", work)
		if s.Server.Name != "fsbox" {
			t.Errorf("server name %q, want fsbox", s.Server.Name)
		}
		if s.Capabilities["tools"] == nil {
			t.Errorf("no tools capability: %v", s.Capabilities)
		}
		for _, want := range []string{"fsbox_read", "fsbox_stat", "fsbox_ls", "fsbox_find", "fsbox_edit"} {
			if !slices.Contains(s.Tools, want) {
				t.Errorf("tools/list has no %s: %v", want, s.Tools)
			}
		}
		read := s.Calls[0]
		if read.IsError {
			t.Fatalf("fsbox_read: tool error: %s", read.Text)
		}
		var out struct {
			Path    string `json:"path"`
			Content string `json:"content"`
			Lines   int    `json:"lines"`
			EOF     bool   `json:"eof"`
		}
		if err := json.Unmarshal(read.Structured, &out); err != nil {
			t.Fatalf("fsbox_read's structured content: %v: %s", err, read.Structured)
		}
		if out.Path != "hello.txt" || out.Content != text || out.Lines != 2 || !out.EOF {
			t.Errorf("fsbox_read = %+v, want hello.txt's 2 lines to EOF", out)
		}
		if !strings.Contains(read.Text, `"content"`) {
			t.Errorf("fsbox_read's text content is not its JSON result: %q", read.Text)
		}
		if escape := s.Calls[1]; !escape.IsError {
			t.Errorf("fsbox_read ../outside.txt: no tool error: %s", escape.Text)
		}
	})

	t.Run("reference", func(t *testing.T) {
		s := runNodeClient(t, node, script, env, []nodeCall{
			{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(work, "hello.txt")}},
			{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(work, "hello.txt"), "head": 1}},
			{Name: "list_allowed_directories"},
		}, fsbox, "mcp", "--profile", "reference", work)
		got := slices.Sorted(slices.Values(s.Tools))
		if !slices.Equal(got, referenceNames) {
			t.Errorf("tools/list = %v, want %v", got, referenceNames)
		}
		if c := s.Calls[0]; c.IsError || c.Text != text {
			t.Errorf("read_text_file = %q (isError %v), want %q", c.Text, c.IsError, text)
		}
		// The profile keeps line ends as the file has them (the reference
		// server drops the last line's).
		if c := s.Calls[1]; c.IsError || strings.TrimSuffix(c.Text, "\n") != "hello from the node SDK" {
			t.Errorf("read_text_file head 1 = %q (isError %v), want its first line", c.Text, c.IsError)
		}
		c := s.Calls[2]
		if c.IsError || !slices.Contains(strings.Split(c.Text, "\n"), work) {
			t.Errorf("list_allowed_directories = %q (isError %v), want a line %q", c.Text, c.IsError, work)
		}
	})
}
