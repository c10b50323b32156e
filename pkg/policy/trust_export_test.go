package policy

// SetMountAliases replaces the mount table's other names of a policy
// file (mountAliases) until the returned function restores them.
func SetMountAliases(f func(string) []string) (restore func()) {
	old := aliasesOf
	aliasesOf = f
	return func() { aliasesOf = old }
}
