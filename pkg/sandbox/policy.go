package sandbox

import (
	"github.com/fsbox/fsbox/pkg/policy"
)

// The policy's types and loading live in package policy; these names keep
// the sandbox's API as the ops and faces know it.

type (
	Policy        = policy.Policy
	Paths         = policy.Paths
	Limits        = policy.Limits
	SandboxPolicy = policy.SandboxPolicy
	Audit         = policy.Audit
	Journal       = policy.Journal
	Env           = policy.Env
	Guarantees    = policy.Guarantees
)

// DefaultPolicy is the built-in policy for the current directory cwd.
func DefaultPolicy(cwd string) *Policy { return policy.DefaultPolicy(cwd) }

// Load finds and loads the policy (see policy.Load).
func Load(env Env) (*Policy, error) { return policy.Load(env) }

// ServePolicy narrows p to the directories an MCP server is given (see
// policy.ServePolicy).
func ServePolicy(p *Policy, dirs []string) (*Policy, error) { return policy.ServePolicy(p, dirs) }

// ServeDirs is the policy fsbox mcp serves for directories dirs, those
// writable says (after the first, the workdir) as write roots
// (policy.ServeDirs).
func ServeDirs(p *Policy, dirs []string, writable func(int) bool) (*Policy, error) {
	return policy.ServeDirs(p, dirs, writable)
}

// ServePolicyWritable is ServePolicy with every directory writable
// (policy.ServePolicyWritable: the reference MCP profile).
func ServePolicyWritable(p *Policy, dirs []string, all bool) (*Policy, error) {
	return policy.ServePolicyWritable(p, dirs, all)
}

// AgentServed is the built-in default as fsbox-mcp serves it without a
// policy: under the agent preset (see policy.AgentServed).
func AgentServed(p *Policy) *Policy { return policy.AgentServed(p) }

// ForReferenceProfile is p as the reference MCP profile serves it (see
// policy.ForReferenceProfile): a config error when p itself requires
// preconditions.
func ForReferenceProfile(p *Policy) (*Policy, error) {
	q, err := policy.ForReferenceProfile(p)
	if err != nil {
		return nil, Errorf(CodeConfig, p.Source, "%s: %v", p.Source, err)
	}
	return q, nil
}

// StateDir is fsbox's state directory in env (see policy.StateDir).
func StateDir(env Env) string { return policy.StateDir(env) }

// PlatformGuarantees reports what holds on this platform, now.
func PlatformGuarantees() Guarantees { return policy.PlatformGuarantees() }

func within(p, dir string) bool                    { return policy.Within(p, dir) }
func canonical(p string) string                    { return policy.Canonical(p) }
func reach(abs string) []string                    { return policy.Reach(abs) }
func reachesInto(abs string, dirs []string) string { return policy.ReachesInto(abs, dirs) }

// Access is what an operation does to the paths it is given.
type Access int

const (
	AccessRead  Access = iota // read content, list, stat
	AccessWrite               // create, change or remove
)

func (a Access) String() string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// LandlockStatus reports the kernel wall (see Restrict).
type LandlockStatus struct {
	Mode     string `json:"mode"`
	Enforced bool   `json:"enforced"`
	ABI      int    `json:"abi"`
	Reason   string `json:"reason,omitempty"`
}
