package ops

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var findOp = &spec.Op{
	Name: "find", Class: spec.Read, Result: FindResult{},
	Streams: true,
	Summary: "list paths below DIR matching a glob, honouring .gitignore",
	Help:    "Lists the paths below DIR (the workdir when left out) in path order, honouring ignore files and leaving out hidden names. GLOB is a doublestar glob: without '/' it matches the base name, as fd -g. One argument with glob characters is a GLOB, else a DIR.",
	Args: []spec.Arg{
		{Name: "dir", Meta: "DIR", Help: "the directory to walk", Use: spec.ReadDir, Optional: true, Complete: spec.CompleteDirs},
		{Name: "glob", Meta: "GLOB", Help: "keep only paths matching this glob", Optional: true, Complete: spec.CompleteNone},
	},
	Options: []spec.Option{
		{Name: "max-depth", Type: spec.Int, Meta: "N", Min: min0, DefaultText: "no limit", Help: "deepest level to list (DIR's entries are 1)"},
		{Name: "type", Short: "t", Type: spec.String, Meta: "TYPE", Enum: []string{"f", "d", "l"}, Help: "only f (files), d (directories) or l (symlinks)"},
		{Name: "exclude", Short: "E", Type: spec.Strings, Meta: "GLOB", Help: "leave out paths matching GLOB (repeatable); excluded directories are not entered"},
		{Name: "hidden", Type: spec.Bool, Help: "include names starting with a dot"},
		{Name: "no-ignore", Type: spec.Bool, Help: "do not honour .gitignore, .ignore and .git/info/exclude"},
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
	},
	Examples: []spec.Example{{Cmd: "find . '*.go' --format text", Says: "every Go file under the workdir, as fd -g '*.go'"}},
	Text:     "one path a line, as find or fd",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		o := FindInput(in)
		o.TypedSink = pathSink(in.Sink)
		return Find(ctx, sb, o)
	},
}

// FindInput turns a find input into options.
func FindInput(in *spec.Input) FindOptions {
	o := FindOptions{MaxDepth: -1, Type: in.String("type"), Exclude: in.Strings("exclude"),
		Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), Follow: in.Bool("follow"), Dir: ".", Glob: in.String("glob")}
	if in.IsSet("max-depth") {
		o.MaxDepth = int(in.Int("max-depth"))
	}
	if in.IsSet("dir") {
		o.Dir = in.String("dir")
		// One argument: a glob if it has glob characters, else a directory.
		if !in.IsSet("glob") && strings.ContainsAny(o.Dir, "*?[{") {
			o.Dir, o.Glob = ".", o.Dir
		}
	}
	return o
}

// FindOptions are find's inputs.
type FindOptions struct {
	Dir      string   // the directory to walk, "." for the workdir; "" is usage (an empty path is never a path)
	Glob     string   // doublestar; without '/' it matches the base name (as fd -g)
	MaxDepth int      // < 0: no limit
	Type     string   // "", f, d, l
	Exclude  []string // globs, same rule as Glob; an excluded directory is not entered
	Hidden   bool
	NoIgnore bool
	Follow   bool
	Sink     func(path string) error // stream instead of collecting
	// TypedSink, when set, is Sink with each path's type (file, dir,
	// symlink, other): the text form colours by it.
	TypedSink PathSink
}

// PathSink receives each path, and its type (file, dir, symlink, other),
// as a walk finds it.
type PathSink = func(path, typ string) error

// FindResult lists matching paths in path order.
type FindResult struct {
	Dir     string              `json:"dir"`
	Paths   []string            `json:"paths"`
	Count   int64               `json:"count"`
	Skipped sandbox.WalkSkipped `json:"skipped"`
	Truncation
}

var errStop = errors.New("stop")

// globMatcher matches walk entries with globs read as ripgrep and fd read
// -g and -E, gitignore-style: a glob without '/' matches the base name at
// any depth; a leading '/' (or a '/' inside) anchors it at the search's
// start; a trailing '/' matches directories only; "x/**" is what lies
// inside x. (Policy patterns keep doublestar's meaning, where x/** is x
// too: over-denying is the safe side.)
type globMatcher []entryGlob

type entryGlob struct {
	pat     string // doublestar, relative to the start (or a base name)
	base    bool   // matched against the base name
	dirOnly bool
}

func newGlobs(pats []string) (globMatcher, error) {
	var out globMatcher
	for _, p := range pats {
		g := entryGlob{pat: p}
		if len(g.pat) > 1 && strings.HasSuffix(g.pat, "/") {
			g.dirOnly, g.pat = true, strings.TrimRight(g.pat, "/")
		}
		anchored := strings.HasPrefix(g.pat, "/")
		g.pat = strings.TrimLeft(g.pat, "/")
		g.base = !anchored && !strings.Contains(g.pat, "/")
		if len(g.pat) > 3 && strings.HasSuffix(g.pat, "/**") {
			g.pat += "/*"
		}
		if g.pat == "" || !doublestar.ValidatePattern(g.pat) {
			return nil, usagef("", "invalid glob %q", p)
		}
		out = append(out, g)
	}
	return out, nil
}

// match reports whether the entry at rel (relative to the start) matches.
func (g globMatcher) match(rel string, isDir bool) bool {
	for _, p := range g {
		if p.dirOnly && !isDir {
			continue
		}
		subject := rel
		if p.base {
			subject = path.Base(rel)
		}
		if ok, _ := doublestar.Match(p.pat, subject); ok {
			return true
		}
	}
	return false
}

// Find walks Dir and lists the entries that match.
func Find(ctx context.Context, sb *sandbox.Sandbox, o FindOptions) (FindResult, error) {
	if err := begin(ctx, sb, "find"); err != nil {
		return FindResult{}, err
	}
	var want string
	switch o.Type {
	case "":
	case "f", "file":
		want = "file"
	case "d", "dir", "directory":
		want = "dir"
	case "l", "symlink":
		want = "symlink"
	default:
		return FindResult{}, usagef(o.Dir, "type must be f, d or l, got %q", o.Type)
	}
	var glob globMatcher
	if o.Glob != "" {
		var err error
		if glob, err = newGlobs([]string{o.Glob}); err != nil {
			return FindResult{}, err
		}
	}
	excl, err := newGlobs(o.Exclude)
	if err != nil {
		return FindResult{}, err
	}
	res := FindResult{Dir: o.Dir}
	sink := func(p, _ string) error { return o.Sink(p) }
	switch {
	case o.TypedSink != nil:
		sink = o.TypedSink
	case o.Sink == nil:
		res.Paths = []string{}
		sink = func(p, _ string) error { res.Paths = append(res.Paths, p); return nil }
	}
	max := sb.Limits().Items()
	var sinkErr error
	skipped, err := sb.Walk(ctx, o.Dir, sandbox.WalkOptions{Hidden: o.Hidden, NoIgnore: o.NoIgnore, Follow: o.Follow, MaxDepth: o.MaxDepth},
		func(e *sandbox.Entry) error {
			e.Release()
			if len(excl) > 0 && excl.match(e.Rel, e.Type == "dir") {
				return sandbox.SkipDir
			}
			if (want != "" && e.Type != want) || (glob != nil && !glob.match(e.Rel, e.Type == "dir")) {
				return nil
			}
			if res.Count >= max {
				res.Truncated, res.Limit = true, "max_results"
				return errStop
			}
			res.Count++
			if sinkErr = sink(e.Path, e.Type); sinkErr != nil {
				return errStop
			}
			return nil
		})
	if err != nil && !errors.Is(err, errStop) {
		return FindResult{}, err
	}
	if sinkErr != nil {
		return FindResult{}, sinkErr
	}
	res.Skipped = skipped
	if d, err := sb.Lstat(o.Dir); err == nil {
		res.Dir = d.Path
	}
	return res, nil
}

// pathSink sends each path (an item, a JSON string), or one a line, by
// type in colour where the face colours (fd, ls).
func pathSink(s any) PathSink {
	switch s := s.(type) {
	case PathSink:
		return s
	case spec.ItemSink:
		return func(p, _ string) error { return s(p) }
	case spec.TextWriter:
		return func(p, typ string) error {
			s.WriteString(s.Typed(s.Name(p), typ))
			return s.WriteByte('\n')
		}
	}
	return nil
}

// Paints: find's paths may be coloured by type.
func (r FindResult) Paints() {}
