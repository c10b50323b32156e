package sandbox

import "github.com/fsbox/fsbox/pkg/fserr"

// inSet is the denial to, restated from from, naming the rule set from
// names.
func inSet(from, to *fserr.Error) *fserr.Error {
	to.Set = from.Set
	return to
}
