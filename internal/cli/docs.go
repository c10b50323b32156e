package cli

import (
	"io"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// DocApp returns the app with every command, independent of any policy,
// for generated documentation.
func DocApp() *ucli.App {
	return newApp(&state{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
}
