package cli

// CommandNames returns every registered command name, sorted, for callers
// outside the package (the testscript harness registers fsbox-NAME for each).
func CommandNames() []string { return commandNames() }
