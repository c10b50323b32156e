// Command fsbox is a sandboxed file toolbox; see internal/cli. It links
// --jq's compiler (internal/jq); fsbox-mcp does not.
package main

import (
	"os"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
)

func main() {
	os.Exit(cli.MainWith(os.Args, os.Stdin, os.Stdout, os.Stderr, cli.Extras{JQ: jq.Compile}))
}
