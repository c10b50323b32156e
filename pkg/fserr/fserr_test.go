package fserr

import (
	"errors"
	"testing"
)

// TestSpellf: a message that names settings says them as each face
// spells them, in the setting's own words where a face spells none (and
// in Msg, Error and Message(nil)); the other arguments are formatted as
// Errorf formats them, a % in them kept as it is; a hint still follows.
func TestSpellf(t *testing.T) {
	cli := func(h *Hint) string {
		switch h.Setting {
		case SettingConfig:
			return "--config"
		case SettingServe:
			return "fsbox mcp"
		case "":
			return "--" + h.Option
		}
		return ""
	}
	none := func(*Hint) string { return "" }
	for _, c := range []struct {
		name      string
		err       *Error
		cli, none string // Message as each spells it
	}{
		{"one setting", Spellf(CodeUsage, "p", "%s is not allowed: %s", SettingConfig, "100%"),
			"--config is not allowed: 100%", "the config setting is not allowed: 100%"},
		{"twice, indexed, among values", Spellf(CodeConfig, "", "without %[1]s, %[2]q (%[3]v), loaded with %[1]s; %[4]d%%", SettingConfig, "a%sb", errors.New("e%d"), 7),
			`without --config, "a%sb" (e%d), loaded with --config; 7%`, `without the config setting, "a%sb" (e%d), loaded with the config setting; 7%`},
		{"several settings, one unspelled", Spellf(CodeConfig, "", "%s does not serve it: give %s, or name them (%s)", SettingServe, SettingConfig, SettingServeDirs),
			"fsbox mcp does not serve it: give --config, or name them (the MCP server's directories)",
			"the MCP server does not serve it: give the config setting, or name them (the MCP server's directories)"},
		{"no setting", Spellf(CodeIO, "", "plain %s", "text"), "plain text", "plain text"},
		{"with a hint", Spellf(CodeUsage, "", "%s is odd:", SettingConfig).WithHint(Hint{Option: "force", Text: "pass %s", Else: "do else"}),
			"--config is odd: pass --force", "the config setting is odd: do else"},
	} {
		if got := c.err.Message(cli); got != c.cli {
			t.Errorf("%s: as the CLI spells it %q, want %q", c.name, got, c.cli)
		}
		if got := c.err.Message(none); got != c.none {
			t.Errorf("%s: unspelled %q, want %q", c.name, got, c.none)
		}
		msg, _ := c.err.Parts(nil)
		if c.err.Hint == nil && (c.err.Message(nil) != c.none || msg != c.none || c.err.Msg != c.none) {
			t.Errorf("%s: Message(nil) %q, Msg %q, want %q", c.name, c.err.Message(nil), c.err.Msg, c.none)
		}
	}
	if got := Spellf(CodeUsage, "f", "%s is not allowed", SettingConfig).Error(); got != "usage: f: the config setting is not allowed" {
		t.Errorf("Error() = %q", got)
	}
}
