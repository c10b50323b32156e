package mcpserver

import (
	"go/build"
	"strings"
	"testing"
)

// TestNoCommandLineBelow: the MCP server reaches the tool face through
// internal/tool, never through the command line: no package it builds
// from (test files aside) imports internal/cli or urfave/cli.
func TestNoCommandLineBelow(t *testing.T) {
	const module = "github.com/fsbox/fsbox/"
	seen := map[string]bool{}
	var walk func(path, dir string, from string)
	walk = func(path, dir string, from string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if path == module+"internal/cli" || strings.HasPrefix(path, "github.com/urfave/cli") {
			t.Errorf("%s imports %s", from, path)
			return
		}
		if !strings.HasPrefix(path, module) && path != "." {
			return
		}
		p, err := build.Default.Import(path, dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range p.Imports {
			walk(imp, p.Dir, p.ImportPath)
		}
	}
	walk(".", ".", "")
	if !seen[module+"internal/tool"] || !seen[module+"pkg/sandbox"] {
		t.Fatalf("the walk missed the server's own imports: %v", seen)
	}
}
