package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Decision is explain's answer: would OP on PATH be allowed, and which
// rule decides.
type Decision struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Access  string `json:"access"`
	Root    string `json:"root,omitempty"`
	Real    string `json:"resolved,omitempty"`
	// Actions (explain patch only): each kind of change a patch makes,
	// the commands it needs besides patch, and which the policy has off.
	Actions []PatchAction `json:"actions,omitempty"`
}

// Explain runs the checks a real call of operation name on p would run,
// reading and changing nothing, and reports the first rule that refuses:
// the operation's switch (CheckCommand, the check its entry point runs),
// then what its path argument needs (sandbox.Probe, the checks its opening
// runs), held to its size limit. For an operation with two path arguments
// (mv, cp) the one written is checked. Only a malformed name or path is an
// error.
func Explain(ctx context.Context, sb *sandbox.Sandbox, name, p string) (Decision, error) {
	return ExplainIn(ctx, Registry, sb, name, p)
}

// ExplainIn is Explain for the operations of reg (a host that adds its own).
func ExplainIn(ctx context.Context, reg *spec.Registry, sb *sandbox.Sandbox, name, p string) (Decision, error) {
	d, err := explainIn(ctx, reg, sb, name, p)
	if err == nil && name == "patch" {
		explainPatch(&d, reg, sb.Policy())
	}
	return d, err
}

func explainIn(ctx context.Context, reg *spec.Registry, sb *sandbox.Sandbox, name, p string) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	if err := CheckCommandIn(reg, sb.Policy(), "explain"); err != nil {
		return Decision{}, err
	}
	op, ok := reg.Lookup(name)
	if !ok {
		return Decision{}, sandbox.Errorf(sandbox.CodeUsage, p, "unknown command %q (one of: %s)", name, strings.Join(reg.Names(), ", "))
	}
	if err := sandbox.ValidatePath(p); err != nil {
		return Decision{}, err
	}
	access := "read"
	if op.Writes() {
		access = "write"
	}
	d := Decision{Op: name, Path: p, Access: access}
	if err := CheckCommandIn(reg, sb.Policy(), name); err != nil {
		return d.refuse(err), nil
	}
	arg := explained(op)
	if arg == nil {
		d.Allowed, d.Rule, d.Reason = true, string(sandbox.RuleOK), name+" takes no path; the command is on"
		return d, nil
	}
	d.Root = sb.RootOf(p)
	var limit int64
	if op.Limit != "" {
		limit, _ = sb.Limits().Get(op.Limit)
	}
	info, err := sb.Probe(arg.Use, p, limit, op.Limit)
	if err != nil {
		return d.refuse(err), nil
	}
	d.Allowed, d.Rule, d.Real = true, string(sandbox.RuleOK), info.Abs
	d.Reason = fmt.Sprintf("%s may %s %s", name, access, p)
	if arg.Use == spec.Look && info.Abs == "" {
		d.Reason = p + " does not exist: " + name + " reports exists:false"
	}
	return d, nil
}

// explained is the path argument explain checks: the one written, else
// the first. patch takes its paths in its text: PATH is checked as one
// the patch writes.
func explained(op *spec.Op) *spec.Arg {
	if op.Name == "patch" {
		return &spec.Arg{Name: "path", Use: spec.Change}
	}
	var first *spec.Arg
	for i := range op.Args {
		a := &op.Args[i]
		if a.Use == spec.Change || a.Use == spec.Entry || a.Use == spec.Make {
			return a
		}
		if a.Use != spec.NotPath && first == nil {
			first = a
		}
	}
	return first
}

func (d Decision) refuse(err error) Decision {
	e := sandbox.AsError(err)
	d.Allowed, d.Rule, d.Reason = false, string(e.Rule), e.Msg
	if e.Rule == "" {
		d.Rule = string(e.Code)
	}
	return d
}
