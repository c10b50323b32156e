package tool

import (
	"io"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// ServeSpec is what a tool server (fsbox mcp) gets from the command line
// that started it, once the policy is settled and the sandbox open.
type ServeSpec struct {
	Reg      *spec.Registry
	Sandbox  *sandbox.Sandbox // restricted; make a ForCall view per tool call
	Audit    *sandbox.AuditLog
	Version  string
	Profile  string // "native" or "reference"
	HTTP     string // a loopback host:port, or "" for stdio
	Token    string // FSBOX_MCP_TOKEN (needed with HTTP)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Landlock bool // whether the process was restricted
}
