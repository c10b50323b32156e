//go:build !linux

package sandbox

import "github.com/fsbox/fsbox/pkg/fserr"

// Restrict has no kernel wall to raise on this platform.
func (s *Sandbox) Restrict() error {
	mode := s.policy.Sandbox.Landlock
	if mode == "required" {
		return fserr.Errorf(fserr.CodeConfig, s.policy.Source, `landlock = "required", but Landlock exists only on Linux`)
	}
	s.landlock = LandlockStatus{Mode: mode, Reason: "Landlock exists only on Linux"}
	return nil
}
