package policy

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Guarantees says which of the sandbox's platform-dependent defences hold
// on this platform (`fsbox roots` prints it; the README's "What holds
// where" says how each is enforced). Landlock is reported on its own.
type Guarantees struct {
	// DescriptorPathCheck: deny/allow rules are checked on the path of the
	// opened descriptor, as the kernel gives it, so a symlink swapped in
	// mid-call cannot redirect an open (Linux /proc/self/fd, macOS
	// F_GETPATH).
	DescriptorPathCheck bool `json:"descriptor_path_check"`
	// DirLock: a write takes an exclusive lock on its directory, so
	// --expect-sha256's check and the replace are one step (flock).
	DirLock bool `json:"dir_lock"`
	// NoFollow: every open refuses a symlink as its last component and
	// never blocks on a FIFO (O_NOFOLLOW, O_NONBLOCK).
	NoFollow bool `json:"no_follow"`
	// NoReplaceRename: mv without --force, and every rename that must not
	// replace, fails on a name that appeared meanwhile (renameat2
	// RENAME_NOREPLACE, renameatx_np RENAME_EXCL).
	NoReplaceRename bool `json:"no_replace_rename"`
}

// guaranteeNames are the names [sandbox] require takes, in Guarantees'
// order; all of them is the default.
var guaranteeNames = []string{"descriptor_path_check", "dir_lock", "no_follow", "no_replace_rename"}

// GuaranteeNames are the names [sandbox] require takes, all of them the
// default.
func GuaranteeNames() []string { return slices.Clone(guaranteeNames) }

// PlatformGuarantees reports what holds on this platform, now.
func PlatformGuarantees() Guarantees { return platformGuarantees() }

func (g Guarantees) holds(name string) bool {
	switch name {
	case "descriptor_path_check":
		return g.DescriptorPathCheck
	case "dir_lock":
		return g.DirLock
	case "no_follow":
		return g.NoFollow
	case "no_replace_rename":
		return g.NoReplaceRename
	}
	return false
}

// checkRequire refuses a policy whose [sandbox] require names a guarantee
// that is unknown, or that this platform does not give.
func checkRequire(require []string, have Guarantees) error {
	var missing []string
	for _, name := range require {
		if !slices.Contains(guaranteeNames, name) {
			return fmt.Errorf("[sandbox] require: unknown guarantee %q (known: %s)", name, strings.Join(guaranteeNames, ", "))
		}
		if !have.holds(name) && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("this platform (%s/%s) does not give %s, which [sandbox] require asks for (all four by default); "+
			"a policy that accepts the weaker sandbox says so by leaving them out of require (see the README's \"What holds where\")",
			runtime.GOOS, runtime.GOARCH, strings.Join(missing, ", "))
	}
	return nil
}
