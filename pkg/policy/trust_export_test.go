package policy

import "github.com/fsbox/fsbox/pkg/fserr"

// SetMountAliases replaces the mount table's other names of a policy
// file (mountAliases) until the returned function restores them.
func SetMountAliases(f func(string) []string) (restore func()) {
	old := aliasesOf
	aliasesOf = f
	return func() { aliasesOf = old }
}

// AsCommandLine is err's text as the command line shows it: the settings
// the refusals here name (fserr.Setting) spelled as internal/cli spells
// them, which the messages were written for.
func AsCommandLine(err error) string {
	return fserr.AsError(err).Message(func(h *fserr.Hint) string {
		switch h.Setting {
		case fserr.SettingConfig:
			return "--config"
		case fserr.SettingServe:
			return "fsbox mcp"
		case fserr.SettingServeDirs:
			return "fsbox mcp WORKDIR [READ_ROOT...]"
		}
		return "--" + h.Option
	})
}
