//go:build unix

// End-to-end golden tests: each testdata/script/*.txtar runs the real CLI
// (this test binary, installed in $PATH as fsbox and fsbox-NAME) in a fresh
// $WORK; internal/scripttest holds the harness and the scripts'
// conventions.
package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/mcpserver"
	"github.com/fsbox/fsbox/internal/scripttest"
	"github.com/fsbox/fsbox/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the testscript goldens (cmp against archive files) from the current output")

// TestMain makes the test binary double as fsbox: testscript installs it
// in $PATH as "fsbox" and as "fsbox-NAME" for every command (never as a
// bare NAME, which would shadow testscript's own verbs such as grep).
//
// testscript gives every command a pipe as stdin (empty unless the script
// said `stdin FILE`), and fsbox reads a pipe when a filter names no path
// (ripgrep's rule). So fsbox gets /dev/null, as an exec tool gives it,
// unless the script sets FSBOX_TEST_STDIN=1 to hand it the pipe.
func TestMain(m *testing.M) {
	run := func() {
		stdin := os.Stdin
		if os.Getenv("FSBOX_TEST_STDIN") == "" {
			if null, err := os.Open(os.DevNull); err == nil {
				stdin = null
			}
		}
		// The scripts run fsbox with the MCP server built in, as
		// fsbox-mcp has it, and --jq, as fsbox has it; TestLeanExecsMCP
		// checks that fsbox hands `fsbox mcp` over to fsbox-mcp.
		os.Exit(cli.MainMCP(os.Args, stdin, os.Stdout, os.Stderr, cli.Extras{Serve: mcpserver.Serve, JQ: jq.Compile}))
	}
	cmds := map[string]func(){"fsbox": run}
	for _, name := range cli.CommandNames() {
		cmds["fsbox-"+name] = run
	}
	// testbin.Main removes the fsbox pair a test here built, if any.
	testscript.Main(testbinMain{m}, cmds)
}

// testbinMain runs the tests through testbin.Main.
type testbinMain struct{ m *testing.M }

func (t testbinMain) Run() int { return testbin.Main(t.m) }

func TestScript(t *testing.T) {
	testscript.Run(t, scripttest.Params(filepath.Join("..", "..", "testdata", "script"), *update))
}
