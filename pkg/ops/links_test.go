package ops

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// testExecutable stands for the program a face serves the call from.
func testExecutable() (string, error) { return "/opt/fsbox/bin/fsbox", nil }

// links creates a directory and files: a library caller is refused
// (denied, rule command) while links, mkdir or write is off, and nothing
// is created.
func TestLinksObeysWriteToggles(t *testing.T) {
	for _, off := range []string{"links", "mkdir", "write"} {
		dir := t.TempDir()
		p := policy.DefaultPolicy(dir)
		p.Commands[off] = false
		sb, err := sandbox.New(p, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Links(context.Background(), sb, "bin", "fsbox-", testExecutable, []string{"read"})
		sb.Close()
		if e := fserr.AsError(err); e.Code != fserr.CodeDenied || e.Rule != fserr.RuleCommand {
			t.Errorf("%s off: %v, want denied by rule command", off, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "bin")); err == nil {
			t.Errorf("%s off: links created its directory", off)
		}
		if CommandEnabled(p, "links") {
			t.Errorf("%s off: CommandEnabled says links is on", off)
		}
	}
	p := policy.DefaultPolicy(t.TempDir())
	if !CommandEnabled(p, "links") || CheckCommand(p, "links") != nil {
		t.Error("the default policy switches links on")
	}
}

// links makes no link for mcp, under any prefix: the MCP server is its
// own binary, fsbox-mcp, which a link beside it would shadow.
func TestLinksNoMCP(t *testing.T) {
	for _, prefix := range []string{"fsbox-", ""} {
		dir := t.TempDir()
		sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Links(context.Background(), sb, "bin", prefix, testExecutable, Registry.Names())
		sb.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Links {
			if filepath.Base(l.Path) == prefix+"mcp" {
				t.Errorf("prefix %q: a link %s", prefix, l.Path)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "bin", prefix+"mcp")); err == nil {
			t.Errorf("prefix %q: bin/%smcp exists", prefix, prefix)
		}
		if _, err := os.Lstat(filepath.Join(dir, "bin", prefix+"grep")); err != nil {
			t.Errorf("prefix %q: no link for grep: %v", prefix, err)
		}
	}
}

// links points its links at the program the face names (Input.Executable),
// and without one, or when it cannot be found, is io before it creates
// anything.
func TestLinksExecutable(t *testing.T) {
	for _, c := range []struct {
		name string
		exe  func() (string, error)
		code fserr.Code // "": the links are made
	}{
		{"given", testExecutable, ""},
		{"none", nil, fserr.CodeIO},
		{"lost", func() (string, error) { return "", errors.New("gone") }, fserr.CodeIO},
	} {
		dir := t.TempDir()
		sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Links(context.Background(), sb, "bin", "fsbox-", c.exe, []string{"read", "grep"})
		sb.Close()
		if c.code != "" {
			if e := fserr.AsError(err); e.Code != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
			if _, err := os.Lstat(filepath.Join(dir, "bin")); err == nil {
				t.Errorf("%s: links created its directory", c.name)
			}
			continue
		}
		if err != nil || len(res.Links) != 2 {
			t.Fatalf("%s: %+v, %v", c.name, res, err)
		}
		for _, l := range res.Links {
			target, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(l.Path)))
			if l.Target != "/opt/fsbox/bin/fsbox" || target != l.Target || err != nil {
				t.Errorf("%s: %s -> %q (result %q, %v)", c.name, l.Path, target, l.Target, err)
			}
		}
	}
}

// No package under pkg/ imports one under internal/: the faces (internal)
// hand the operations what they need of the command layer (Input), as
// links gets the program's path.
func TestPkgImportsNoInternal(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "*", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatal("no files under pkg/", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, "github.com/fsbox/fsbox/internal/") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
