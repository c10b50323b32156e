package ops

import (
	"context"
	"errors"
	"path"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var linksOp = &spec.Op{
	Name: "links", Class: spec.Write, Result: LinksResult{}, Idempotent: true, NoTool: true, Needs: []string{"mkdir", "write"},
	Summary:  "create fsbox-COMMAND links to this binary in DIR (inside the workdir)",
	Help:     "Creates one symlink per command in DIR, named PREFIX followed by the command, pointing at this binary, so fsbox-grep runs fsbox grep. mcp gets none: the MCP server is its own binary, fsbox-mcp, which a link would shadow. It needs mkdir and write on as well.",
	Args:     []spec.Arg{{Name: "dir", Meta: "DIR", Help: "where to put the links", Use: sandbox.NeedMake, Complete: spec.CompleteDirs}},
	Options:  []spec.Option{{Name: "prefix", Type: spec.String, Meta: "PREFIX", Default: "fsbox-", Help: "name prefix of each link (empty: bare command names)"}},
	Examples: []spec.Example{{Cmd: "links bin --format text", Says: "one link path a line"}},
	Text:     "one link path a line",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return Links(ctx, sb, in.String("dir"), in.String("prefix"), in.Executable, Registry.Names())
	},
}

// Link is one multi-call link.
type Link struct {
	Path    string `json:"path"`
	Target  string `json:"target"`
	Created bool   `json:"created"`
}

// LinksResult lists the links made.
type LinksResult struct {
	Dir   string `json:"dir"`
	Links []Link `json:"links" fsbox:"list"`
}

// Outcome: a whole result.
func (r LinksResult) Outcome() spec.Outcome { return spec.Outcome{} }

// Links creates DIR/PREFIXcommand symlinks to the running binary (the
// canonical path exe finds: the face's spec.Input.Executable) for every
// command but mcp (the directory must lie in the workdir; it is created).
// mcp has a binary of its own, fsbox-mcp, which a link named so would
// shadow. It is denied (rule command) unless links, mkdir and write are
// all switched on; without exe it is io.
func Links(ctx context.Context, sb *sandbox.Sandbox, dir, prefix string, exe func() (string, error), commands []string) (LinksResult, error) {
	if err := begin(ctx, sb, "links"); err != nil {
		return LinksResult{}, err
	}
	if exe == nil {
		exe = errNoExecutable
	}
	target, err := exe()
	if err != nil {
		return LinksResult{}, fserr.Errorf(fserr.CodeIO, dir, "cannot tell where this binary is: %v", err)
	}
	d, _, err := sb.Mkdir(dir)
	if err != nil {
		return LinksResult{}, err
	}
	res := LinksResult{Dir: d, Links: []Link{}}
	for _, c := range commands {
		if prefix == "" && c == "fsbox" || c == "mcp" {
			continue
		}
		p := path.Join(d, prefix+c)
		created, err := sb.Symlink(p, target)
		if err != nil {
			return LinksResult{}, err
		}
		res.Links = append(res.Links, Link{Path: p, Target: target, Created: created})
	}
	return res, nil
}

// errNoExecutable is Links's exe when the face gives none.
func errNoExecutable() (string, error) {
	return "", errors.New("the program serving the call does not say")
}

// Text is one link path a line.
func (r LinksResult) Text(w spec.TextWriter) error {
	for _, l := range r.Links {
		if _, err := w.WriteString(w.Name(l.Path) + "\n"); err != nil {
			return err
		}
	}
	return nil
}
