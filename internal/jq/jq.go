// Package jq is fsbox's --jq filter: the jq language of gojq
// (github.com/itchyny/gojq: well kept, and gh uses it for --jq). It is
// linked into fsbox itself, as running --jq in a companion binary cost a
// second process start (about 2.5 ms). gojq is fsbox's copy
// (internal/jq/gojq), which builds its tables of builtins at the first
// Compile rather than in its package init: a call without --jq does not
// pay for them (0.8-1.4 ms at every start).
package jq

import (
	"context"

	"github.com/fsbox/fsbox/internal/jq/gojq"
)

// Compile parses and compiles a jq program. The program's outputs for an
// input come one at a time from Next; an error is an output too. The
// program runs under ctx: once ctx is done, Next gives ctx's error (gojq
// checks it at every step, so a program that never ends stops there).
func Compile(program string) (func(ctx context.Context, input any) interface{ Next() (any, bool) }, error) {
	q, err := gojq.Parse(program)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, input any) interface{ Next() (any, bool) } {
		return code.RunWithContext(ctx, input)
	}, nil
}
