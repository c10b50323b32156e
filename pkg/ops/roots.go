package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var rootsOp = &spec.Op{
	Name: "roots", Class: spec.Meta, Result: RootsResult{}, Journal: true,
	Summary:  "show the policy in force: workdir, read roots, commands, limits",
	Help:     "Prints the policy this call runs under: the writable workdir, the read roots, where the policy came from, the commands it switches on and off, its limits and path rules, the named rule sets in force (rule_sets), the roots removed, moved or re-created since a long-running server opened them (gone_roots: every access below one is not_found until the server restarts), its preset and whether changes must name what they replace (require_precondition), whether Landlock holds, and which of the platform's guarantees hold (descriptor_path_check, dir_lock, no_follow, no_replace_rename) and which the policy requires ([sandbox] require, all four by default: fsbox refuses to run, with config, where a required one is missing).",
	Examples: []spec.Example{{Cmd: "roots --format text", Says: "the workdir, read roots and commands, one per line"}},
	Text:     "tab-separated lines: workdir, gone_root (a root removed since the server started), read_root (one per root), config, audit_log, commands, rule_sets, preset, require_precondition, landlock, guarantees, require, journal",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, _ *spec.Input) (spec.Result, error) {
		return Roots(ctx, sb)
	},
}

// RootsResult describes the policy in force.
type RootsResult struct {
	Workdir    string        `json:"workdir"`
	WriteRoots []string      `json:"write_roots"` // more writable roots, canonical
	ReadRoots  []string      `json:"read_roots"`
	Config     *string       `json:"config"`
	AuditLog   *string       `json:"audit_log"` // the [audit] log, null without one
	Commands   []string      `json:"commands"`
	Disabled   []string      `json:"disabled"`
	Limits     policy.Limits `json:"limits"`
	Paths      policy.Paths  `json:"paths"`
	// RuleSets are the named built-in rule sets in force (agent_config,
	// secrets), Preset the policy's preset ("" for none), and
	// RequirePrecondition whether every change must name what it
	// replaces: the values in force, after the preset filled them.
	RuleSets            []string               `json:"rule_sets"`
	Preset              string                 `json:"preset"`
	RequirePrecondition bool                   `json:"require_precondition"`
	Landlock            sandbox.LandlockStatus `json:"landlock"`
	// Guarantees: which platform-dependent defences hold here, and
	// Require, which of them the policy insists on (fsbox refuses to run
	// where one of those is missing).
	Guarantees policy.Guarantees     `json:"guarantees"`
	Require    []string              `json:"require"`
	Journal    sandbox.JournalStatus `json:"journal"` // where the workdir's journal is, or why there is none
	// GoneRoots are the roots removed, moved or replaced since the
	// sandbox opened them (a long-running server): every access below
	// one is not_found until the server is restarted. Left out while
	// every root is there.
	GoneRoots []sandbox.GoneRoot `json:"gone_roots,omitempty"`
	// Roots says of each root what it is made of (kind posix or s3) and
	// what holds it besides fsbox's checks (second_wall).
	Roots []sandbox.RootKind `json:"roots"`
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
	res.RuleSets, res.Preset, res.RequirePrecondition = p.RuleSetsInForce(), p.Preset, p.Write.RequirePrecondition
	res.Landlock = sb.Landlock()
	res.Guarantees = policy.PlatformGuarantees()
	res.Require = append([]string{}, p.Sandbox.Require...)
	res.Journal = sb.Journal()
	res.GoneRoots = sb.GoneRoots()
	res.Roots = sb.RootKinds()
	return res, nil
}

// Outcome: a whole result.
func (r RootsResult) Outcome() spec.Outcome { return spec.Outcome{} }

// Text is one "key<TAB>value" line per part of the policy (paths are
// names: one a line).
func (r RootsResult) Text(w spec.TextWriter) error {
	name := w.Name
	fmt.Fprintf(w, "workdir\t%s\n", name(r.Workdir))
	for _, g := range r.GoneRoots {
		fmt.Fprintf(w, "gone_root\t%s\t%s since the server started: restart it\n", name(g.Root), g.State)
	}
	for _, d := range r.WriteRoots {
		fmt.Fprintf(w, "write_root\t%s\n", name(d))
	}
	for _, d := range r.ReadRoots {
		fmt.Fprintf(w, "read_root\t%s\n", name(d))
	}
	cfg := "(built-in default)"
	if r.Config != nil {
		cfg = name(*r.Config)
	}
	fmt.Fprintf(w, "config\t%s\n", cfg)
	if r.AuditLog != nil {
		fmt.Fprintf(w, "audit_log\t%s\n", name(*r.AuditLog))
	}
	fmt.Fprintf(w, "commands\t%s\n", strings.Join(r.Commands, " "))
	fmt.Fprintf(w, "rule_sets\t%s\n", strings.Join(r.RuleSets, " "))
	preset := "(none)"
	if r.Preset != "" {
		preset = r.Preset
	}
	fmt.Fprintf(w, "preset\t%s\n", preset)
	fmt.Fprintf(w, "require_precondition\t%v\n", r.RequirePrecondition)
	fmt.Fprintf(w, "landlock\t%s (enforced: %v)\n", r.Landlock.Mode, r.Landlock.Enforced)
	g := r.Guarantees
	fmt.Fprintf(w, "guarantees\tdescriptor_path_check=%v dir_lock=%v no_follow=%v no_replace_rename=%v\n",
		g.DescriptorPathCheck, g.DirLock, g.NoFollow, g.NoReplaceRename)
	fmt.Fprintf(w, "require\t%s\n", strings.Join(r.Require, " "))
	for _, k := range r.Roots {
		if k.Kind != "posix" { // a line only for a root that is not a directory
			fmt.Fprintf(w, "root_kind\t%s\t%s\tsecond_wall=%s\n", name(k.Root), k.Kind, k.SecondWall)
		}
	}
	if !r.Journal.Enabled {
		_, err := fmt.Fprintf(w, "journal\toff: %s\n", r.Journal.Reason)
		return err
	}
	fmt.Fprintf(w, "journal\t%s\n", name(r.Journal.Dir))
	for _, jr := range r.Journal.Roots {
		fmt.Fprintf(w, "journal_root\t%s\t%s\n", name(jr.Root), name(jr.Dir))
	}
	for _, is := range r.Journal.Ignored {
		fmt.Fprintf(w, "journal_ignored\t%s\t%s\n", name(is.Dir), is.Reason)
	}
	var err error
	if r.Journal.RecoveryPending > 0 {
		_, err = fmt.Fprintf(w, "recovery_pending\t%d\n", r.Journal.RecoveryPending)
	}
	return err
}
