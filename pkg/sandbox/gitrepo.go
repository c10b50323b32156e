package sandbox

import (
	"os"
	"path/filepath"
)

// gitAbove reports whether a directory above dir (a root's canonical
// path: its parent, and so on up to /) holds a .git, a directory or the
// file a worktree or a submodule has. A walk whose root lies below one is
// inside a git repository, where .gitignore and .git/info/exclude apply,
// as rg and fd apply them; outside one they apply only from a directory
// holding .git down (or with --no-require-git). The root itself and the
// directories below it are checked through the door, as the walk lists
// them.
//
// It is the one metadata access outside the door, and why it is allowed:
// an lstat of the fixed name .git in each ancestor of a root — never an
// open, a read or a listing, and never a symlink followed — whose answer
// is one bit that only decides whether ignore files read inside the roots
// apply. Nothing of what lies there is reported or read, so no policy
// rule can be got round through it. Every ancestor up to / is looked at,
// as rg does: a stray .git above the roots (say /tmp/.git) makes every
// root below it a repository's inside.
func gitAbove(dir string) bool {
	for d := filepath.Clean(dir); d != filepath.Dir(d); {
		d = filepath.Dir(d)
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return true
		}
	}
	return false
}
