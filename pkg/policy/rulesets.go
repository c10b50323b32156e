package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Named rule sets (SPEC §4, [agent]): built-in path rules a policy gets
// by name. They are compiled into the sandbox's deny and write_deny lists
// beside [paths]'s own rules and matched by the same code (case folded,
// on the path and each of its ancestors, relative to every root that
// holds the path); only defaults_off, by a set's exact name, takes one
// away. Nothing in a policy file widens a set.

// SetRule is one glob of a named rule set. Unless lists globs on the name
// of the path component the glob matched: a match whose name matches one
// of them is not one (".env.example" is not denied by "**/.env.*").
type SetRule struct {
	Glob   string
	Unless []string
}

// RuleSet is a named built-in rule set.
type RuleSet struct {
	Name      string
	Deny      []SetRule // never read nor written
	WriteDeny []SetRule // readable, never written
}

// The names of the built-in rule sets.
const (
	SetAgentConfig = "agent_config"
	SetSecrets     = "secrets"
)

// PresetAgent is the one preset: preset = "agent".
const PresetAgent = "agent"

func globs(gs ...string) []SetRule {
	out := make([]SetRule, len(gs))
	for i, g := range gs {
		out[i] = SetRule{Glob: g}
	}
	return out
}

// builtinSets are the named rule sets, in the order roots lists them.
var builtinSets = []RuleSet{
	{
		Name: SetAgentConfig,
		WriteDeny: globs("**/.git/**", "**/.claude/**", "**/.codex/**", "**/.cursor/**",
			"**/.gemini/**", "**/.agents/**", "**/.windsurf/**"),
	},
	{
		Name: SetSecrets,
		Deny: append([]SetRule{
			{Glob: "**/.env"},
			{Glob: "**/.env.*", Unless: []string{"*.example", "*.sample", "*.template"}},
		}, globs("**/*.pem", "**/*.key", "**/id_rsa*", "**/id_ed25519*", "**/id_ecdsa*",
			"**/.ssh/**", "**/.aws/credentials", "**/.config/gcloud/**", "**/.azure/**",
			"**/.docker/config.json", "**/.npmrc", "**/.pypirc", "**/.netrc", "**/.git-credentials")...),
	},
}

// RuleSetNames are the names defaults_off may give.
func RuleSetNames() []string {
	names := make([]string, len(builtinSets))
	for i, s := range builtinSets {
		names[i] = s.Name
	}
	return names
}

// BuiltinRuleSet returns the named rule set.
func BuiltinRuleSet(name string) (RuleSet, bool) {
	for _, s := range builtinSets {
		if s.Name == name {
			return s, true
		}
	}
	return RuleSet{}, false
}

// RuleSets are the named rule sets in force under p: agent_config
// always, secrets under the agent preset, less those defaults_off names.
func (p *Policy) RuleSets() []RuleSet {
	var out []RuleSet
	for _, s := range builtinSets {
		if s.Name == SetSecrets && p.Preset != PresetAgent {
			continue
		}
		if slices.Contains(p.DefaultsOff, s.Name) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// RuleSetsInForce are the names of RuleSets.
func (p *Policy) RuleSetsInForce() []string {
	out := []string{}
	for _, s := range p.RuleSets() {
		out = append(out, s.Name)
	}
	return out
}

// checkNamed refuses an unknown preset or rule set name: a typo in a
// security policy is never ignored.
func (p *Policy) checkNamed() error {
	switch p.Preset {
	case "", PresetAgent:
	default:
		return fmt.Errorf(`preset must be "agent" or left out, got %q`, p.Preset)
	}
	for _, n := range p.DefaultsOff {
		if _, ok := BuiltinRuleSet(n); !ok {
			return fmt.Errorf("defaults_off: unknown rule set %q (the built-in rule sets are %s)", n, strings.Join(quoted(RuleSetNames()), ", "))
		}
	}
	return nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// The agent preset's values, for the keys a policy leaves out.
const (
	AgentMaxResults     = 2000
	AgentMaxLineBytes   = 2000
	AgentMaxResultBytes = 65536
	AgentMaxCallSeconds = 30
)

// ApplyPreset fills the keys a policy leaves out (defined reports the
// keys its file sets, as toml.MetaData.IsDefined does; nil: none, the
// built-in default) with the values of its preset. Under preset =
// "agent": the secrets rule set (RuleSets), [write] require_precondition
// = true, and the agent limits. Without a preset it does nothing.
func (p *Policy) ApplyPreset(defined func(key ...string) bool) {
	if p.Preset != PresetAgent {
		return
	}
	if defined == nil {
		defined = func(...string) bool { return false }
	}
	for _, l := range []struct {
		key   string
		v     *int64
		agent int64
	}{{"max_results", &p.Limits.MaxResults, AgentMaxResults},
		{"max_line_bytes", &p.Limits.MaxLineBytes, AgentMaxLineBytes},
		{"max_result_bytes", &p.Limits.MaxResultBytes, AgentMaxResultBytes},
		{"max_call_seconds", &p.Limits.MaxCallSeconds, AgentMaxCallSeconds}} {
		if !defined("limits", l.key) {
			*l.v = l.agent
		}
	}
	if !defined("store", "max_requests") {
		p.Store.MaxRequests = AgentMaxRequests
	}
	if !defined("write", "require_precondition") {
		p.Write.RequirePrecondition = true
		p.PreconditionByPreset = true
	}
}

// AgentServed is the built-in default p as fsbox-mcp serves it without a
// policy: under the agent preset, every key filled by it.
func AgentServed(p *Policy) *Policy {
	q := *p
	q.Preset = PresetAgent
	q.ApplyPreset(nil)
	return &q
}

// ForReferenceProfile is p as the reference MCP profile serves it: that
// profile never requires preconditions, so the agent preset's
// require_precondition is dropped, and a policy that sets
// require_precondition = true itself cannot be served by it (a config
// error).
//
// The directories it serves (Policy.Serve) are served whole: the
// sandbox refuses one that a deny or write_deny rule matches or holds.
func ForReferenceProfile(p *Policy) (*Policy, error) {
	if p.Serve != nil && !p.Serve.Whole {
		q, b := *p, *p.Serve
		b.Whole = true
		q.Serve = &b
		p = &q
	}
	if !p.Write.RequirePrecondition {
		return p, nil
	}
	if !p.PreconditionByPreset {
		at := ""
		if p.PreconditionLine > 0 {
			at = fmt.Sprintf("line %d: ", p.PreconditionLine)
		}
		return nil, fserr.Errorf(fserr.CodeConfig, p.Source, "%s: %s[write] require_precondition = true, and the reference profile never requires preconditions (its tools have no way to name what a change replaces): serve this policy with the native profile", p.Source, at)
	}
	q := *p
	q.Write.RequirePrecondition, q.PreconditionByPreset = false, false
	return &q, nil
}
