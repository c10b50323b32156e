package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// LiesInByID finds the root a path lies in by identity, whatever its
// spelling: here a symlink stands for a bind mount (one directory, two
// names). New on c24bc27 (which compared canonical paths only).
func TestLiesInByID(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w2 := filepath.Join(base, "w2")
	if err := os.MkdirAll(filepath.Join(w2, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w2, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "missing")
	for _, c := range []struct {
		p     string
		roots []string
		want  string
	}{
		{filepath.Join(base, "alias", "etc", "p.toml"), []string{missing, w2}, w2},
		{filepath.Join(base, "alias", "p.toml"), []string{w2}, w2},
		{filepath.Join(base, "other", "p.toml"), []string{w2, missing}, ""},
		{filepath.Join(base, "alias", "p.toml"), []string{missing}, ""},
		{filepath.Join(base, "alias", "p.toml"), nil, ""},
	} {
		if got := LiesInByID(c.p, c.roots); got != c.want {
			t.Errorf("LiesInByID(%s, %q) = %q, want %q", c.p, c.roots, got, c.want)
		}
	}
}
