package jq

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestCompile: programs that use the builtins defined in jq and in Go,
// paths and assignment, and errors, give what jq gives; compiled at once
// from several goroutines (the builtins are built by the first).
func TestCompile(t *testing.T) {
	in := map[string]any{"path": "a.go", "size": 7, "tags": []any{"x", "y"}}
	for _, c := range []struct {
		program string
		want    string // the outputs, %v each, joined by "|"
	}{
		{".size", "7"},
		{".tags | map(ascii_upcase) | join(\",\")", "X,Y"},
		{"to_entries | map(.key) | sort | first", "path"},
		{".size = 8 | .size", "8"},
		{"[paths] | length", "5"},
		{".tags[] | select(. == \"y\")", "y"},
		{"[.tags[] | @base64]", "[eA== eQ==]"},
		{"keys | length", "3"},
		{"error(\"no\")", "error: error: no"},
		{".size | tostring | test(\"^[0-9]+$\")", "true"},
	} {
		var wg sync.WaitGroup
		got := make([]string, 4)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run, err := Compile(c.program)
				if err != nil {
					got[i] = "compile: " + err.Error()
					return
				}
				it := run(context.Background(), in)
				for {
					v, ok := it.Next()
					if !ok {
						break
					}
					if got[i] != "" {
						got[i] += "|"
					}
					if err, isErr := v.(error); isErr {
						got[i] += "error: " + err.Error()
						break
					}
					got[i] += fmt.Sprint(v)
				}
			}()
		}
		wg.Wait()
		for _, g := range got {
			if g != c.want {
				t.Errorf("%s: %q, want %q", c.program, g, c.want)
			}
		}
	}
}

// TestCompileRefuses: a program that does not parse, or names no
// builtin, is an error at Compile; so is a module (import, include), which
// would read a file outside the sandbox: fsbox's gojq has no loader.
func TestCompileRefuses(t *testing.T) {
	for _, p := range []string{".[", "nosuchbuiltin", "map", `include "/etc/passwd"; .`, `import "/etc/passwd" as $p; $p`, `import "x" as x; x::f`} {
		if _, err := Compile(p); err == nil {
			t.Errorf("%s: compiled", p)
		}
	}
}
