package sandbox

import (
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Restrict asks the kernel (Landlock) to confine this process to the
// policy's roots: read roots read-only, the workdir read-write, nothing
// else. It is a second wall behind the checks in this package: even a bug
// in them cannot reach outside. Mode "off" skips it; "best-effort" applies
// what the kernel offers; "required" fails (config) where it offers none.
// Everything fsbox needs outside the roots must be opened before this.
func (s *Sandbox) Restrict() error {
	mode := s.policy.Sandbox.Landlock
	if mode == "off" {
		s.landlock = LandlockStatus{Mode: mode, Reason: "switched off by the policy"}
		return nil
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if mode == "required" {
			return fserr.Errorf(fserr.CodeConfig, s.policy.Source, `landlock = "required", but this kernel offers no Landlock`)
		}
		s.landlock = LandlockStatus{Mode: mode, Reason: "the kernel offers no Landlock; only the user-space checks guard the roots"}
		return nil
	}
	var rules []landlock.Rule
	var ro []string
	for _, r := range s.roots {
		if !r.writable && !r.url {
			ro = append(ro, r.dir)
		}
	}
	if len(ro) > 0 {
		rules = append(rules, landlock.RODirs(ro...))
	}
	for _, r := range s.roots {
		if r.writable && !r.url {
			rules = append(rules, landlock.RWDirs(r.dir).WithRefer())
		}
	}
	// An object root's client reads a few files after the wall is up
	// (name resolution's, a web identity token): exactly those, read-only,
	// and each also denied through the door (findState).
	if files := s.objectFiles(); len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...).IgnoreIfMissing())
	}
	// The journal must be reachable after the wall goes up: made now
	// (unless the calls only read).
	if err := s.useJournal(); err != nil {
		return err
	}
	if s.jn.mode == journalFull {
		// change's locks reach the writable roots' ancestors, which the
		// wall would hide: their descriptors are opened now.
		if err := s.prepareChanges(); err != nil {
			return err
		}
	}
	for _, j := range s.journals() {
		if j.ob != nil {
			continue // a journal in the store: no file of it to open
		}
		if s.jn.mode == journalFull {
			rules = append(rules, landlock.RWDirs(j.dir).WithRefer()) // a replaced file moves in from its root
		} else {
			rules = append(rules, landlock.RODirs(j.dir))
		}
	}
	cfg := landlock.V7.BestEffort()
	if err := cfg.RestrictPaths(rules...); err != nil {
		if mode == "required" {
			return fserr.Errorf(fserr.CodeConfig, s.policy.Source, "landlock = \"required\", but restricting failed: %v", err)
		}
		s.landlock = LandlockStatus{Mode: mode, ABI: abi, Reason: "restricting failed: " + err.Error()}
		return nil
	}
	s.landlock = LandlockStatus{Mode: mode, Enforced: true, ABI: abi}
	return nil
}
