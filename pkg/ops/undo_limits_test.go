package ops

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// TestUndoAtTheLargestLimit: with max_write_bytes = 2^63-1 undo restores
// the kept content. Fails on 6a21fbf: reading it through a limit of max+1
// wrapped to a negative one, read nothing, and every undo called its kept
// content "damaged" (issue 26 finding 5).
func TestUndoAtTheLargestLimit(t *testing.T) {
	sb, dir := journaled(t, map[string]string{"a.txt": "before\n"}, func(p *policy.Policy) {
		p.Limits.MaxWriteBytes = math.MaxInt64
	})
	ctx := context.Background()
	if _, err := Write(ctx, sb, WriteOptions{Path: "a.txt", Content: strings.NewReader("after\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(ctx, sb, "", false); err != nil {
		t.Fatalf("undo at max_write_bytes = 2^63-1: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "before\n" {
		t.Errorf("a.txt holds %q after undo, want the kept content", b)
	}
}
