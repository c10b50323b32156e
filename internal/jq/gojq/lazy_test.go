package gojq

import (
	"os"
	"testing"
)

// builtAtStart: the tables of builtins were built before any test ran
// (by the package init, as upstream gojq builds them).
var builtAtStart bool

func TestMain(m *testing.M) {
	builtAtStart = builtinFuncDefs != nil || internalFuncs != nil
	os.Exit(m.Run())
}

// TestTablesBuiltByCompile: the package init builds no table of builtins;
// the first Compile builds both, and a program then finds the builtins of
// each (map is defined in jq, length and @csv in Go).
func TestTablesBuiltByCompile(t *testing.T) {
	if builtAtStart {
		t.Fatal("the tables of builtins are built at package init")
	}
	q, err := Parse(`[.[] | length] | map(. * 2) | @csv`)
	if err != nil {
		t.Fatal(err)
	}
	code, err := Compile(q)
	if err != nil {
		t.Fatal(err)
	}
	if builtinFuncDefs == nil || internalFuncs == nil {
		t.Fatal("Compile left the tables of builtins unbuilt")
	}
	v, ok := code.Run([]any{"ab", []any{1, 2, 3}}).Next()
	if !ok || v != "4,6" {
		t.Errorf("got %v, %v; want 4,6", v, ok)
	}
}
