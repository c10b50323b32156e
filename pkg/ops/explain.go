package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var explainOp = &spec.Op{
	Name: "explain", Class: spec.Meta, Result: Decision{}, Journal: true,
	Summary: "say whether COMMAND on PATH would be allowed, and which rule decides",
	Help:    "Runs the checks a real call of COMMAND on PATH would run, reading and changing nothing, and reports the first rule that refuses (a pattern of a built-in rule set is reported as default:SET, such as default:secrets or default:agent_config; the error the call itself gives keeps rule deny or write_deny). For a command with two paths (mv, cp) it checks the one written. For patch, PATH is checked as a file a patch writes, and actions lists each kind of change a patch makes (update, add, delete, move, move_and_update) with the commands it needs and those the policy switches off. For undo, PATH is a change id: the answer is what undo of it would say (denied when the policy may not write one of its paths now). For purge (no PATH), how many changes it would remove and keep.",
	Args: []spec.Arg{
		{Name: "command", Meta: "COMMAND", Help: "the command to ask about", Complete: spec.CompleteCommands},
		{Name: "path", Meta: "PATH", Help: "the path the command would be given (undo: a change id; purge, roots and other commands without a path: none)", Optional: true, Complete: spec.CompleteFiles},
	},
	Examples: []spec.Example{{Cmd: "explain read /etc/passwd --format text", Says: "denied, rule root: the path lies outside every root"}},
	JSONNote: "exit 0 whatever the verdict",
	Text:     "one line: allowed|denied, the command, the path, the reason and the rule",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		reg := Registry
		if in.Reg != nil {
			reg = in.Reg // a face serving more operations asks about them
		}
		return ExplainIn(ctx, reg, sb, in.String("command"), in.String("path"))
	},
}

// Decision is explain's answer: would OP on PATH be allowed, and which
// rule decides.
type Decision struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	Allowed bool   `json:"allowed"`
	// Rule is the rule code (deny, write_deny, root, ...), or
	// default:SET when a pattern of a built-in rule set decided.
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	Access string `json:"access"`
	Root   string `json:"root,omitempty"`
	Real   string `json:"resolved,omitempty"`
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
	if err == nil && d.Allowed && (name == "undo" || name == "purge") {
		err = explainJournal(&d, sb, name, p)
	}
	return d, err
}

// explainJournal says what undo of the change p, or purge, would do
// under the policy in force, changing nothing: undo's answer is the
// refusal undo would give (a path the policy may not write now, a change
// recorded without its prior contents, no such change), purge's how many
// changes it would remove and keep.
func explainJournal(d *Decision, sb *sandbox.Sandbox, name, p string) error {
	if name == "purge" {
		removed, kept, err := sb.PurgeJournalPreview()
		if err != nil {
			*d = d.refuse(err)
			return nil
		}
		d.Reason = fmt.Sprintf("purge would remove %d changes (every path of each is one this policy may write) and keep %d", removed, kept)
		return nil
	}
	if p == "" {
		return usagef("", "explain undo needs a CHANGE_ID, as history shows it")
	}
	c, err := sb.ChangeByID(p)
	if err == nil {
		err = mayUndo(sb, c)
	}
	if e := fserr.AsError(err); err != nil && e.Code == fserr.CodeUsage {
		return err
	}
	if err != nil {
		*d = d.refuse(err)
		return nil
	}
	var shown []string
	hidden := 0
	if v, ok := visibleChange(sb, c, &hidden); ok {
		for _, pc := range v.Paths {
			shown = append(shown, pc.Path)
		}
		for _, m := range v.Moved {
			shown = append(shown, m.From+" -> "+m.To)
		}
	}
	d.Reason = fmt.Sprintf("undo may take back change %s: this policy may write every path of it (%s)", c.ID, strings.Join(shown, ", "))
	return nil
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
		return Decision{}, fserr.Errorf(fserr.CodeUsage, p, "unknown command %q (one of: %s)", name, strings.Join(reg.Names(), ", "))
	}
	arg := explained(op)
	if name == "undo" {
		arg = nil // its argument is a change id (explainJournal)
	}
	if p == "" && arg != nil {
		return Decision{}, usagef("", "explain %s needs the PATH %s would be given", name, name)
	}
	if err := sandbox.ValidatePath(p); err != nil && p != "" {
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
	if arg == nil {
		d.Allowed, d.Rule, d.Reason = true, string(fserr.RuleOK), name+" takes no path; the command is on"
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
	d.Allowed, d.Rule, d.Real = true, string(fserr.RuleOK), info.Abs
	d.Reason = fmt.Sprintf("%s may %s %s", name, access, p)
	if arg.Use == sandbox.NeedLook && info.Abs == "" {
		d.Reason = p + " does not exist: " + name + " reports exists:false"
	}
	return d, nil
}

// explained is the path argument explain checks: the one written, else
// the first. patch takes its paths in its text: PATH is checked as one
// the patch writes.
func explained(op *spec.Op) *spec.Arg {
	if op.Name == "patch" {
		return &spec.Arg{Name: "path", Use: sandbox.NeedWrite}
	}
	var first *spec.Arg
	for i := range op.Args {
		a := &op.Args[i]
		if a.Use == sandbox.NeedWrite || a.Use == sandbox.NeedEntry || a.Use == sandbox.NeedMake {
			return a
		}
		if a.Use != sandbox.NeedNone && first == nil {
			first = a
		}
	}
	return first
}

func (d Decision) refuse(err error) Decision {
	e := fserr.AsError(err)
	d.Allowed, d.Rule, d.Reason = false, string(e.Rule), e.Message(nil)
	if e.Rule == "" {
		d.Rule = string(e.Code)
	}
	if e.Set != "" {
		d.Rule = "default:" + e.Set // a built-in rule set's glob decided
	}
	return d
}

// Outcome: a whole result (a denial is an answer, not a failure).
func (d Decision) Outcome() spec.Outcome { return spec.Outcome{} }

// Text is one line: allowed or denied, the command, the path, the reason
// and the rule.
func (d Decision) Text(w spec.TextWriter) error {
	verdict := "allowed"
	if !d.Allowed {
		verdict = "denied"
	}
	_, err := fmt.Fprintf(w, "%s %s %s: %s (rule %s)\n", verdict, d.Op, w.Name(d.Path), w.Name(strings.ReplaceAll(d.Reason, "\n", `\n`)), d.Rule)
	return err
}
