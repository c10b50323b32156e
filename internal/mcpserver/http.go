package mcpserver

import (
	"context"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// serveHTTP serves streamable HTTP on s.HTTP (not yet built).
func serveHTTP(ctx context.Context, srv *Server, s *cli.ServeSpec) error {
	return sandbox.Errorf(sandbox.CodeUsage, "", "--http is not built yet")
}
