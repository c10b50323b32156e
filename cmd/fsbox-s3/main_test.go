//go:build unix

package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/mcpserver"
	"github.com/fsbox/fsbox/internal/s3store"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestMain makes the test binary double as fsbox-s3 (as fsbox, with the
// S3 client): testscript installs it in $PATH as "fsbox" and
// "fsbox-NAME" for every command.
func TestMain(m *testing.M) {
	run := func() {
		sandbox.UseObjectStores(s3store.Open)
		stdin := os.Stdin
		if os.Getenv("FSBOX_TEST_STDIN") == "" {
			if null, err := os.Open(os.DevNull); err == nil {
				stdin = null
			}
		}
		os.Exit(cli.MainMCP(os.Args, stdin, os.Stdout, os.Stderr, cli.Extras{Serve: mcpserver.Serve, JQ: jq.Compile}))
	}
	cmds := map[string]func(){"fsbox": run}
	for _, name := range cli.CommandNames() {
		cmds["fsbox-"+name] = run
	}
	testscript.Main(m, cmds)
}
