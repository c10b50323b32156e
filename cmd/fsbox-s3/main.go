// Command fsbox-s3 is fsbox with object roots: the same commands and MCP
// server, with the S3 client (internal/s3store) linked in. fsbox and
// fsbox-mcp hand a call whose policy names an s3:// root over to the
// fsbox-s3 beside them (argv[0] fsbox, the normalised arguments), so that
// the client's libraries, whose package initialisation alone costs tens
// of milliseconds, are paid only by the calls that use a bucket.
//
// Run under its own name it runs the call it is given as fsbox would
// (`fsbox-s3 grep TODO s3://bucket/tenant`); `fsbox-s3 mcp` serves.
package main

import (
	"os"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/mcpserver"
	"github.com/fsbox/fsbox/internal/s3store"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func main() {
	sandbox.UseObjectStores(s3store.Open)
	args := os.Args
	if len(args) > 0 {
		// fsbox-s3, whatever it is installed as, is fsbox: never a
		// multi-call link's command.
		args = append([]string{"fsbox"}, args[1:]...)
	}
	os.Exit(cli.MainWith(args, os.Stdin, os.Stdout, os.Stderr, cli.Extras{JQ: jq.Compile, Serve: mcpserver.Serve}))
}
