package cli

import "github.com/fsbox/fsbox/pkg/ops"

// CommandNames returns every command name, sorted, for callers outside
// the package (the testscript harness registers fsbox-NAME for each).
func CommandNames() []string { return ops.Registry.Names() }
