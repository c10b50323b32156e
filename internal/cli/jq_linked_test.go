package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/pkg/ops"
)

// TestJQOnlyWhereLinked: --jq runs where the binary links its compiler
// (fsbox), and is a config error (8) where it does not (fsbox-mcp run as
// fsbox), with nothing on stdout.
func TestJQOnlyWhereLinked(t *testing.T) {
	fx := newFixture(t, map[string]string{"a.txt": "hello\n"}, "")
	for _, c := range []struct {
		x    Extras
		code int
		out  string
	}{
		{Extras{JQ: jq.Compile}, 0, "6\n"},
		{Extras{}, 8, ""},
	} {
		var out, errb bytes.Buffer
		env := map[string]string{"FSBOX_CONFIG": fx.policy, "XDG_STATE_HOME": fx.state}
		code := Run(context.Background(), Call{Args: []string{"fsbox", "stat", "a.txt", "--jq", ".size"}, Stdout: &out, Stderr: &errb,
			Ops: ops.Registry, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Extras: c.x})
		if code != c.code || out.String() != c.out || (code == 8) != strings.Contains(errb.String(), "--jq is not built into this program") {
			t.Errorf("jq linked %v: exit %d, stdout %q, stderr %q", c.x.JQ != nil, code, out.String(), errb.String())
		}
	}
}
