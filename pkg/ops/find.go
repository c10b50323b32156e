package ops

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

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
}

// FindResult lists matching paths in path order.
type FindResult struct {
	Dir     string              `json:"dir"`
	Paths   []string            `json:"paths"`
	Count   int64               `json:"count"`
	Skipped sandbox.WalkSkipped `json:"skipped"`
	Truncation
}

var errStop = errors.New("stop")

// globMatcher matches a walk entry: a pattern without '/' against the base
// name, one with '/' against the path relative to the start.
type globMatcher []string

func newGlobs(pats []string) (globMatcher, error) {
	for _, p := range pats {
		if !doublestar.ValidatePattern(p) {
			return nil, usagef("", "invalid glob %q", p)
		}
	}
	return globMatcher(pats), nil
}

func (g globMatcher) match(rel string) bool {
	for _, p := range g {
		subject := rel
		if !strings.Contains(p, "/") {
			subject = path.Base(rel)
		}
		if ok, _ := doublestar.Match(p, subject); ok {
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
	sink := o.Sink
	if sink == nil {
		res.Paths = []string{}
		sink = func(p string) error { res.Paths = append(res.Paths, p); return nil }
	}
	max := sb.Limits().MaxResults
	var sinkErr error
	skipped, err := sb.Walk(ctx, o.Dir, sandbox.WalkOptions{Hidden: o.Hidden, NoIgnore: o.NoIgnore, Follow: o.Follow, MaxDepth: o.MaxDepth},
		func(e *sandbox.Entry) error {
			e.Release()
			if len(excl) > 0 && excl.match(e.Rel) {
				return sandbox.SkipDir
			}
			if (want != "" && e.Type != want) || (glob != nil && !glob.match(e.Rel)) {
				return nil
			}
			if res.Count >= max {
				res.Truncated, res.Limit = true, "max_results"
				return errStop
			}
			res.Count++
			if sinkErr = sink(e.Path); sinkErr != nil {
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
