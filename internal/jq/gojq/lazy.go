package gojq

import "sync"

// This package is gojq v0.12.20 (github.com/itchyny/gojq, MIT licence:
// LICENSE), copied into fsbox with two changes. First, module_loader.go keeps only
// the ModuleLoader type: the filesystem loader (NewModuleLoader, which
// read files by path outside the sandbox) is gone, so import and include
// always fail. Second, the tables of builtins
// that gojq builds in its package init (builtinFuncDefs, the parsed jq
// definitions of builtin.jq: some 2,300 allocations and 136 KB of init
// code, and internalFuncs) are built by the first Compile instead. Go
// runs every linked package's init at every start, and fsbox links gojq
// for --jq alone, so the tables cost each fsbox call whether or not it
// filters (0.8-1.4 ms of package init by GODEBUG=inittrace=1); a --jq
// call builds them as before, once, when it compiles its program.
//
// The change, against the upstream files (gofmt'd: builtin.go's map keys
// are aligned): builtin.go's and func.go's func init are
// initBuiltinFuncDefs and initInternalFuncs, Compile calls initTables
// first, and this file and lazy_test.go. The tables are used only by the
// compiler and by the programs it compiles (funcFormat, funcBuiltins),
// so no use precedes a Compile. To take a newer gojq: copy its non-test
// .go files and LICENSE over these, make the same change again, and
// check it with diff -u <(gofmt UPSTREAM/FILE.go) FILE.go.
var tablesOnce sync.Once

// initTables builds the tables of builtins, once.
func initTables() {
	tablesOnce.Do(func() {
		initBuiltinFuncDefs()
		initInternalFuncs()
	})
}
