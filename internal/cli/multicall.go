package cli

import (
	"sort"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// command is one fsbox command. The registry below drives dispatch,
// multi-call names, help, and (later) man pages, completions and tools.
type command struct {
	name      string
	usage     string
	argsUsage string
	flags     []ucli.Flag
	minArgs   int
	maxArgs   int  // -1: any number
	noPolicy  bool // runs without loading a policy (documentation output)
	run       func(x *call) error
}

var registry = map[string]*command{}

func register(c *command) {
	if _, ok := sandbox.CommandAccess(c.name); !ok {
		panic("command " + c.name + " is not in the sandbox's command table")
	}
	registry[c.name] = c
}

// commandNames returns the registered names, sorted.
func commandNames() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func isCommand(name string) bool { _, ok := registry[name]; return ok }
