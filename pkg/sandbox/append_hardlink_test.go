//go:build unix

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestAppendToSharedInodeChangesNothing: write --append on a file with
// more than one link is denied, rule hardlink, with deny_hardlinks off
// (SPEC §4, "Nothing changed in place on a shared inode [door]"), and
// nothing changes: not the file, not its other name outside, not the
// journal's history, not what the journal keeps on disk. A whole write
// replaces only the name.
//
// Fails on 6a21fbf: the append is made, through the link, to the file
// outside the workdir.
func TestAppendToSharedInodeChangesNothing(t *testing.T) {
	state := t.TempDir()
	fx := newFixture(t, map[string]string{"outside/target.txt": "OUTSIDE\n", "seed.txt": "seed\n"}, func(p *policy.Policy) {
		p.Journal.State = state
	})
	if err := os.Link(fx.abs("outside/target.txt"), fx.abs("hl.txt")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A first change makes the journal, so what follows can be compared.
	if _, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: "seed.txt", Content: strings.NewReader("seed 2\n")}); err != nil {
		t.Fatal(err)
	}
	before := journalFiles(t, state)
	_, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: "hl.txt", Append: true, Content: strings.NewReader("PWNED\n")})
	wantDenied(t, "append to a hard link", err, fserr.RuleHardlink)
	fx.mustHave("outside/target.txt", "OUTSIDE\n")
	fx.mustHave("hl.txt", "OUTSIDE\n")
	h, err := ops.History(ctx, fx.sb, "", 0)
	if err != nil || len(h.Changes) != 1 {
		t.Errorf("history after the refused append: %d changes (%v), want only the seed's", len(h.Changes), err)
	}
	after := journalFiles(t, state)

	if _, err := ops.Write(ctx, fx.sb, ops.WriteOptions{Path: "hl.txt", Content: strings.NewReader("mine\n")}); err != nil {
		t.Fatalf("a whole write of the link: %v", err)
	}
	fx.mustHave("outside/target.txt", "OUTSIDE\n")
	fx.mustHave("hl.txt", "mine\n")
	if after != before {
		t.Errorf("the refused append left the file's prior content in the journal's objects "+
			"(Append kept it before its hard-link check)\nbefore:\n%safter:\n%s", before, after)
	}
}

// journalFiles lists the files below dir, one a line.
func journalFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "changes.jsonl" && d.Name() != "counters" {
			b.WriteString(strings.TrimPrefix(p, dir) + "\n")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
