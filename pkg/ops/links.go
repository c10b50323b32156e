package ops

import (
	"context"
	"path"

	"github.com/fsbox/fsbox/internal/companion"
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

// Links creates DIR/PREFIXcommand symlinks to the running binary for every
// command (the directory must lie in the workdir; it is created). It is
// denied (rule command) unless links, mkdir and write are all switched on.
func Links(ctx context.Context, sb *sandbox.Sandbox, dir, prefix string, commands []string) (LinksResult, error) {
	if err := begin(ctx, sb, "links"); err != nil {
		return LinksResult{}, err
	}
	exe, err := companion.Self()
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
