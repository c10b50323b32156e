// Package jq is fsbox's --jq filter: the jq language of gojq
// (github.com/itchyny/gojq: well kept, and gh uses it for --jq). It is
// linked only into fsbox-full: gojq's package init (its builtins, about
// 0.3 ms) would otherwise be paid by every fsbox call.
package jq

import "github.com/itchyny/gojq"

// Compile parses and compiles a jq program. The program's outputs for an
// input come one at a time from Next; an error is an output too.
func Compile(program string) (func(input any) interface{ Next() (any, bool) }, error) {
	q, err := gojq.Parse(program)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return func(input any) interface{ Next() (any, bool) } { return code.Run(input) }, nil
}
