// Command fsbox is a sandboxed file toolbox; see internal/cli.
package main

import (
	"os"

	"github.com/fsbox/fsbox/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
