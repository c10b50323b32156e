package ops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// links creates a directory and files: a library caller is refused
// (denied, rule command) while links, mkdir or write is off, and nothing
// is created.
func TestLinksObeysWriteToggles(t *testing.T) {
	for _, off := range []string{"links", "mkdir", "write"} {
		dir := t.TempDir()
		p := sandbox.DefaultPolicy(dir)
		p.Commands[off] = false
		sb, err := sandbox.New(p, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Links(context.Background(), sb, "bin", "fsbox-", []string{"read"})
		sb.Close()
		if e := sandbox.AsError(err); e.Code != sandbox.CodeDenied || e.Rule != sandbox.RuleCommand {
			t.Errorf("%s off: %v, want denied by rule command", off, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "bin")); err == nil {
			t.Errorf("%s off: links created its directory", off)
		}
		if CommandEnabled(p, "links") {
			t.Errorf("%s off: CommandEnabled says links is on", off)
		}
	}
	p := sandbox.DefaultPolicy(t.TempDir())
	if !CommandEnabled(p, "links") || CheckCommand(p, "links") != nil {
		t.Error("the default policy switches links on")
	}
}

// links makes no link for mcp, under any prefix: the MCP server is its
// own binary, fsbox-mcp, which a link beside it would shadow.
func TestLinksNoMCP(t *testing.T) {
	for _, prefix := range []string{"fsbox-", ""} {
		dir := t.TempDir()
		sb, err := sandbox.New(sandbox.DefaultPolicy(dir), "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Links(context.Background(), sb, "bin", prefix, Registry.Names())
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
