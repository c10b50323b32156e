package ops

import (
	"fmt"
	"path"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Link is one multi-call link.
type Link struct {
	Path    string `json:"path"`
	Target  string `json:"target"`
	Created bool   `json:"created"`
}

// LinksResult lists the links made.
type LinksResult struct {
	Dir   string `json:"dir"`
	Links []Link `json:"links"`
}

// linksNeeds are the commands links stands in for: it creates a directory
// (mkdir) and files in it (write), so it runs only while the policy
// switches those on as well as links itself.
var linksNeeds = []string{"mkdir", "write"}

// CommandEnabled reports whether the policy lets command name run: its own
// toggle, and for links also those of linksNeeds.
func CommandEnabled(p *sandbox.Policy, name string) bool {
	return CheckCommand(p, name) == nil
}

// CheckCommand refuses (denied, rule command) a command the policy switches
// off, and links while one of linksNeeds is off.
func CheckCommand(p *sandbox.Policy, name string) error {
	off := func(msg string, args ...any) error {
		return &sandbox.Error{Code: sandbox.CodeDenied, Rule: sandbox.RuleCommand, Msg: fmt.Sprintf(msg, args...)}
	}
	if !p.Enabled(name) {
		return off("the command %q is switched off by the policy", name)
	}
	if name == "links" {
		for _, n := range linksNeeds {
			if !p.Enabled(n) {
				return off("links creates directories and files, and the command %q is switched off by the policy", n)
			}
		}
	}
	return nil
}

// Links creates DIR/PREFIXcommand symlinks to the running binary for every
// command (the directory must lie in the workdir; it is created). It is
// denied (rule command) unless links, mkdir and write are all switched on.
func Links(sb *sandbox.Sandbox, dir, prefix string, commands []string) (LinksResult, error) {
	if err := CheckCommand(sb.Policy(), "links"); err != nil {
		return LinksResult{}, err
	}
	exe, err := sandbox.SelfPath()
	if err != nil {
		return LinksResult{}, sandbox.Errorf(sandbox.CodeIO, dir, "cannot tell where this binary is: %v", err)
	}
	d, _, err := sb.Mkdir(dir)
	if err != nil {
		return LinksResult{}, err
	}
	res := LinksResult{Dir: d, Links: []Link{}}
	for _, c := range commands {
		if prefix == "" && c == "fsbox" {
			continue
		}
		p := path.Join(d, prefix+c)
		created, err := sb.Symlink(p, exe)
		if err != nil {
			return LinksResult{}, err
		}
		res.Links = append(res.Links, Link{Path: p, Target: exe, Created: created})
	}
	return res, nil
}
