package cli

import "strings"

// typeColors are the SGR parameters for each entry type, GNU ls's
// defaults, overridden by LS_COLORS (di, ln, fi, pi, so, bd, cd keys).
type typeColors map[string]string

func newTypeColors(lsColors string) typeColors {
	c := typeColors{"dir": "01;34", "symlink": "01;36", "other": "40;33"}
	keys := map[string]string{"di": "dir", "ln": "symlink", "fi": "file", "pi": "other", "so": "other", "bd": "other", "cd": "other"}
	for _, kv := range strings.Split(lsColors, ":") {
		k, v, ok := strings.Cut(kv, "=")
		if t, known := keys[k]; ok && known && strings.Trim(v, "0123456789;") == "" {
			c[t] = v
		}
	}
	return c
}

// paint colours a name by its entry type ("" for a type without colour).
func (c typeColors) paint(name, typ string) string {
	sgr := c[typ]
	if sgr == "" || sgr == "0" || sgr == "00" {
		return name
	}
	return "\x1b[" + sgr + "m" + name + "\x1b[0m"
}
