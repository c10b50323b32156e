// What grep and find share about walking a tree: the walk's options, the
// flags that set them, and the note on an empty walk.

package ops

import (
	"fmt"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// walkOptions are the sandbox walk's options for grep's and find's flags.
func walkOptions(hidden, noIgnore, noRequireGit, follow bool, maxDepth int) sandbox.WalkOptions {
	return sandbox.WalkOptions{Hidden: hidden, NoIgnore: noIgnore, NoRequireGit: noRequireGit, Follow: follow, MaxDepth: maxDepth}
}

// ignoredNote is what the text form says on stderr when ignore files left
// out everything the walk of dir met (sandbox.WalkSkipped.AllIgnored), so
// an empty answer says why: a tree whose .gitignore is "/*" inside a
// repository, or with --no-require-git. verb: what --no-ignore does
// ("lists", "searches").
func ignoredNote(dir string, sk sandbox.WalkSkipped, verb string) string {
	what := fmt.Sprintf("all %d entries", sk.Ignored)
	if sk.Ignored == 1 {
		what = "the 1 entry"
	}
	hidden := ""
	if sk.Hidden > 0 {
		hidden = fmt.Sprintf(" (and %d hidden)", sk.Hidden)
	}
	return fmt.Sprintf("ignore rules left out %s met in %s%s; --no-ignore %s them", what, dir, hidden, verb)
}

// The walk flags grep and find both take, beside --hidden, --no-ignore
// and -L.
var (
	noRequireGitOption = spec.Option{Name: "no-require-git", Type: spec.Bool,
		Help: "apply .gitignore outside a git repository too (by default .gitignore and .git/info/exclude apply only inside one; .ignore applies everywhere), as rg and fd"}
	typeNotOption = spec.Option{Name: "type-not", Short: "T", Type: spec.Strings, Meta: "NAME", Values: typeNames(),
		Help: "leave out files of this type, by rg's type names (repeatable; --type-list lists them)"}
	typeListOption = spec.Option{Name: "type-list", Type: spec.Bool, CLIOnly: true,
		Help: "list the file type names -t and -T take, with their globs, as rg --type-list, and stop"}
)
