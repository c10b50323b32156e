//go:build unix

// End-to-end golden tests: each testdata/script/*.txtar runs the real CLI
// (this test binary, installed in $PATH as fsbox and fsbox-NAME) in a fresh
// $WORK; internal/scripttest holds the harness and the scripts'
// conventions.
package main

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fsbox/fsbox/internal/scripttest"
	"github.com/fsbox/fsbox/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the testscript goldens (cmp against archive files) from the current output")

// TestMain makes the test binary double as fsbox (scripttest.Commands).
func TestMain(m *testing.M) {
	// testbin.Main removes the fsbox pair a test here built, if any.
	testscript.Main(testbinMain{m}, scripttest.Commands())
}

// testbinMain runs the tests through testbin.Main.
type testbinMain struct{ m *testing.M }

func (t testbinMain) Run() int { return testbin.Main(t.m) }

func TestScript(t *testing.T) {
	testscript.Run(t, scripttest.Params(filepath.Join("..", "..", "testdata", "script"), *update))
}
