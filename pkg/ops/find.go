package ops

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

var findOp = &spec.Op{
	Name: "find", Class: spec.Read, Result: FindResult{},
	Streams: true,
	Pages:   true,
	Summary: "list paths below DIR matching a glob, honouring .gitignore",
	Help:    "Lists the paths below DIR (the workdir when left out) in path order, honouring ignore files (.ignore everywhere; .gitignore and .git/info/exclude inside a git repository, or anywhere with --no-require-git) and leaving out hidden names; when they leave out everything, the text form says so on stderr. GLOB is a doublestar glob: without '/' it matches the base name, as fd -g. One argument with glob characters is a GLOB, else a DIR. With -l each path comes with its type, size and mtime (entries[] in place of paths[]); an entry that vanishes between the listing of its directory and its description is left out and counted in skipped.errors.",
	Args: []spec.Arg{
		{Name: "dir", Meta: "DIR", Help: "the directory to walk", Use: sandbox.NeedReadDir, Optional: true, Complete: spec.CompleteDirs},
		{Name: "glob", Meta: "GLOB", Help: "keep only paths matching this glob", Optional: true, Complete: spec.CompleteNone},
	},
	Options: []spec.Option{
		{Name: "max-depth", Type: spec.Int, Meta: "N", Min: min0, DefaultText: "no limit", Help: "deepest level to list (DIR's entries are 1)"},
		{Name: "type", Short: "t", Type: spec.Strings, Meta: "TYPE", Values: findTypeWords(), Help: "only f (files), d (directories) or l (symlinks), as fd -t; any other TYPE is one of rg's type names (c, go, py, rust, md, ...: files whose names its globs match, as rg -t; d is the directory here, never D sources). Repeatable: an entry of any of the kinds given, and of any of the type names given"},
		{Name: "type-not", Short: "T", Type: spec.Strings, Meta: "TYPE", Values: findTypeWords(), Help: "leave out f (files), d (directories), l (symlinks), or files of one of rg's type names (repeatable; --type-list lists them)"},
		typeListOption,
		{Name: "exclude", Short: "E", Type: spec.Strings, Meta: "GLOB", Help: "leave out paths matching GLOB (repeatable); excluded directories are not entered"},
		{Name: "hidden", Type: spec.Bool, Help: "include names starting with a dot"},
		{Name: "no-ignore", Type: spec.Bool, Help: "do not honour .gitignore, .ignore and .git/info/exclude"},
		noRequireGitOption,
		{Name: "follow", Short: "L", Type: spec.Bool, Help: "follow symlinks (never out of their root, never in a loop)"},
		{Name: "null", Short: "0", Type: spec.Bool, CLIOnly: true, Help: "in the text form, end each path (each line of -l) with a NUL byte in place of the newline, as fd -0 and find -print0"},
		{Name: "size", Short: "S", Type: spec.Strings, Meta: "[+-]N[kMG]", Help: "only files of this size, as fd -S: +N at least N bytes, -N at most N, N exactly; k, M, G are powers of 1024 (repeatable: all must hold)"},
		{Name: "changed-within", Type: spec.String, Meta: "DUR", Help: "only paths modified within DUR (a Go duration, d and w allowed: 2d, 1w3d, 90m) or since a time (RFC 3339), as fd --changed-within"},
		{Name: "changed-before", Type: spec.String, Meta: "DUR", Help: "only paths modified more than DUR ago, or before a time (RFC 3339), as fd --changed-before"},
		{Name: "long", Short: "l", Type: spec.Bool, Help: "describe each path: entries[{path, type, size, mtime}] in place of paths[] (a symlink as itself unless -L follows it; text: size mtime path a line)"},
		{Name: "limit", Type: spec.Int, Meta: "N", Unit: "paths", Min: min1, Narrows: "max_results", Help: "stop after N paths"},
	},
	Examples: []spec.Example{
		{Cmd: "find . '*.go' --format text", Says: "every Go file under the workdir, as fd -g '*.go'"},
		{Cmd: "find src -l", Says: "each path below src with its type, size and mtime"},
		{Cmd: "find -t go --format text", Says: "every Go source, by rg's type name"},
	},
	JSONNote:      "paths[] without -l, entries[] with it: exactly one of the two",
	Text:          "one path a line, as find or fd (with -0, a NUL after each); with -l, size mtime path a line (size in bytes, mtime RFC 3339 UTC)",
	StreamsUnless: []string{"type-list"},
	Paints:        true,
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		if in.Bool("type-list") {
			return TypeList(), nil
		}
		end := byte('\n')
		if in.Bool("null") {
			end = 0
		}
		return findWith(ctx, sb, in, func(o *FindOptions) {
			if o.Long {
				o.EntrySink = entrySink(in.Sink, end)
			} else {
				o.TypedSink = pathSink(in.Sink, end)
			}
			o.Idle = idleOf(in.Sink)
		})
	},
}

// FindPaths is find's Run (without -l or --type-list) with each path
// found, and its type, sent to sink: the operation's own form of its
// items, for a face that shapes them itself (the reference MCP
// profile's trees and searches).
func FindPaths(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input, sink PathSink) (FindResult, error) {
	return findWith(ctx, sb, in, func(o *FindOptions) { o.TypedSink = sink })
}

// findWith runs find's input, its sinks set by sinks.
func findWith(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input, sinks func(*FindOptions)) (FindResult, error) {
	o, err := FindInput(in)
	if err != nil {
		return FindResult{}, err
	}
	if o.Paging, err = pagingOf(sb, in); err != nil {
		return FindResult{}, err
	}
	sinks(&o)
	return Find(ctx, sb, o)
}

// FindInput turns a find input into options.
func FindInput(in *spec.Input) (FindOptions, error) {
	o := FindOptions{MaxDepth: -1, Types: in.Strings("type"), TypesNot: in.Strings("type-not"), Exclude: in.Strings("exclude"),
		Hidden: in.Bool("hidden"), NoIgnore: in.Bool("no-ignore"), NoRequireGit: in.Bool("no-require-git"), Follow: in.Bool("follow"), Long: in.Bool("long"), Dir: ".", Glob: in.String("glob"), Limit: in.Int("limit")}
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
	for _, v := range in.Strings("size") {
		f, err := parseSizeFilter(v)
		if err != nil {
			return o, err
		}
		o.Sizes = append(o.Sizes, f)
	}
	now := time.Now()
	var err error
	if in.IsSet("changed-within") {
		if o.ChangedAfter, err = parseWhen(in.String("changed-within"), now, "changed-within"); err != nil {
			return o, err
		}
	}
	if in.IsSet("changed-before") {
		if o.ChangedBefore, err = parseWhen(in.String("changed-before"), now, "changed-before"); err != nil {
			return o, err
		}
	}
	return o, nil
}

// SizeFilter is one --size: at least (+), at most (-) or exactly N bytes.
type SizeFilter struct {
	Op    byte // '+', '-' or '='
	Bytes int64
}

func (f SizeFilter) holds(n int64) bool {
	switch f.Op {
	case '+':
		return n >= f.Bytes
	case '-':
		return n <= f.Bytes
	}
	return n == f.Bytes
}

// parseSizeFilter reads [+-]N[kMG] (fd's -S, powers of 1024; b and the
// i-less and -i units alike: 10k, 10K, 10ki, 10KiB).
func parseSizeFilter(s string) (SizeFilter, error) {
	f := SizeFilter{Op: '='}
	v := s
	if v != "" && (v[0] == '+' || v[0] == '-') {
		f.Op, v = v[0], v[1:]
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if i == 0 || err != nil {
		return f, usageErr("size %q: want [+-]N[kMG], such as +1M or -10k", s)
	}
	mult := int64(1)
	switch strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(v[i:]), "b"), "i") {
	case "":
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	case "t":
		mult = 1 << 40
	default:
		return f, usageErr("size %q: the unit is k, M, G or T (powers of 1024)", s)
	}
	if n > math.MaxInt64/mult {
		return f, usageErr("size %q is over 2^63-1 bytes", s)
	}
	f.Bytes = n * mult
	return f, nil
}

// parseWhen reads a --changed-within/--changed-before value: a time
// (RFC 3339) or a duration back from now (Go's, with d for 24h and w
// for 7d allowed, as fd takes them).
func parseWhen(s string, now time.Time, name string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := parseLongDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, usageErr("%s %q: want a duration (90m, 2d, 1w3d) or an RFC 3339 time", name, s)
	}
	return now.Add(-d), nil
}

// parseLongDuration is time.ParseDuration with d (24h) and w (7d) units.
func parseLongDuration(s string) (time.Duration, error) {
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9') {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		var per time.Duration
		switch unit {
		case "d":
			per = 24 * time.Hour
		case "w":
			per = 7 * 24 * time.Hour
		default:
			d, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, err
			}
			total += d
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || f*float64(per) > math.MaxInt64 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		total += time.Duration(f * float64(per))
	}
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	return total, nil
}

// FindOptions are find's inputs.
type FindOptions struct {
	// Paging: a page starts after the path From.Key (relative to Dir, in
	// walk order: sandbox.WalkCompare), compared, never opened.
	Paging
	Dir      string // the directory to walk, "." for the workdir; "" is usage (an empty path is never a path)
	Glob     string // doublestar; without '/' it matches the base name (as fd -g)
	MaxDepth int    // < 0: no limit
	// Types keeps entries of the kinds named (fd's f, d, l) and files of
	// the rg type names given; TypesNot leaves them out (-t, -T).
	Types, TypesNot []string
	Exclude         []string // globs, same rule as Glob; an excluded directory is not entered
	Hidden          bool
	NoIgnore        bool
	NoRequireGit    bool // .gitignore applies outside a git repository too
	Follow          bool
	// Sizes keep only files whose size holds every filter (fd -S);
	// ChangedAfter and ChangedBefore, when set, keep only paths modified
	// at or after, or before, that time.
	Sizes                       []SizeFilter
	ChangedAfter, ChangedBefore time.Time
	// Limit, when above 0 and below max_results, is where the list stops
	// (--limit: the caller's own cut, limit "limit").
	Limit int64
	// Long describes each path (Entries in place of Paths): its type,
	// size and mtime, read by Entry.Stat as the size filters read them.
	Long bool
	Sink func(path string) error // stream instead of collecting
	// TypedSink, when set, is Sink with each path's type (file, dir,
	// symlink, other): the text form colours by it.
	TypedSink PathSink
	// EntrySink, when set with Long, takes each entry instead of
	// collecting it.
	EntrySink EntrySink
	// Idle, when set, is called (on the sinks' goroutine) when the walk
	// is about to wait for a directory: the face passes on what the
	// sinks wrote.
	Idle func()
}

// PathSink receives each path, and its type (file, dir, symlink, other),
// as a walk finds it.
type PathSink = func(path, typ string) error

// EntrySink receives each entry of find -l as a walk finds it.
type EntrySink = func(FindEntry) error

// FindEntry is one path of find -l: a symlink is described as itself
// unless -L followed it.
type FindEntry struct {
	Path  string `json:"path"`
	Type  string `json:"type"`
	Size  int64  `json:"size"`
	Mtime string `json:"mtime"`
}

// FindResult lists matching paths in path order. Exactly one of Paths
// and Entries (-l) is present, unless the items went to a sink.
type FindResult struct {
	Dir     string              `json:"dir"`
	Paths   *[]string           `json:"paths,omitempty" fsbox:"items"`
	Entries *[]FindEntry        `json:"entries,omitempty" fsbox:"items"`
	Count   int64               `json:"count"`
	Skipped sandbox.WalkSkipped `json:"skipped"`
	Truncation

	notes []string // for stderr in the text form (Notes)
}

// Outcome: a limit's cut, and what the text form says on stderr after
// the output: that ignore rules left out everything the walk met.
func (r FindResult) Outcome() spec.Outcome {
	return spec.Outcome{Cut: r.Truncation.outcomeCut(), Notes: r.notes}
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
	if err := beginWalk(ctx, sb, "find"); err != nil {
		return FindResult{}, err
	}
	types, err := newFindTypes(o.Types, o.TypesNot)
	if err != nil {
		return FindResult{}, err
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
	sink := o.sink(&res)
	pg := newPager(sb, o.Limit)
	// A page starts after the path (relative to DIR, in walk order) of
	// the last item the page before it gave; the walk does not enter
	// what sorts before it.
	var after string
	if o.From != nil {
		after = o.From.Key
	}
	var sinkErr error
	var vanished int64 // entries -l could not describe
	wo := walkOptions(o.Hidden, o.NoIgnore, o.NoRequireGit, o.Follow, o.MaxDepth)
	wo.After, wo.Waiting = after, o.Idle
	skipped, err := sb.Walk(ctx, o.Dir, wo,
		func(e *sandbox.Entry) error {
			if len(excl) > 0 && excl.match(e.Rel, e.Type == "dir") {
				e.Release()
				return sandbox.SkipDir
			}
			if !types.keep(e.Type, e.Name) || (glob != nil && !glob.match(e.Rel, e.Type == "dir")) {
				e.Release()
				return nil
			}
			keep, size, mtime, err := o.described(e)
			p, typ, rel := e.Path, e.Type, e.Rel
			e.Release()
			if err != nil || !keep {
				if err != nil && o.Long {
					vanished++ // gone (or unreadable) before -l could describe it
				}
				return nil // one that raced away is no match
			}
			n := jsonStrLen(p)
			if o.Long {
				n = jsonLen(FindEntry{Path: p, Type: typ, Size: size, Mtime: rfc3339(mtime)})
			}
			if lim := pg.admit(n); lim != "" {
				res.cut(lim, o.next(Cursor{Key: after}))
				return errStop
			}
			res.Count++
			after = rel
			if sinkErr = sink(p, typ, size, mtime); sinkErr != nil {
				return errStop
			}
			return nil
		})
	switch {
	case sinkErr != nil:
		return FindResult{}, sinkErr
	case timedOut(ctx, err):
		cutByDeadline(ctx, &res.Truncation) // what the walk found by the deadline
		res.NextCursor = o.next(Cursor{Key: after})
	case err != nil && !errors.Is(err, errStop):
		return FindResult{}, err
	}
	res.Skipped = skipped
	res.Skipped.Errors += vanished
	if d, err := sb.Lstat(o.Dir); err == nil {
		res.Dir = d.Path
	}
	if skipped.AllIgnored() {
		res.notes = append(res.notes, ignoredNote(res.Dir, skipped, "lists"))
	}
	return res, nil
}

// sink is where find's items go: the face's sink, or the result's list.
// The mode's list is present (empty) even when the items go to a sink,
// as grep's is: it says which list the result has.
func (o *FindOptions) sink(res *FindResult) func(path, typ string, size int64, mtime time.Time) error {
	if o.Long {
		res.Entries = &[]FindEntry{}
		return func(path, typ string, size int64, mtime time.Time) error {
			ent := FindEntry{Path: path, Type: typ, Size: size, Mtime: rfc3339(mtime)}
			if o.EntrySink != nil {
				return o.EntrySink(ent)
			}
			*res.Entries = append(*res.Entries, ent)
			return nil
		}
	}
	res.Paths = &[]string{}
	return func(path, typ string, _ int64, _ time.Time) error {
		switch {
		case o.TypedSink != nil:
			return o.TypedSink(path, typ)
		case o.Sink != nil:
			return o.Sink(path)
		}
		*res.Paths = append(*res.Paths, path)
		return nil
	}
}

// described reports whether entry e passes the filters that need its
// size or time, and gives them for -l: one stat at most, and none when
// neither a filter nor -l asks.
func (o *FindOptions) described(e *sandbox.Entry) (keep bool, size int64, mtime time.Time, err error) {
	filters := len(o.Sizes) > 0 || !o.ChangedAfter.IsZero() || !o.ChangedBefore.IsZero()
	if !filters && !o.Long {
		return true, 0, time.Time{}, nil
	}
	if len(o.Sizes) > 0 && e.Type != "file" {
		return false, 0, time.Time{}, nil // sizes are files' (fd)
	}
	if size, mtime, err = e.Stat(); err != nil {
		return false, 0, time.Time{}, err
	}
	for _, f := range o.Sizes {
		if !f.holds(size) {
			return false, size, mtime, nil
		}
	}
	if !o.ChangedAfter.IsZero() && mtime.Before(o.ChangedAfter) {
		return false, size, mtime, nil
	}
	if !o.ChangedBefore.IsZero() && !mtime.Before(o.ChangedBefore) {
		return false, size, mtime, nil
	}
	return true, size, mtime, nil
}

// pathSink sends each path (an item, a JSON string), or one a line (end
// after each: a newline, or find -0's NUL), by type in colour where the
// face colours (fd, ls).
func pathSink(s *spec.Sink, end byte) PathSink {
	switch {
	case s == nil:
		return nil
	case s.Text != nil:
		w := s.Text
		return func(p, typ string) error {
			w.WriteString(w.Typed(w.Name(p), typ))
			return w.WriteByte(end)
		}
	}
	item := s.Item
	return func(p, _ string) error { return item(p) }
}

// entrySink sends each entry of -l (an item, a JSON object), or one a
// line as size mtime path (end after each), the path by type in colour
// where the face colours.
func entrySink(s *spec.Sink, end byte) EntrySink {
	switch {
	case s == nil:
		return nil
	case s.Text != nil:
		w := s.Text
		return func(e FindEntry) error {
			w.WriteString(strconv.FormatInt(e.Size, 10))
			w.WriteByte(' ')
			w.WriteString(e.Mtime)
			w.WriteByte(' ')
			w.WriteString(w.Typed(w.Name(e.Path), e.Type))
			return w.WriteByte(end)
		}
	}
	item := s.Item
	return func(e FindEntry) error { return item(e) }
}
