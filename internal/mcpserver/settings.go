package mcpserver

import "github.com/fsbox/fsbox/pkg/fserr"

// settingWords are a setting a message names (fserr.Setting) as an MCP
// host sets it up: on the command line it starts the server with, the
// fsbox-mcp binary (a tool call sets none of them).
func settingWords(s fserr.Setting) string {
	switch s {
	case fserr.SettingConfig:
		return "the server's --config"
	case fserr.SettingServe:
		return "fsbox-mcp"
	case fserr.SettingServeDirs:
		return "fsbox-mcp WORKDIR [READ_ROOT...]"
	}
	return ""
}
