// Command fsbox-mcp is fsbox's MCP server: `fsbox-mcp [flags] [DIR...]`
// is `fsbox mcp [flags] [DIR...]`, serving the enabled commands as MCP
// tools (internal/mcpserver, on the official Go SDK). It is a binary of
// its own so that the SDK's package initialisation is not paid by every
// fsbox call: a host names it directly, and `fsbox mcp …` replaces its
// own process with the fsbox-mcp beside it.
//
// Run under its own name (fsbox-mcp, or any name other than fsbox) it
// serves; run as fsbox, as fsbox does when it hands over `fsbox mcp …`
// (argv[0] fsbox, then the normalised arguments, command name included),
// it runs the call it is given, as fsbox would.
package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/mcpserver"
)

func main() {
	args := os.Args
	switch {
	case len(args) == 2 && args[1] == "--version":
		args = []string{"fsbox", "--version"} // the build it is, as fsbox --version says it
	case len(args) == 0 || strings.TrimSuffix(filepath.Base(args[0]), ".exe") != "fsbox":
		// fsbox-mcp, whatever it is installed as: the multi-call rule
		// makes fsbox-mcp the mcp command.
		args = append([]string{"fsbox-mcp"}, args[min(1, len(args)):]...)
	}
	os.Exit(cli.MainMCP(args, os.Stdin, os.Stdout, os.Stderr, cli.Extras{Serve: mcpserver.Serve}))
}
