// Package toyop holds an operation no fsbox build has, for the tests that
// prove the faces follow the descriptor alone (internal/cli and
// internal/mcpserver add it to a test registry and find it everywhere).
package toyop

import (
	"context"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Result is the toy's answer.
type Result struct {
	Path  string `json:"path"`
	Loud  bool   `json:"loud"`
	Times int64  `json:"times"`
}

// Outcome: a whole result.
func (r Result) Outcome() spec.Outcome { return spec.Outcome{} }

// Op opens PATH through the sandbox and greets it.
var Op = &spec.Op{
	Name: "toy", Class: spec.Read, Result: Result{},
	Summary:  "greet a file, to prove the faces follow the descriptor",
	Help:     "Opens PATH through the sandbox and greets it TIMES times.",
	Args:     []spec.Arg{{Name: "path", Meta: "PATH", Help: "the file to greet", Use: sandbox.NeedReadFile}},
	Options:  []spec.Option{{Name: "shout-loud", Short: "S", Type: spec.Bool, Help: "greet loudly"}, {Name: "times", Type: spec.Int, Meta: "N", Min: spec.Int64(1), Help: "how often to greet"}},
	Examples: []spec.Example{{Cmd: "toy notes.txt --times 2", Says: "greets notes.txt twice"}},
	Text:     "the greeting",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		f, err := sb.Open(in.String("path"))
		if err != nil {
			return nil, err
		}
		f.Close()
		return Result{Path: f.Info.Path, Loud: in.Bool("shout-loud"), Times: in.Int("times")}, nil
	},
}
