//go:build unix

package main

import (
	"fmt"
	"path/filepath"
)

// The kernel rows: ripgrep's own published Linux-kernel pattern set, and
// the README's TODO|FIXME, over an extracted kernel source tree given with
// -kernel DIR (Debian's linux-source package unpacks one; the bench never
// fetches it). Each row is fsbox against rg on the same tree, both with
// ignore files off (the tree's top .gitignore ends with /*, and whether it
// applies depends on a .git the tarball lacks), both printing numbered
// lines; rg's order is its own, so the bytes are not compared.
type kernelPattern struct {
	name     string
	args     []string // the pattern and its flags, the same for both
	maxRatio float64  // the target for the row
}

var kernelPatterns = []kernelPattern{
	{"literal", []string{"PM_RESUME"}, 1.1},
	{"literal-i", []string{"-i", "PM_RESUME"}, 1.5},
	{"word", []string{"-w", "[A-Z]+_RESUME"}, 1.1},
	{"suffix", []string{"[A-Z]+_RESUME"}, 1.1},
	{"alternates", []string{"ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT"}, 1.3},
	{"alternates-i", []string{"-i", "ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT"}, 1.5},
	{"unicode-greek", []string{`\p{Greek}`}, 3.0},
	{"unicode-word", []string{`\wAh`}, 3.0},
	{"no-literal", []string{`\w{5}\s+\w{5}\s+\w{5}\s+\w{5}\s+\w{5}`}, 3.0},
	{"todo-fixme", []string{"TODO|FIXME"}, 1.3},
}

// kernelRows returns the rows for the tree at dir (absolute).
func kernelRows(dir string) []comparison {
	read := fmt.Sprintf("read_roots = [%q]\n", dir)
	wide := policy{"kernel", read + bigLimits.text}
	var rows []comparison
	for _, p := range kernelPatterns {
		fsbox := append(append([]string{"grep", "-n"}, p.args...), dir, "--no-ignore", "--format", "text")
		rival := append(append([]string{"rg", "-n", "--no-ignore"}, p.args...), dir)
		rows = append(rows, comparison{
			name: "grep-kernel-" + p.name, policy: wide, okExit: []int{1},
			fsbox: fsbox, rival: rival, maxRatio: p.maxRatio, maxRSSKiB: 64 << 10,
		})
	}
	// The count an agent asks for, under the agent preset's limits (its
	// byte budget cuts the list, the count goes on): whole within its 30 s.
	agent := policy{"kernel-agent", read + "preset = \"agent\"\n"}
	rows = append(rows, comparison{
		name: "grep-kernel-count-agent", policy: agent, okExit: []int{1, 9},
		fsbox:      []string{"grep", "-c", "TODO|FIXME", dir, "--no-ignore"},
		rival:      []string{"rg", "-c", "--no-ignore", "TODO|FIXME", dir},
		maxSeconds: 30, maxRSSKiB: 64 << 10,
	})
	return rows
}

// kernelDir checks -kernel's tree.
func kernelDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("-kernel: %v", err)
	}
	return abs, nil
}
