package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// BenchmarkToolCall is one warm tool call through the SDK's in-memory
// transport: the server's own cost per call, without a process boundary.
func BenchmarkToolCall(b *testing.B) {
	work := b.TempDir()
	os.WriteFile(filepath.Join(work, "ten.txt"), []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 233)), 0o644)
	for i := range 18 {
		os.WriteFile(filepath.Join(work, "f"+string(rune('a'+i))+".txt"), []byte("x\n"), 0o644)
	}
	sb, err := sandbox.New(policy.DefaultPolicy(work), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	srv := New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: sb, Profile: "native", Stderr: os.Stderr})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	go srv.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"stat", "fsbox_stat", map[string]any{"path": "ten.txt"}},
		{"read10KiB", "fsbox_read", map[string]any{"path": "ten.txt"}},
		{"ls18", "fsbox_ls", map[string]any{"path": "."}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
