package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

var referenceNames = []string{
	"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
	"list_directory", "list_directory_with_sizes", "move_file", "read_file", "read_media_file", "read_multiple_files",
	"read_text_file", "search_files", "write_file",
}

// refSession serves the reference profile over policy p (workdir and
// roots already set) and returns a connected client session.
func refSession(t *testing.T, p *policy.Policy) *mcp.ClientSession {
	t.Helper()
	sb, err := sandbox.New(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	srv := New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: sb, Profile: "reference", Stderr: io.Discard})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// refFixture makes a workdir with a few files and a read root outside it.
func refFixture(t *testing.T) (work, ro string, p *policy.Policy) {
	t.Helper()
	base := t.TempDir()
	work, ro = filepath.Join(base, "work"), filepath.Join(base, "ro")
	for name, content := range map[string]string{
		"work/a.txt":          "one\ntwo\nthree\nfour\n",
		"work/crlf.txt":       "alpha\r\nbeta\r\n",
		"work/dup.txt":        "x = 1\nx = 1\n",
		"work/sub/b.go":       "package b\n",
		"work/sub/deep/c.go":  "package c\n",
		"work/.hidden":        "h\n",
		"work/pic.png":        "\x89PNG\r\n\x1a\n\x00\x01",
		"ro/notes.md":         "read only\n",
		"outside/secret.txt":  "no\n",
		"work/sub/deep/d.txt": strings.Repeat("d", 2048),
	} {
		f := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p = policy.DefaultPolicy(work)
	p.ReadRoots = []string{ro}
	return work, ro, p
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// okText is the text of a successful call, checked against its
// structuredContent {"content": text}.
func okText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: isError: %s", name, args, refTextOf(res))
	}
	text := refTextOf(res)
	var sc struct {
		Content *string `json:"content"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sc); err != nil || sc.Content == nil || *sc.Content != text {
		t.Errorf("%s: structuredContent %s does not hold the text %q", name, b, text)
	}
	return text
}

func refTextOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// errCode is the code of an isError result's fsbox error object.
func errCode(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: want isError, got %s", name, args, refTextOf(res))
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
			Rule string `json:"rule"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(refTextOf(res)), &e); err != nil {
		t.Fatalf("%s: the error text is not fsbox's error JSON: %q", name, refTextOf(res))
	}
	return e.Error.Code
}

func TestReferenceToolList(t *testing.T) {
	_, _, p := refFixture(t)
	cs := refSession(t, p)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" || s.Properties == nil {
			t.Errorf("%s: input schema %s is not an object schema with properties", tool.Name, b)
		}
		if tool.Description == "" || tool.Annotations == nil {
			t.Errorf("%s: no description or annotations", tool.Name)
		}
		ro := strings.HasPrefix(tool.Name, "read_") || strings.HasPrefix(tool.Name, "list_") ||
			tool.Name == "directory_tree" || tool.Name == "search_files" || tool.Name == "get_file_info"
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint != ro {
			t.Errorf("%s: readOnlyHint %v, want %v", tool.Name, tool.Annotations.ReadOnlyHint, ro)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, referenceNames) {
		t.Errorf("tools/list:\n got %v\nwant %v", names, referenceNames)
	}
}

func TestReferenceToolsOffByPolicy(t *testing.T) {
	_, _, p := refFixture(t)
	p.Commands = map[string]bool{"write": false, "edit": false}
	cs := refSession(t, p)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "write_file" || tool.Name == "edit_file" {
			t.Errorf("%s is listed while its command is switched off", tool.Name)
		}
	}
	if len(res.Tools) != len(referenceNames)-2 {
		t.Errorf("%d tools, want %d", len(res.Tools), len(referenceNames)-2)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "x", "content": "y"}}); err == nil {
		t.Error("write_file answered while switched off")
	}
}

func TestReferenceRead(t *testing.T) {
	work, ro, p := refFixture(t)
	cs := refSession(t, p)
	if got := okText(t, cs, "read_text_file", map[string]any{"path": "a.txt"}); got != "one\ntwo\nthree\nfour\n" {
		t.Errorf("read_text_file: %q", got)
	}
	if got := okText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(work, "a.txt"), "head": 2}); got != "one\ntwo\n" {
		t.Errorf("head 2: %q", got)
	}
	if got := okText(t, cs, "read_text_file", map[string]any{"path": "a.txt", "tail": 1}); got != "four\n" {
		t.Errorf("tail 1: %q", got)
	}
	// read_file, deprecated, is read_text_file under its old name.
	for _, args := range []map[string]any{{"path": "a.txt"}, {"path": "a.txt", "head": 2}, {"path": "crlf.txt", "tail": 1}} {
		if got, want := okText(t, cs, "read_file", args), okText(t, cs, "read_text_file", args); got != want {
			t.Errorf("read_file %v: %q, read_text_file: %q", args, got, want)
		}
	}
	if got := okText(t, cs, "read_text_file", map[string]any{"path": "crlf.txt"}); got != "alpha\r\nbeta\r\n" {
		t.Errorf("CRLF not kept: %q", got)
	}
	if err := os.WriteFile(filepath.Join(work, "bom.txt"), []byte("\xEF\xBB\xBFhi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := okText(t, cs, "read_text_file", map[string]any{"path": "bom.txt"}); got != "\uFEFFhi\n" {
		t.Errorf("BOM not kept: %q", got)
	}
	if got := okText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(ro, "notes.md")}); got != "read only\n" {
		t.Errorf("read root: %q", got)
	}
	if c := errCode(t, cs, "read_text_file", map[string]any{"path": "a.txt", "head": 1, "tail": 1}); c != "usage" {
		t.Errorf("head and tail: code %s", c)
	}
	if c := errCode(t, cs, "read_text_file", map[string]any{}); c != "usage" {
		t.Errorf("no path: code %s", c)
	}

	got := okText(t, cs, "read_multiple_files", map[string]any{"paths": []string{"a.txt", "missing.txt", "sub/b.go"}})
	parts := strings.Split(got, "\n---\n")
	if len(parts) != 3 || parts[0] != "a.txt:\none\ntwo\nthree\nfour\n\n" || !strings.HasPrefix(parts[1], "missing.txt: Error - ") ||
		parts[2] != "sub/b.go:\npackage b\n\n" {
		t.Errorf("read_multiple_files: %q", got)
	}

	res := callTool(t, cs, "read_media_file", map[string]any{"path": "pic.png"})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("read_media_file: %+v", res)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG\r\n\x1a\n\x00\x01" {
		t.Errorf("read_media_file: %#v", res.Content[0])
	}
	b, _ := json.Marshal(res.Content[0])
	if !strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x01"))) {
		t.Errorf("read_media_file: the wire form holds no base64 data: %s", b)
	}
}

func TestReferenceMediaCapped(t *testing.T) {
	work, _, p := refFixture(t)
	p.Limits.MaxReadBytes = 16
	if err := os.WriteFile(filepath.Join(work, "big.png"), make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := refSession(t, p)
	if c := errCode(t, cs, "read_media_file", map[string]any{"path": "big.png"}); c != "too_large" {
		t.Errorf("over max_read_bytes: code %s", c)
	}
}

func TestReferenceDenied(t *testing.T) {
	work, ro, p := refFixture(t)
	cs := refSession(t, p)
	secret := filepath.Join(filepath.Dir(work), "outside", "secret.txt")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": secret}},
		{"read_media_file", map[string]any{"path": secret}},
		{"get_file_info", map[string]any{"path": secret}},
		{"list_directory", map[string]any{"path": filepath.Dir(secret)}},
		{"directory_tree", map[string]any{"path": filepath.Dir(secret)}},
		{"search_files", map[string]any{"path": filepath.Dir(secret), "pattern": "*"}},
		{"write_file", map[string]any{"path": secret, "content": "x"}},
		{"write_file", map[string]any{"path": filepath.Join(ro, "new.txt"), "content": "x"}},
		{"create_directory", map[string]any{"path": "../outside/d"}},
		{"move_file", map[string]any{"source": "a.txt", "destination": secret + ".2"}},
		{"edit_file", map[string]any{"path": secret, "edits": []map[string]any{{"oldText": "no", "newText": "yes"}}}},
	} {
		if code := errCode(t, cs, c.tool, c.args); code != "denied" {
			t.Errorf("%s %v: code %s, want denied", c.tool, c.args, code)
		}
	}
	// One denied path among others is that file's error only.
	got := okText(t, cs, "read_multiple_files", map[string]any{"paths": []string{secret, "a.txt"}})
	if !strings.HasPrefix(got, secret+": Error - ") || !strings.HasSuffix(got, "a.txt:\none\ntwo\nthree\nfour\n\n") {
		t.Errorf("read_multiple_files with a denied path: %q", got)
	}
	if b, _ := os.ReadFile(secret); string(b) != "no\n" {
		t.Error("the file outside the roots changed")
	}
}

func TestReferenceWriteEdit(t *testing.T) {
	work, _, p := refFixture(t)
	cs := refSession(t, p)
	if got := okText(t, cs, "write_file", map[string]any{"path": "new/w.txt", "content": "hello\n"}); got != "Successfully wrote to new/w.txt" {
		t.Errorf("write_file: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "new/w.txt")); string(b) != "hello\n" {
		t.Errorf("written: %q", b)
	}

	edits := []map[string]any{{"oldText": "two", "newText": "TWO"}, {"oldText": "four", "newText": "FOUR"}}
	got := okText(t, cs, "edit_file", map[string]any{"path": "a.txt", "edits": edits, "dryRun": true})
	if !strings.HasPrefix(got, "```diff\n") || !strings.HasSuffix(got, "```\n\n") || !strings.Contains(got, "-two\n+TWO\n") || !strings.Contains(got, "+FOUR") {
		t.Errorf("dry-run diff: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\ntwo\nthree\nfour\n" {
		t.Errorf("dryRun changed the file: %q", b)
	}
	okText(t, cs, "edit_file", map[string]any{"path": "a.txt", "edits": edits})
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\nTWO\nthree\nFOUR\n" {
		t.Errorf("edited: %q", b)
	}

	// Ambiguous: refused, nothing written; a failing edit among good ones
	// leaves the file alone.
	if c := errCode(t, cs, "edit_file", map[string]any{"path": "dup.txt", "edits": []map[string]any{{"oldText": "x = 1", "newText": "x = 2"}}}); c != "ambiguous" {
		t.Errorf("ambiguous oldText: code %s", c)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "dup.txt")); string(b) != "x = 1\nx = 1\n" {
		t.Errorf("the ambiguous edit changed the file: %q", b)
	}
	if c := errCode(t, cs, "edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "one", "newText": "1"}, {"oldText": "absent", "newText": "x"}}}); c != "text_not_found" {
		t.Errorf("missing oldText: code %s", c)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "one\nTWO\nthree\nFOUR\n" {
		t.Errorf("a failed edit list changed the file: %q", b)
	}
	// CRLF kept.
	okText(t, cs, "edit_file", map[string]any{"path": "crlf.txt", "edits": []map[string]any{{"oldText": "beta\n", "newText": "gamma\n"}}})
	if b, _ := os.ReadFile(filepath.Join(work, "crlf.txt")); string(b) != "alpha\r\ngamma\r\n" {
		t.Errorf("CRLF edit: %q", b)
	}

	if got := okText(t, cs, "create_directory", map[string]any{"path": "x/y/z"}); got != "Successfully created directory x/y/z" {
		t.Errorf("create_directory: %q", got)
	}
	if fi, err := os.Stat(filepath.Join(work, "x/y/z")); err != nil || !fi.IsDir() {
		t.Errorf("create_directory made no directory: %v", err)
	}
	okText(t, cs, "create_directory", map[string]any{"path": "x/y/z"}) // exists: no error

	if got := okText(t, cs, "move_file", map[string]any{"source": "new/w.txt", "destination": "x/w.txt"}); got != "Successfully moved new/w.txt to x/w.txt" {
		t.Errorf("move_file: %q", got)
	}
	if c := errCode(t, cs, "move_file", map[string]any{"source": "x/w.txt", "destination": "a.txt"}); c != "exists" {
		t.Errorf("move onto an existing file: code %s", c)
	}
}

func TestReferenceListings(t *testing.T) {
	work, ro, p := refFixture(t)
	cs := refSession(t, p)
	if got := okText(t, cs, "list_directory", map[string]any{"path": "sub"}); got != "[FILE] b.go\n[DIR] deep" {
		t.Errorf("list_directory: %q", got)
	}
	if got := okText(t, cs, "list_directory", map[string]any{"path": "."}); !strings.Contains(got, "[FILE] .hidden\n") || !strings.Contains(got, "[DIR] sub") {
		t.Errorf("list_directory .: %q", got)
	}
	got := okText(t, cs, "list_directory_with_sizes", map[string]any{"path": "sub/deep", "sortBy": "size"})
	// The reference's columns: the name padded to 30, the size right-aligned in 10.
	want := "[FILE] d.txt" + strings.Repeat(" ", 25) + " " + "   2.00 KB\n" +
		"[FILE] c.go" + strings.Repeat(" ", 26) + " " + "      10 B\n" +
		"\nTotal: 2 files, 0 directories\nCombined size: 2.01 KB"
	if got != want {
		t.Errorf("list_directory_with_sizes:\n got %q\nwant %q", got, want)
	}
	got = okText(t, cs, "list_directory_with_sizes", map[string]any{"path": "sub"})
	if !strings.HasPrefix(got, "[FILE] b.go") || !strings.Contains(got, "\n[DIR] deep") || !strings.HasSuffix(got, "Total: 1 files, 1 directories\nCombined size: 10 B") {
		t.Errorf("list_directory_with_sizes by name: %q", got)
	}

	got = okText(t, cs, "directory_tree", map[string]any{"path": "sub"})
	var tree []map[string]any
	if err := json.Unmarshal([]byte(got), &tree); err != nil {
		t.Fatalf("directory_tree is not JSON: %q", got)
	}
	wantTree := `[{"name":"b.go","type":"file"},{"children":[{"name":"c.go","type":"file"},{"name":"d.txt","type":"file"}],"name":"deep","type":"directory"}]`
	if b, _ := json.Marshal(tree); string(b) != wantTree {
		t.Errorf("directory_tree: %s", b)
	}
	if !strings.Contains(got, "\n  {\n    \"name\"") {
		t.Errorf("directory_tree is not indented by 2: %q", got)
	}
	got = okText(t, cs, "directory_tree", map[string]any{"path": "sub", "excludePatterns": []string{"deep"}})
	if strings.Contains(got, "deep") || !strings.Contains(got, "b.go") {
		t.Errorf("directory_tree with excludePatterns: %q", got)
	}
	// The pattern matches the path relative to path, as the reference's:
	// *.go the top level only, **/*.go every level.
	if got := okText(t, cs, "search_files", map[string]any{"path": ".", "pattern": "*.go"}); got != "No matches found" {
		t.Errorf("search_files *.go from the top (no .go there): %q", got)
	}
	if got := okText(t, cs, "search_files", map[string]any{"path": "sub", "pattern": "*.go"}); got != filepath.Join(work, "sub/b.go") {
		t.Errorf("search_files *.go in sub: %q", got)
	}
	got = okText(t, cs, "search_files", map[string]any{"path": ".", "pattern": "**/*.go"})
	if got != filepath.Join(work, "sub/b.go")+"\n"+filepath.Join(work, "sub/deep/c.go") {
		t.Errorf("search_files: %q", got)
	}
	got = okText(t, cs, "search_files", map[string]any{"path": ".", "pattern": "**/*.go", "excludePatterns": []string{"deep"}})
	if got != filepath.Join(work, "sub/b.go") {
		t.Errorf("search_files with excludePatterns: %q", got)
	}
	if got := okText(t, cs, "search_files", map[string]any{"path": ".", "pattern": "*.nothing"}); got != "No matches found" {
		t.Errorf("search_files, no match: %q", got)
	}

	got = okText(t, cs, "get_file_info", map[string]any{"path": "a.txt"})
	lines := strings.Split(got, "\n")
	keys := []string{}
	for _, l := range lines {
		k, _, _ := strings.Cut(l, ": ")
		keys = append(keys, k)
	}
	if !slices.Equal(keys, []string{"size", "created", "modified", "accessed", "isDirectory", "isFile", "permissions"}) ||
		lines[0] != "size: 19" || lines[4] != "isDirectory: false" || lines[5] != "isFile: true" || lines[6] != "permissions: 644" {
		t.Errorf("get_file_info: %q", got)
	}
	if got := okText(t, cs, "get_file_info", map[string]any{"path": "sub"}); !strings.Contains(got, "isDirectory: true\nisFile: false") {
		t.Errorf("get_file_info on a directory: %q", got)
	}
	// created: the file system's creation time where it keeps one (statx
	// on Linux), in the reference's format; else unknown.
	for _, p := range []string{"a.txt", "sub"} {
		created := strings.TrimPrefix(strings.Split(okText(t, cs, "get_file_info", map[string]any{"path": p}), "\n")[1], "created: ")
		bt, ok := sandboxBirth(t, filepath.Join(work, p))
		if want := "unknown"; !ok && created != want || ok && created != bt {
			t.Errorf("get_file_info %s: created %q, want %q (known: %v)", p, created, bt, ok)
		}
	}
	if c := errCode(t, cs, "get_file_info", map[string]any{"path": "missing"}); c != "not_found" {
		t.Errorf("get_file_info on a missing path: code %s", c)
	}

	realWork, _ := filepath.EvalSymlinks(work)
	realRO, _ := filepath.EvalSymlinks(ro)
	if got := okText(t, cs, "list_allowed_directories", nil); got != "Allowed directories:\n"+realWork+"\n"+realRO {
		t.Errorf("list_allowed_directories: %q", got)
	}
}
