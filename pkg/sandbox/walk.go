package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/ignore"
)

// SkipDir, returned by a Walk callback for a directory, skips its contents.
var SkipDir = errors.New("skip this directory")

// WalkOptions controls Walk.
type WalkOptions struct {
	Hidden   bool // report and descend into names starting with '.'
	NoIgnore bool // do not read .gitignore, .ignore or .git/info/exclude
	Follow   bool // follow symlinks: never out of their root, never in a loop
	MaxDepth int  // deepest entry reported (the start's children are 1); < 0: no limit

	writeCheck bool              // apply write rules (write_deny) too: for rm -r
	onDenied   func(path string) // told of each denied entry
}

// WalkSkipped counts what a walk passed over, so an empty result is never
// ambiguous.
type WalkSkipped struct {
	Ignored int64 `json:"ignored"` // by .gitignore/.ignore/exclude, and .git itself
	Hidden  int64 `json:"hidden"`  // dot-names without --hidden
	Denied  int64 `json:"denied"`  // by the policy, or symlinks leading out of the root
	Loops   int64 `json:"loops"`   // symlinked directories already on the path
	Errors  int64 `json:"errors"`  // directories that could not be read
}

// Entry is one path a walk reports. Type is file, dir, symlink or other;
// with Follow a symlink is reported as what it leads to.
type Entry struct {
	Name  string
	Path  string // as output shows it
	Rel   string // relative to the walk's start, '/'-separated
	Type  string
	Depth int
	dir   *Dir // the parent directory, held until Release
	rel   string
	via   bool // reached through a symlink: open through the root
}

// Open opens a file entry for reading, with every check Open makes.
func (e *Entry) Open() (*File, error) {
	t := &target{given: e.Path, rt: e.dir.rt, rel: e.rel}
	if e.via {
		return e.dir.s.openTarget(t)
	}
	if haveOpenChild {
		f, err := openChild(e.dir, e.Name, e.Path)
		if err == nil {
			f.Info.Abs = e.dir.rt.abs(e.rel)
		}
		return f, err
	}
	f, err := e.dir.r.OpenFile(e.Name, openReadFlags, 0)
	if err != nil {
		return nil, mapOpenErr(err, e.Path)
	}
	info, err := e.dir.s.checkOpened(f, t, false, AccessRead)
	if err != nil {
		f.Close()
		return nil, err
	}
	return newFile(e.dir.s, f, info), nil
}

// Release gives back the entry's hold on its parent directory. Every
// entry a walk reports must be released once, from any goroutine.
func (e *Entry) Release() {
	if e.dir != nil {
		e.dir.Close()
		e.dir = nil
	}
}

// openTarget is Open's core for a path already matched to its root.
// Special files are refused before they are opened (opening a device can
// have effects of its own), and the descriptor is checked again after.
func (s *Sandbox) openTarget(t *target) (*File, error) {
	pre, err := t.rt.r.Stat(t.rel)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	if err := kindCheck(pre.Mode(), false, t.given); err != nil {
		return nil, err
	}
	f, err := t.rt.r.OpenFile(t.rel, openReadFlags, 0)
	if err != nil {
		return nil, s.mapErr(err, t)
	}
	info, err := s.checkOpened(f, t, false, AccessRead)
	if err != nil {
		f.Close()
		return nil, err
	}
	return newFile(s, f, info), nil
}

type walker struct {
	s       *Sandbox
	o       WalkOptions
	fn      func(*Entry) error
	skipped WalkSkipped
	onPath  map[[2]uint64]bool // directories on the current path (-L loops)
}

// Walk reports every entry below the directory start, depth first, each
// directory's entries in byte order of their names, so output is in path
// order. It goes through the sandbox only: denied paths are never
// reported, and each directory is reached from its parent's handle.
func (s *Sandbox) Walk(start string, o WalkOptions, fn func(*Entry) error) (WalkSkipped, error) {
	d, err := s.OpenDir(start)
	if err != nil {
		return WalkSkipped{}, err
	}
	w := &walker{s: s, o: o, fn: fn, onPath: map[[2]uint64]bool{}}
	var stack *ignore.Stack
	if !o.NoIgnore {
		stack = w.ancestorIgnores(d)
	}
	if key, ok := fileKey(d.Info); ok {
		w.onPath[key] = true
	}
	err = w.walk(d, "", 0, stack)
	d.Close()
	return w.skipped, err
}

// ancestorIgnores loads the ignore files of the directories between the
// root and the start (the start's own are read by walk).
func (w *walker) ancestorIgnores(d *Dir) *ignore.Stack {
	var st *ignore.Stack
	if d.rel == "." {
		return st
	}
	parts := strings.Split(d.rel, "/")
	for i := 0; i < len(parts); i++ {
		rel := strings.Join(parts[:i], "/")
		if rel == "" {
			rel = "."
		}
		sub, err := openRoot(d.rt.r, rel)
		if err != nil {
			return st
		}
		ad, err := w.s.adoptDir(sub, &target{given: rel, rt: d.rt, rel: rel})
		if err != nil {
			return st
		}
		st = w.pushIgnores(st, ad, nil)
		ad.Close()
	}
	return st
}

// pushIgnores reads dir's .gitignore, .ignore and (beside a .git
// directory) .git/info/exclude, lowest precedence first.
func (w *walker) pushIgnores(st *ignore.Stack, d *Dir, names map[string]fs.FileMode) *ignore.Stack {
	has := func(n string, want fs.FileMode) bool {
		if names == nil {
			fi, err := lstatIn(d, n)
			return err == nil && fi.Mode().Type() == want
		}
		m, ok := names[n]
		return ok && m == want
	}
	var files []*ignore.File
	if has(".git", fs.ModeDir) {
		files = append(files, w.readIgnore(d, ".git/info/exclude"))
	}
	for _, n := range []string{".gitignore", ".ignore"} {
		if has(n, 0) {
			files = append(files, w.readIgnore(d, n))
		}
	}
	dir := d.rel
	if dir == "." {
		dir = ""
	}
	if st == nil {
		st = &ignore.Stack{}
	}
	return st.Push(dir, files...)
}

// readIgnore reads one ignore file through the policy (a denied one is
// not read) and at most 1 MiB of it.
func (w *walker) readIgnore(d *Dir, name string) *ignore.File {
	rel := path.Join(d.rel, name)
	if w.s.checkPatterns(rel, false, AccessRead, name) != nil {
		return nil
	}
	f, err := d.openEntry(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	return ignore.Parse(data)
}

func (w *walker) walk(d *Dir, relPrefix string, depth int, stack *ignore.Stack) error {
	ents, err := dirEntries(d)
	if err != nil {
		w.skipped.Errors++
		return nil
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if !w.o.NoIgnore {
		names := make(map[string]fs.FileMode, 4)
		for _, e := range ents {
			switch e.Name() {
			case ".git", ".gitignore", ".ignore":
				names[e.Name()] = e.Type()
			}
		}
		stack = w.pushIgnores(stack, d, names)
	}
	for _, e := range ents {
		name := e.Name()
		typ := e.Type()
		rel := name
		if d.rel != "." {
			rel = d.rel + "/" + name
		}
		walkRel := name
		if relPrefix != "" {
			walkRel = relPrefix + "/" + name
		}
		isDir := typ == fs.ModeDir
		switch {
		case name == ".git" && isDir && !w.o.writeCheck:
			if w.o.Hidden {
				w.skipped.Ignored++
			} else {
				w.skipped.Hidden++
			}
			continue
		case !w.o.Hidden && name[0] == '.':
			w.skipped.Hidden++
			continue
		case w.s.checkPatterns(rel, isDir, w.access(), name) != nil || (d.rt.special && specialFS(d.rt.abs(rel))):
			w.skipped.Denied++
			if w.o.onDenied != nil {
				w.o.onDenied(childPath(d.Info.Path, name))
			}
			continue
		case stack != nil && stack.Ignored(rel, isDir):
			w.skipped.Ignored++
			continue
		}
		if w.o.MaxDepth >= 0 && depth+1 > w.o.MaxDepth {
			continue
		}
		ent := &Entry{Name: name, Path: childPath(d.Info.Path, name), Rel: walkRel, Type: TypeOf(typ), Depth: depth + 1, rel: rel}
		var sub *Dir
		if typ == fs.ModeSymlink && w.o.Follow {
			fi, err := d.rt.r.Stat(rel)
			if err != nil {
				w.skipped.Denied++ // leads out of the root, or dangles
				continue
			}
			ent.Type, ent.via = TypeOf(fi.Mode()), true
			if fi.IsDir() {
				if sub, err = w.openSub(d, rel, ent.Path, true); err != nil {
					w.skipped.Denied++
					continue
				}
				if key, ok := fileKey(sub.Info); ok && w.onPath[key] {
					sub.Close()
					w.skipped.Loops++
					continue
				}
			}
		} else if isDir {
			if sub, err = w.openSub(d, name, ent.Path, false); err != nil {
				if AsError(err).Code == CodeDenied {
					w.skipped.Denied++
				} else {
					w.skipped.Errors++
				}
				continue
			}
		}
		d.refs.Add(1)
		ent.dir = d
		err := w.fn(ent)
		if sub != nil {
			if err == nil && (w.o.MaxDepth < 0 || depth+1 < w.o.MaxDepth) {
				key, ok := fileKey(sub.Info)
				if ok {
					w.onPath[key] = true
				}
				err = w.walk(sub, walkRel, depth+1, stack)
				delete(w.onPath, key)
			}
			sub.Close()
		}
		if errors.Is(err, SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) access() Access {
	if w.o.writeCheck {
		return AccessWrite
	}
	return AccessRead
}

// openSub opens a child directory: by name from the parent's handle, or
// (a followed symlink) by its root-relative path through the root.
func (w *walker) openSub(d *Dir, name, display string, viaRoot bool) (*Dir, error) {
	rel := name
	var sub *os.Root
	var err error
	if viaRoot {
		sub, err = openRoot(d.rt.r, name)
	} else if haveOpenChild {
		return openChildDir(d, name, display)
	} else {
		sub, err = openRoot(d.r, name)
		rel = path.Join(d.rel, name)
	}
	if err != nil {
		return nil, mapOpenErr(err, name)
	}
	sd, err := w.s.adoptDir(sub, &target{given: display, rt: d.rt, rel: rel})
	if err == nil {
		sd.Info.Path = display
	}
	return sd, err
}

// childPath joins a displayed directory path and a name.
func childPath(dir, name string) string {
	switch {
	case dir == ".":
		return name
	case strings.HasSuffix(dir, "/"):
		return dir + name
	}
	return dir + "/" + name
}

// openEntry opens a regular file that is a direct entry of d (ignore files,
// or a path below such as .git/info/exclude) and checks its type.
func (d *Dir) openEntry(name string) (*File, error) {
	if haveOpenChild && !strings.Contains(name, "/") {
		return openChild(d, name, name)
	}
	if d.r == nil {
		sub, err := openRoot(d.rt.r, d.rel)
		if err != nil {
			return nil, err
		}
		defer sub.Close()
		return openIn(d.s, sub, name)
	}
	return openIn(d.s, d.r, name)
}

func openIn(s *Sandbox, r *os.Root, name string) (*File, error) {
	f, err := r.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return newFile(s, f, Info{Size: fi.Size()}), nil
}

// lstatIn lstats an entry of d.
func lstatIn(d *Dir, name string) (fs.FileInfo, error) {
	if d.r != nil {
		return d.r.Lstat(name)
	}
	return d.rt.r.Lstat(path.Join(d.rel, name))
}
