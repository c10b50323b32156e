package ops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNoFlagSpellingBelowTheFaces: no message that pkg/sandbox or pkg/ops
// builds for an error spells a command-line flag ("pass --force", "-r"):
// an MCP client would read it as advice to use an argument its tool does
// not have. An option a call could pass is a structured hint (fserr.Hint),
// spelled by each face (issue 27).
func TestNoFlagSpellingBelowTheFaces(t *testing.T) {
	flag := regexp.MustCompile(`(^|[\s(])(--[a-z][a-z-]*|-[a-zA-Z]\b)`)
	for _, dir := range []string{".", "../sandbox"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			file, err := parser.ParseFile(fs, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !errorBuilder(call.Fun) {
					return true
				}
				for _, a := range call.Args {
					lit, ok := a.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					if m := flag.FindString(s); m != "" {
						t.Errorf("%s: an error message spells the flag %q: %q", fs.Position(lit.Pos()), strings.TrimSpace(m), s)
					}
				}
				return true
			})
		}
	}
}

// errorBuilder: a call that builds an error or its message.
func errorBuilder(fun ast.Expr) bool {
	name := ""
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	switch name {
	case "Errorf", "deny", "Deny", "usagef", "usageErr", "New", "ioErr":
		return true
	}
	return false
}
