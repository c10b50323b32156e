package spec

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// StdinPath is the argument that names standard input.
const StdinPath = sandbox.StdinPath

// Input holds the values of one call of an operation, keyed by option and
// argument name, whichever face they came from.
type Input struct {
	// Stdin is where a command-line call's content comes from (write
	// without content); nil in a tool call.
	Stdin io.Reader
	// Sink, when a face sets it, takes a streaming operation's
	// (Op.Streams) items as they come, in the form the face prints,
	// chosen once before the call; nil: the operation collects them into
	// its result. Exact: they go out whole (a text form), not cut at the
	// policy's line limit.
	Sink  *Sink
	Exact bool
	// Cursor is the call's --cursor (a tool call's cursor): where a list
	// result cut before resumes (SPEC §2, Continuation); Form names the
	// face and format the call prints in ("json", "text", "mcp"), which a
	// cursor is bound to with the command, its values and the policy.
	Cursor string
	Form   string
	// Reg is the operations the face serves (explain asks about them);
	// nil: the operations' own registry.
	Reg *Registry
	// Executable, when a face sets it, finds the canonical path of the
	// program serving the call, which links points its links at (the
	// face knows its program; operations find none). nil: the call
	// cannot tell, and links refuses (io).
	Executable func() (string, error)

	op   *Op
	vals map[string]any // bool, int64, string, []string, json.RawMessage
}

// NewInput returns an empty input for op.
func NewInput(op *Op) *Input { return &Input{op: op, vals: map[string]any{}} }

// Values returns the call's values, keyed by option and argument name
// (a copy): what a cursor is bound to.
func (in *Input) Values() map[string]any { return maps.Clone(in.vals) }

// Op returns the operation the input is for.
func (in *Input) Op() *Op { return in.op }

// Set gives name a value; the value's Go type must match the declared
// type (bool, int64, string, []string, json.RawMessage for Objects).
func (in *Input) Set(name string, v any) *Input { in.declared(name); in.vals[name] = v; return in }

// IsSet reports whether name was given.
func (in *Input) IsSet(name string) bool { in.declared(name); _, ok := in.vals[name]; return ok }

// declared panics when name is none of the operation's options and
// arguments: a misspelt name ("ofset") would otherwise read as never
// given. Every face turns the panic into an internal error, and a test
// runs every descriptor's binding.
func (in *Input) declared(name string) {
	if in.op == nil || in.op.Option(name) != nil || in.op.Arg(name) != nil {
		return
	}
	panic(fmt.Sprintf("spec: %s reads %q, which its descriptor does not declare", in.op.Name, name))
}

// Bool returns a boolean option.
func (in *Input) Bool(name string) bool {
	in.declared(name)
	if v, ok := in.vals[name].(bool); ok {
		return v
	}
	return defaultOf[bool](in.op, name)
}

// Int returns an integer option or argument.
func (in *Input) Int(name string) int64 {
	in.declared(name)
	if v, ok := in.vals[name].(int64); ok {
		return v
	}
	return defaultOf[int64](in.op, name)
}

// String returns a string option or argument.
func (in *Input) String(name string) string {
	in.declared(name)
	if v, ok := in.vals[name].(string); ok {
		return v
	}
	return defaultOf[string](in.op, name)
}

// Strings returns a repeatable option or a Many argument.
func (in *Input) Strings(name string) []string {
	in.declared(name)
	v, _ := in.vals[name].([]string)
	return v
}

// Decode unmarshals an Objects option into dst.
func (in *Input) Decode(name string, dst any) error {
	in.declared(name)
	raw, ok := in.vals[name].(json.RawMessage)
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return usage("%s: %v", name, err)
	}
	return nil
}

func defaultOf[T any](op *Op, name string) T {
	var zero T
	if op == nil {
		return zero
	}
	if o := op.Option(name); o != nil && o.Default != nil {
		if v, ok := o.Default.(T); ok {
			return v
		}
	}
	return zero
}

func usage(format string, args ...any) error {
	return fserr.Errorf(fserr.CodeUsage, "", format, args...)
}

// SetArgs gives the positional arguments their names, in the order the
// descriptor lists them: a Many argument takes the rest. Too few or too
// many arguments are a usage error.
func (in *Input) SetArgs(args []string) error {
	op := in.op
	i := 0
	for _, a := range op.Args {
		if slices.ContainsFunc(a.OmitWith, in.IsSet) {
			continue
		}
		if a.CLIOnly {
			if i < len(args) {
				in.vals[a.Name] = args[i]
				i++
			}
			continue
		}
		if a.Many {
			if i < len(args) {
				in.vals[a.Name] = append([]string(nil), args[i:]...)
			} else if a.Stdin && in.Stdin != nil {
				in.vals[a.Name] = []string{StdinPath}
			} else if !a.Optional {
				return usage("usage: %s %s", op.Name, op.Usage())
			}
			i = len(args)
			continue
		}
		if i >= len(args) {
			if a.Stdin && in.Stdin != nil {
				in.vals[a.Name] = StdinPath
				continue
			}
			if !a.Optional {
				return usage("usage: %s %s", op.Name, op.Usage())
			}
			continue
		}
		if a.Stdin && in.Stdin != nil && in.boundsFollow(a, args[i]) {
			// A filter reading a pipe whose first argument is a number
			// (slice 0 2): stdin is the input and the numbers are bounds;
			// ./10 names a file called 10.
			in.vals[a.Name] = StdinPath
			continue
		}
		if a.Flag && in.IsSet(a.Name) {
			return usage("give %s either as an argument or as --%s, not both", a.Name, a.Name)
		}
		if err := in.setText(a.Name, a.Type, args[i]); err != nil {
			return err
		}
		i++
	}
	if i < len(args) {
		if op.Usage() == "" {
			return usage("%s takes no arguments, got %q", op.Name, args[i])
		}
		return usage("usage: %s %s", op.Name, op.Usage())
	}
	return nil
}

// boundsFollow reports whether s, given where the path argument a goes,
// is instead the first of the integer arguments that follow a.
func (in *Input) boundsFollow(a Arg, s string) bool {
	i := slices.IndexFunc(in.op.Args, func(b Arg) bool { return b.Name == a.Name })
	if i < 0 || i+1 >= len(in.op.Args) || in.op.Args[i+1].Type != Int {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// setText sets a value given as text (an argument or a flag's value).
func (in *Input) setText(name string, t Type, s string) error {
	if t == Int {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return usage("%s must be an integer, got %q", name, s)
		}
		in.vals[name] = v
		return nil
	}
	in.vals[name] = s
	return nil
}

// SetJSON sets an option from JSON text, as a tool call gives it (an
// Objects option's text on the command line too).
func (in *Input) SetJSON(name string, raw json.RawMessage) error {
	o := in.op.Option(name)
	if o == nil {
		return usage("%s has no option %q", in.op.Name, name)
	}
	return in.setJSON(name, o.Type, raw)
}

// SetFlagText sets an Int argument that was given as a flag, as text.
func (in *Input) SetFlagText(name, s string) error {
	t := String
	if a := in.op.Arg(name); a != nil {
		t = a.Type
	}
	return in.setText(name, t, s)
}

// Check validates the values against the descriptor: enums, bounds, and
// what an Objects option's text must be. Messages name the option, not a
// flag spelling: every face shares them.
func (in *Input) Check() error {
	for _, o := range in.op.Options {
		v, ok := in.vals[o.Name]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case int64:
			if o.Min != nil && x < *o.Min {
				return usage("%s must be %d or more, got %d", o.Name, *o.Min, x)
			}
			if o.Max != nil && x > *o.Max {
				return usage("%s must be %d or less, got %d", o.Name, *o.Max, x)
			}
		case string:
			if len(o.Enum) > 0 && !slices.Contains(o.Enum, x) {
				return usage("%s must be one of %s, got %q", o.Name, strings.Join(o.Enum, ", "), x)
			}
		}
	}
	for _, a := range in.op.Args {
		if s, ok := in.vals[a.Name].(string); ok && len(a.Enum) > 0 && !slices.Contains(a.Enum, s) {
			return usage("%s must be one of %s, got %q", a.Name, strings.Join(a.Enum, ", "), s)
		}
	}
	return nil
}

// FromJSON builds an input from a tool call's arguments: snake_case
// properties, typed as InputSchema says. Unknown properties, wrong types
// and missing required ones are usage errors.
//
// also are the properties the face's tool takes besides the operation's
// own (timeout, cursor, expect), split off before: an unknown property
// is named with the nearest of all of them (UnknownProperty).
func FromJSON(op *Op, raw json.RawMessage, also ...string) (*Input, error) {
	in := NewInput(op)
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, usage("arguments must be a JSON object: %v", err)
		}
	}
	known := map[string]func(json.RawMessage) error{}
	for _, o := range op.Options {
		if o.CLIOnly {
			continue
		}
		o := o
		known[Property(o.Name)] = func(v json.RawMessage) error { return in.setJSON(o.Name, o.Type, v) }
	}
	for _, a := range op.Args {
		if a.CLIOnly {
			continue
		}
		a := a
		t := a.Type
		if a.Many {
			t = Strings
		}
		known[Property(a.Name)] = func(v json.RawMessage) error { return in.setJSON(a.Name, t, v) }
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set, ok := known[k]
		if !ok {
			names := slices.Clone(also)
			for name := range known {
				names = append(names, name)
			}
			return nil, UnknownProperty(op.Name, k, names)
		}
		if err := set(m[k]); err != nil {
			return nil, err
		}
	}
	for _, name := range Required(op) {
		if _, ok := m[name]; !ok {
			return nil, usage("%s needs the property %q", op.Name, name)
		}
	}
	return in, in.Check()
}

// UnknownProperty is the usage error of a property the tool of op does
// not take, naming the nearest one it does (spec.Nearest, as the command
// line names the nearest flag): "grep has no property \"path\"; did you
// mean \"paths\"?".
func UnknownProperty(op, bad string, names []string) error {
	sort.Strings(names) // the same suggestion whatever order they came in
	if best := Nearest(bad, names); best != "" && len(bad) > 1 {
		return usage("%s has no property %q; did you mean %q?", op, bad, best)
	}
	return usage("%s has no property %q (its tool's inputSchema lists its properties)", op, bad)
}

func (in *Input) setJSON(name string, t Type, raw json.RawMessage) error {
	bad := func(want string) error { return usage("%s must be %s, got %s", Property(name), want, clip(raw)) }
	switch t {
	case Bool:
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			return bad("a boolean")
		}
		in.vals[name] = v
	case Int:
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return bad("an integer")
		}
		in.vals[name] = int64(f)
	case Strings:
		var v []string
		if json.Unmarshal(raw, &v) != nil {
			return bad("an array of strings")
		}
		in.vals[name] = v
	case Objects:
		var v []map[string]any
		if json.Unmarshal(raw, &v) != nil {
			return bad("an array of objects")
		}
		in.vals[name] = json.RawMessage(append([]byte(nil), raw...))
	default:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return bad("a string")
		}
		in.vals[name] = v
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s…", b[:40])
	}
	return string(b)
}
