package ops

import (
	"context"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// RootsResult describes the policy in force.
type RootsResult struct {
	Workdir    string                 `json:"workdir"`
	WriteRoots []string               `json:"write_roots"` // more writable roots, canonical
	ReadRoots  []string               `json:"read_roots"`
	Config     *string                `json:"config"`
	AuditLog   *string                `json:"audit_log"` // the [audit] log, null without one
	Commands   []string               `json:"commands"`
	Disabled   []string               `json:"disabled"`
	Limits     sandbox.Limits         `json:"limits"`
	Paths      sandbox.Paths          `json:"paths"`
	Landlock   sandbox.LandlockStatus `json:"landlock"`
	// Guarantees: which platform-dependent defences hold here, and
	// Require, which of them the policy insists on (fsbox refuses to run
	// where one of those is missing).
	Guarantees sandbox.Guarantees    `json:"guarantees"`
	Require    []string              `json:"require"`
	Journal    sandbox.JournalStatus `json:"journal"` // where the workdir's journal is, or why there is none
}

// Roots reports the workdir, read roots, policy source, limits, and which
// of the available commands the policy enables or disables (links counts
// as disabled while mkdir or write is: CommandEnabled).
func Roots(ctx context.Context, sb *sandbox.Sandbox) (RootsResult, error) {
	if err := begin(ctx, sb, "roots"); err != nil {
		return RootsResult{}, err
	}
	p := sb.Policy()
	res := RootsResult{Workdir: sb.Workdir(), WriteRoots: sb.WritableRoots()[1:], ReadRoots: sb.ReadRoots(), Limits: p.Limits, Paths: p.Paths,
		Commands: []string{}, Disabled: []string{}}
	if p.Source != "" {
		src := p.Source
		res.Config = &src
	}
	if p.Audit.Log != "" {
		log := p.Audit.Log
		res.AuditLog = &log
	}
	for _, c := range Registry.Names() {
		if CommandEnabled(p, c) {
			res.Commands = append(res.Commands, c)
		} else {
			res.Disabled = append(res.Disabled, c)
		}
	}
	for _, l := range []*[]string{&res.Paths.Deny, &res.Paths.Allow, &res.Paths.WriteDeny, &res.Paths.DenyRegex, &res.Paths.AllowRegex} {
		if *l == nil {
			*l = []string{}
		}
	}
	res.Landlock = sb.Landlock()
	res.Guarantees = sandbox.PlatformGuarantees()
	res.Require = append([]string{}, p.Sandbox.Require...)
	res.Journal = sb.Journal()
	return res, nil
}
