// Command fsbox-full is fsbox with the extras the fsbox binary leaves out
// to start quickly: the MCP server (internal/mcpserver, on the official Go
// SDK) and the --jq filter (internal/jq, on gojq). fsbox runs it, in its
// own process's place, for `fsbox mcp` and for --jq; every other command
// behaves as in fsbox.
package main

import (
	"os"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/mcpserver"
)

func main() {
	args := append([]string{"fsbox"}, os.Args[1:]...)
	os.Exit(cli.MainFull(args, os.Stdin, os.Stdout, os.Stderr, cli.Extras{Serve: mcpserver.Serve, JQ: jq.Compile}))
}
