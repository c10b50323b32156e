// Package spec describes fsbox's operations: one Op value per operation
// says its name, help, examples, access class, path arguments (and what
// access each needs), options, result type and text form. Every face of
// an operation is generated from that one value: the command line's flags
// and --help, the man pages, the shell completions, the tool schemas, the
// policy's [commands] table, explain, and the README's command table.
//
// The package holds the types and the generators that need nothing but a
// descriptor; the descriptors of fsbox's own operations live beside the
// code that runs them, in package ops (ops.Registry).
package spec

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Class is an operation's access class.
type Class string

const (
	Read        Class = "read"        // reads content, lists, stats
	Write       Class = "write"       // creates in the workdir; replaces nothing
	Destructive Class = "destructive" // may replace or remove what exists in the workdir
	Meta        Class = "meta"        // describes fsbox or its policy; touches no file
)

// Type is the type of an option's or argument's value.
type Type string

const (
	Bool    Type = "boolean"
	Int     Type = "integer"
	String  Type = "string"
	Strings Type = "strings" // repeatable; an array in a tool call
	Objects Type = "objects" // an array of objects (Fields); JSON text on the command line
)

// Complete says what a shell completes for a value.
type Complete string

const (
	CompleteNone     Complete = "none"
	CompleteFiles    Complete = "files"
	CompleteDirs     Complete = "dirs"
	CompleteCommands Complete = "commands"
)

// Option is one named input of an operation.
type Option struct {
	Name    string   // long name, lower-case words joined by '-': "ignore-case"
	Short   string   // one-letter alias ("i"), or ""
	Aliases []string // other long names ("line-number")
	Type    Type
	Meta    string // the value's metavariable in help: "N", "GLOB"
	Default any    // the value when absent (nil: the type's zero)
	// DefaultText replaces Default in help ("no limit", "all").
	DefaultText string
	Unit        string   // "lines", "bytes", "matches"
	Enum        []string // the values allowed
	// Values are words a shell completes for the value, beside Enum's,
	// when the values allowed are not a closed list (find -t: f, d, l
	// and the file type names).
	Values   []string
	Min, Max *int64 // bounds of an integer
	// Narrows names the policy limit the option can only lower.
	Narrows  string
	Help     string
	Complete Complete
	Fields   []Option // the fields of each object of an Objects option
	// CLIOnly options exist on the command line only (a text-form
	// switch, a value read from a file); ToolRequired ones must be in
	// every tool call (a tool call has no stdin to fall back on).
	CLIOnly      bool
	ToolRequired bool
}

// Arg is one positional argument.
type Arg struct {
	Name     string // the tool property: "path", "paths", "pattern"
	Meta     string // how help spells it: "PATH"
	Help     string
	Use      sandbox.Need // what a path argument needs from the sandbox (NeedNone: not a path)
	Type     Type         // String (the default) or Int
	Optional bool
	Many     bool // takes the rest of the arguments (at least one unless Optional)
	Enum     []string
	Complete Complete
	// Flag: the argument may also be given as --NAME (slice's --start).
	Flag bool
	// Stdin: when the argument is left out and the input has a Stdin
	// (a command line whose stdin is a pipe or a file: ripgrep's rule),
	// it is "-", standard input. A tool call has no stdin: there the
	// argument keeps its own rule (required, or its default).
	Stdin bool
	// OmitWith: the argument is not taken when one of these options is
	// given (grep's PATTERN with -e or -f).
	OmitWith []string
	CLIOnly  bool // write's "-" (stdin): no tool call has stdin
}

// Example is one command line of the help, with what it does.
type Example struct {
	Cmd  string // without the leading "fsbox "
	Says string
	// Serves: the example starts a server and does not return, so the
	// test that runs every example leaves it out.
	Serves bool
	// Bucket: the example needs a writable object root (s3://), which
	// the local fixture of the test that runs every example has not: it
	// leaves it out (the object-store tests run it on a bucket).
	Bucket bool
	// After, when set, is a command (without "fsbox ") the example
	// follows: the test runs it first, in the same workdir (undo needs a
	// change to take back).
	After string
}

// Op describes one operation.
type Op struct {
	Name     string
	Summary  string // one line, lower-case start, no final period
	Help     string // a paragraph or more
	Examples []Example
	Class    Class
	Off      bool     // off in the built-in default policy
	Needs    []string // operations that must be on too (links needs mkdir and write)
	Args     []Arg
	Options  []Option
	// Result is a zero value of the result type (its JSON shape).
	Result any
	// JSONNote says what the result's JSON does not (exit status, modes).
	JSONNote string
	Text     string // what --format text prints
	// Limit names the policy limit a path argument's size is held to
	// before it is opened ("max_read_bytes").
	Limit      string
	Idempotent bool
	// Journal: the operation reads the workdir's journal even though it
	// changes no file (history), so the journal must be open before
	// Landlock goes up.
	Journal bool
	// Streams: the operation sends its items to the input's Sink as they
	// come, when a face sets one (see Input.Sink); a face that sets none
	// gets them collected in the result.
	Streams bool
	// StreamsUnless names options with which the operation does not
	// stream: its result is printed whole (grep --type-list).
	StreamsUnless []string
	// Pages: the result is a list a limit may cut, and the call takes a
	// cursor (--cursor, a tool's cursor) to resume after the cut (SPEC
	// §2, Continuation).
	Pages bool
	// NoMatch: the operation finds things, and a call that finds nothing
	// exits 1 (grep); its help and man page list exit 1, the others' do
	// not.
	NoMatch bool
	// NoTool: a documentation command for people, not a tool for agents.
	NoTool bool
	// NoPolicy: runs without a policy (documentation output).
	NoPolicy bool
	// Paints: the text form passes every name through the TextWriter's
	// Name and Typed (or Paint) and prints nothing else a file could
	// choose: a face may colour its names (as ls --color) and send its
	// lines past its escaper.
	Paints bool
	// Run performs the operation on the input; the command line, tool
	// hosts and tests call it alike. Nil for the documentation commands
	// that only the command line renders.
	Run func(ctx context.Context, sb *sandbox.Sandbox, in *Input) (Result, error)
}

// StreamsWith reports whether a call of the operation with this input
// streams its items (Streams, and none of StreamsUnless given).
func (o *Op) StreamsWith(in *Input) bool {
	if !o.Streams {
		return false
	}
	for _, name := range o.StreamsUnless {
		if in.IsSet(name) {
			return false
		}
	}
	return true
}

// ReadOnly reports whether the operation changes nothing.
func (o *Op) ReadOnly() bool { return o.Class == Read || o.Class == Meta }

// Writes reports whether the operation needs the workdir's write access.
func (o *Op) Writes() bool { return o.Class == Write || o.Class == Destructive }

// Option returns the option called name.
func (o *Op) Option(name string) *Option {
	for i := range o.Options {
		if o.Options[i].Name == name {
			return &o.Options[i]
		}
	}
	return nil
}

// Arg returns the argument called name.
func (o *Op) Arg(name string) *Arg {
	for i := range o.Args {
		if o.Args[i].Name == name {
			return &o.Args[i]
		}
	}
	return nil
}

// Usage is the argument synopsis: "PATTERN [PATH...]".
func (o *Op) Usage() string {
	parts := make([]string, 0, len(o.Args))
	for _, a := range o.Args {
		s := a.Meta
		if a.Many {
			s += "..."
		}
		if a.Optional {
			s = "[" + s + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Property is the snake_case name of an option or argument in a tool call.
func Property(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Flag is the command-line spelling of an option's long name: Objects
// options take JSON text, as --NAME-json.
func (o *Option) Flag() string {
	if o.Type == Objects {
		return o.Name + "-json"
	}
	return o.Name
}

// Registry is an ordered set of operations.
type Registry struct {
	ops    []*Op
	byName map[string]*Op
}

// NewRegistry checks the descriptors and indexes them by name. A bad
// descriptor is a programming error: it panics, at start-up, in every test.
func NewRegistry(ops ...*Op) *Registry {
	r := &Registry{byName: make(map[string]*Op, len(ops)), ops: make([]*Op, 0, len(ops))}
	var flags []string // one buffer for every operation's flag names: this runs at every start
	for _, op := range ops {
		var err error
		if flags, err = op.validate(flags[:0]); err != nil {
			panic("spec: " + err.Error())
		}
		if _, dup := r.byName[op.Name]; dup {
			panic("spec: two operations named " + op.Name)
		}
		r.byName[op.Name] = op
		r.ops = append(r.ops, op)
	}
	slices.SortFunc(r.ops, func(a, b *Op) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// With returns a registry holding r's operations and more.
func (r *Registry) With(more ...*Op) *Registry { return NewRegistry(append(r.Ops(), more...)...) }

// Lookup returns the operation called name.
func (r *Registry) Lookup(name string) (*Op, bool) { op, ok := r.byName[name]; return op, ok }

// Ops returns the operations sorted by name.
func (r *Registry) Ops() []*Op { return append([]*Op(nil), r.ops...) }

// Names returns the operation names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, len(r.ops))
	for i, op := range r.ops {
		out[i] = op.Name
	}
	return out
}

// validate checks the descriptor; names is a buffer for its flag names,
// returned grown.
func (o *Op) validate(names []string) ([]string, error) {
	if o.Name == "" || strings.ToLower(o.Name) != o.Name || strings.ContainsAny(o.Name, " _/") {
		return names, fmt.Errorf("bad operation name %q", o.Name)
	}
	switch o.Class {
	case Read, Write, Destructive, Meta:
	default:
		return names, fmt.Errorf("%s: bad class %q", o.Name, o.Class)
	}
	if o.Summary == "" || len(o.Examples) == 0 {
		return names, fmt.Errorf("%s: a summary and at least one example are required", o.Name)
	}
	for _, a := range o.Args {
		if a.Name == "" || a.Meta == "" {
			return names, fmt.Errorf("%s: an argument needs a name and a metavariable", o.Name)
		}
	}
	shortH := false // an option's own -h (grep's) takes the name from --help's
	names = append(names, "help")
	for _, opt := range o.Options {
		switch opt.Type {
		case Bool, Int, String, Strings, Objects:
		default:
			return names, fmt.Errorf("%s --%s: bad type %q", o.Name, opt.Name, opt.Type)
		}
		if opt.Help == "" {
			return names, fmt.Errorf("%s --%s: no help", o.Name, opt.Name)
		}
		names = append(names, opt.Flag())
		if opt.Short != "" {
			names = append(names, opt.Short)
		}
		names = append(names, opt.Aliases...)
		shortH = shortH || opt.Short == "h"
	}
	if !shortH {
		names = append(names, "h")
	}
	slices.Sort(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return names, fmt.Errorf("%s: flag name %q used twice", o.Name, names[i])
		}
	}
	return names, nil
}

// Int64 returns a pointer to v, for Option.Min and Option.Max.
func Int64(v int64) *int64 { return &v }

// TextWriter is where a result's text form goes (the command line's
// --format text): bytes, and names — paths and other one-line fields —
// that the face makes safe for where they go (a terminal's escapes).
type TextWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
	// Name is s made safe as one field of one line.
	Name(s string) string
	// Content is file content made safe for where it goes (as is in a
	// pipeline; escaped on a terminal).
	Content(b []byte) []byte
	// Typed is a name (already made safe) of an entry of this type (file,
	// dir, symlink, other): a face may colour it (only for an Op that Paints).
	Typed(name, typ string) string
	// Paint is s (already made safe) in the colour of its role in a
	// match listing (PaintPath, PaintLine, PaintMatch, as grep and rg
	// colour them): a face may colour it (only for an Op that Paints).
	Paint(s string, role Role) string
}

// Role is what a painted piece of a match listing is.
type Role uint8

// The roles of Paint.
const (
	PaintPath  Role = iota // a file's name
	PaintLine              // a line number
	PaintMatch             // the matched text
)

// Texter is a result with a text form of its own, written next to the
// result's type: every face that prints text prints this.
type Texter interface {
	Text(w TextWriter) error
}

// Sink is where a streaming operation (Op.Streams) sends its items as
// they come, in the one form its face chose before the call: exactly one
// of Item and Text is set.
type Sink struct {
	// Item takes each item as a value that encodes as one JSON document
	// (json's list member, ndjson's line).
	Item func(v any) error
	// Text takes the operation's text form (--format text).
	Text TextWriter
	// Idle, when set, is called by the operation when it is about to
	// wait for its next items, on the goroutine that sends them: the
	// face passes on what it holds, so that a reader sees the items as
	// they are found (`fsbox grep x | head -1` ends at the first match).
	Idle func()
}
