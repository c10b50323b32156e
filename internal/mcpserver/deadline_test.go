//go:build unix

package mcpserver

import (
	"context"
	"testing"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// hangUntilDone makes the listing of dir hang until the call's context
// ends: a read stuck until the deadline.
func hangUntilDone(t *testing.T, dir string) {
	t.Helper()
	t.Cleanup(sandbox.SetDirSeam(func(ctx context.Context, point, path string) {
		if point == "dir.list" && path == dir {
			<-ctx.Done()
		}
	}))
}

var deadlineFiles = map[string]string{"a.txt": "needle\n", "b/x.txt": "needle\n", "c.txt": "needle\n"}

// TestToolTimeout: every tool takes timeout (seconds), which lowers the
// policy's max_call_seconds; past it a walk's part is a result (not
// isError) that says truncated, limit "timeout" (SPEC §2).
func TestToolTimeout(t *testing.T) {
	h := newHarness(t, setup{files: deadlineFiles})
	hangUntilDone(t, "b")
	got := h.ok("fsbox_find", map[string]any{"timeout": 0.3})
	if got["truncated"] != true || got["limit"] != "timeout" {
		t.Errorf("find past its timeout: %v, want truncated by the timeout", got)
	}
	if paths, _ := got["paths"].([]any); len(paths) != 1 || paths[0] != "a.txt" {
		t.Errorf("find past its timeout gave %v, want [a.txt]", got["paths"])
	}
	got = h.ok("fsbox_grep", map[string]any{"pattern": "needle", "timeout": 0.3})
	if got["truncated"] != true || got["limit"] != "timeout" || got["count"] != float64(1) {
		t.Errorf("grep past its timeout: %v, want a.txt's match, truncated by the timeout", got)
	}
	for _, bad := range []any{0, -1, "1s", nil, true} {
		h.fail("fsbox_find", map[string]any{"timeout": bad}, "usage", "")
	}
}

// TestPolicyDeadline: without a timeout argument the policy's
// max_call_seconds is the deadline of every tool call; a larger timeout
// is the policy's.
func TestPolicyDeadline(t *testing.T) {
	h := newHarness(t, setup{files: deadlineFiles, toml: "workdir = \"$WORK\"\n[limits]\nmax_call_seconds = 1\n"})
	hangUntilDone(t, "b")
	for _, args := range []map[string]any{nil, {"timeout": 3600}} {
		got := h.ok("fsbox_find", args)
		if got["truncated"] != true || got["limit"] != "timeout" {
			t.Errorf("find %v past max_call_seconds: %v, want truncated by the timeout", args, got)
		}
	}
}
