package cli

import "github.com/fsbox/fsbox/pkg/fserr"

// settingWords are a setting of the host (what a policy message names:
// fserr.Setting) as the command line makes it: the flag, the command and
// its arguments.
func settingWords(s fserr.Setting) string {
	switch s {
	case fserr.SettingConfig:
		return "--config"
	case fserr.SettingServe:
		return "fsbox mcp"
	case fserr.SettingServeDirs:
		return "fsbox mcp WORKDIR [READ_ROOT...]"
	}
	return ""
}
