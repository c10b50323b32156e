package policy

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Which policy fsbox trusts: a policy file is refused when it lies in a
// place fsbox writes or could have written (a writable root of the
// policy that would otherwise apply, a writable root of the file itself,
// the current directory, fsbox's state directories), compared by path
// and by identity: a bind mount gives a directory a second name, which
// no path comparison sees. (A hard link gives the file itself a second
// name: readPolicyFile refuses a policy file with more than one.)

// place is a directory a policy file must not lie in, and what it is
// (for the message).
type place struct {
	dir, what string
	// fallback: what is a policy that applies without the call's policy
	// file (a refusal says so, naming that setting).
	fallback bool
}

// policyNames are the names under which the policy file p was reached
// and can be reached: every place the name passes through (Reach), its
// canonical path, the name's directory resolved, and the same file
// under every other mount that shows it (mountAliases); and the
// directories above any of these, for identity.
type policyNames struct {
	paths []string
	dirs  []namedDir
}

// aliasesOf is mountAliases (a test leaves the mount table out).
var aliasesOf = mountAliases

type namedDir struct {
	path string
	fi   fs.FileInfo
}

func namesOf(file string, p *Policy) *policyNames {
	n := &policyNames{paths: append(Reach(file), p.Source, p.Link)}
	n.paths = append(n.paths, aliasesOf(p.Source)...)
	seen := map[string]bool{}
	for _, r := range n.paths {
		if r == "" {
			continue
		}
		for d := filepath.Dir(r); !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			// The directories above the policy file, before any sandbox
			// exists: their identities, nothing is opened.
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				n.dirs = append(n.dirs, namedDir{d, fi})
			}
		}
	}
	return n
}

// in reports whether the policy file lies in dir: by path (the name as
// given or canonical, against every name of the file), naming the
// spelling that holds it, or by identity (a directory above the file is
// dir under another name), naming that directory in alias.
func (n *policyNames) in(dir string) (inside bool, spelled, alias string) {
	for _, d := range []string{filepath.Clean(dir), Canonical(dir)} {
		for _, r := range n.paths {
			if Within(r, d) {
				return true, d, ""
			}
		}
	}
	// The place's identity, read before any sandbox exists.
	fi, err := os.Stat(dir)
	if err != nil {
		return false, "", ""
	}
	for _, d := range n.dirs {
		if os.SameFile(fi, d.fi) {
			return true, Canonical(dir), d.path
		}
	}
	return false, "", ""
}

// refuseIn is the first of places the policy file lies in, as refusal
// words it (dir: the place as spelled where it holds the file), or nil.
func (n *policyNames) refuseIn(places []place, refusal func(pl place, dir, alias string) error) error {
	for _, pl := range places {
		if pl.dir == "" {
			continue
		}
		if ok, dir, alias := n.in(pl.dir); ok {
			return refusal(pl, dir, alias)
		}
	}
	return nil
}

// underAnotherName is the part of a refusal that says how a directory
// was found to hold the policy file when its paths do not show it.
func underAnotherName(alias string) string {
	if alias == "" {
		return ""
	}
	return " under another name: " + alias + " is the same directory, by device and inode (a bind mount)"
}

// refuseOwnRoots refuses a policy file that lies in one of its own
// writable roots, by path or identity (New refuses one whose canonical
// path lies there, for a policy made by hand).
func refuseOwnRoots(p *Policy, file string, names *policyNames) error {
	places := []place{{dir: p.Workdir, what: "workdir"}}
	for _, w := range p.WriteRoots {
		places = append(places, place{dir: w, what: "write root"})
	}
	return names.refuseIn(places, func(pl place, dir, alias string) error {
		return fserr.Errorf(fserr.CodeConfig, file, "the policy file %s lies inside its own %s %s%s, where the sandboxed side could rewrite it", file, pl.what, dir, underAnotherName(alias))
	})
}

// refuseCwd refuses a policy file that lies in the current directory
// (the built-in default's workdir), by every name and by identity.
func refuseCwd(file, cwd string, names *policyNames) error {
	return names.refuseIn([]place{{dir: cwd, what: "the current directory"}}, writableRefusal(file))
}

// writableRefusal words the refusal of the policy file file for lying in
// a place fsbox writes or could have written.
func writableRefusal(file string) func(pl place, dir, alias string) error {
	const why = ": fsbox writes or could have written there, so a policy there is never loaded, whatever workdir it names; keep policies outside every directory fsbox writes"
	return func(pl place, dir, alias string) error {
		if pl.fallback {
			return fserr.Spellf(fserr.CodeConfig, file, "the policy file %s lies inside %s (%s that applies without %s)%s"+why, file, dir, pl.what, fserr.SettingConfig, underAnotherName(alias))
		}
		return fserr.Errorf(fserr.CodeConfig, file, "the policy file %s lies inside %s (%s)%s"+why, file, dir, pl.what, underAnotherName(alias))
	}
}

// LiesInByID returns the root of roots (directories) that p lies in by
// identity (st_dev, st_ino), whatever the paths say: one that is p's
// directory or an ancestor of it. A bind mount shows one directory under
// two names, so a file reached under another name than a writable root's
// is as writable as one below the root's own path. "" when none. Each
// root and each ancestor of p is stat'ed: they are configuration (the
// policy's roots, fsbox's own files), never a command's argument. A root
// that cannot be stat'ed holds nothing by identity (its path still
// counts: compare with Within first).
func LiesInByID(p string, roots []string) string {
	type id struct {
		root string
		fi   os.FileInfo
	}
	var ids []id
	for _, r := range roots {
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			ids = append(ids, id{r, fi})
		}
	}
	if len(ids) == 0 {
		return ""
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			for _, r := range ids {
				if os.SameFile(fi, r.fi) {
					return r.root
				}
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
