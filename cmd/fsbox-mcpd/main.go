// Command fsbox-mcpd is fsbox with `fsbox mcp` built in: the MCP server
// (internal/mcpserver, on the official Go SDK). fsbox runs it for
// `fsbox mcp`; it is a binary of its own so that the SDK's start-up cost
// is not paid by every other fsbox command. Any other command runs as in
// fsbox.
package main

import (
	"os"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/mcpserver"
)

func main() {
	args := append([]string{"fsbox"}, os.Args[1:]...)
	os.Exit(cli.MainServing(args, os.Stdin, os.Stdout, os.Stderr, mcpserver.Serve))
}
