package sandbox

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ignore"
)

// SkipDir, returned by a Walk callback for a directory, skips its contents.
var SkipDir = errors.New("skip this directory")

// WalkOptions controls Walk.
type WalkOptions struct {
	Hidden   bool // report and descend into names starting with '.'
	NoIgnore bool // do not read .gitignore, .ignore or .git/info/exclude
	// NoRequireGit applies .gitignore outside a git repository too (rg's
	// and fd's --no-require-git). Without it, .gitignore and exclude
	// rules apply only inside one: below a directory holding .git,
	// whether it lies in the walk or above its root (gitAbove).
	NoRequireGit bool
	Follow       bool // follow symlinks: never out of their root, never in a loop
	MaxDepth     int  // deepest entry reported (the start's children are 1); < 0: no limit
	// After, when set, resumes a walk past a position: a path relative
	// to the start, '/'-separated, as Entry.Rel. Only entries that sort
	// strictly after it in walk order (WalkCompare) are reported, and no
	// directory whose whole subtree sorts before it (or at it) is opened
	// or listed; its ancestors, and a directory equal to it, are entered
	// but not reported. It is only compared, never opened or resolved:
	// any string, however malformed, gives a suffix of the walk.
	After string
	// Waiting, when set, is called on the walk's goroutine before it
	// waits for a directory it is about to enter and that is not listed
	// yet (a worker is at it, or the walk lists it itself): a caller
	// that holds entries back in batches (grep) hands them on, so that
	// what the walk found before a directory that hangs (a hard NFS
	// mount) is not held past the call's deadline.
	Waiting func()

	writeCheck bool              // apply write rules (write_deny) too: for rm -r
	workers    int               // listing goroutines: 0 = one per core; < 0 = none (serial)
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
	// IgnoreRules counts ignore rules left out: past an ignore file's
	// first MiB (its unread rest counted as one), or past the glob rules
	// that may apply along one path (ignore.MaxGlobs).
	IgnoreRules int64 `json:"ignore_rules"`
	// LongPaths counts entries whose root-relative path would pass 4096
	// bytes: such a path could not be passed back to fsbox (usage), and
	// not entering them keeps a walk's cost linear in its entries, even
	// over a chain thousands of directories deep.
	LongPaths int64 `json:"long_paths"`

	byRules  int64 // of Ignored, those an ignore file's rule left out (not .git)
	reported int64 // entries the walk reported
}

// AllIgnored reports whether ignore files left out everything the walk
// met: it reported no entry, and an ignore file's rule left out at least
// one (the text form says so on stderr, so an empty answer is never a
// mystery: a tree whose .gitignore is "/*").
func (s WalkSkipped) AllIgnored() bool { return s.reported == 0 && s.byRules > 0 }

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
	hide  bool // at or before WalkOptions.After: entered, not reported
}

// Open opens a file entry for reading, with every check Open makes.
func (e *Entry) Open() (*File, error) {
	f := &File{}
	if err := e.OpenInto(f); err != nil {
		return nil, err
	}
	return f, nil
}

// OpenInto is Open into f, which must be closed (or new): a search that
// opens thousands of entries one after another reuses one File and
// allocates nothing per file. Info.Abs is left empty when the file is
// opened by name from its directory's descriptor (the usual case).
func (e *Entry) OpenInto(f *File) error {
	if !e.via && e.dir.rt.st.exact() {
		return e.dir.openChild(e.Name, e.Path, f)
	}
	t := &target{given: e.Path, rt: e.dir.rt, rel: e.rel}
	var nf *File
	var err error
	if e.via {
		nf, err = e.dir.s.openTarget(t)
	} else {
		nf, err = e.openPortable(t)
	}
	if err != nil {
		return err
	}
	*f = *nf
	return nil
}

// openPortable opens the entry through its directory's handle, following
// a symlink there (inside the root), and checks it as Open does.
func (e *Entry) openPortable(t *target) (*File, error) {
	f := &File{s: e.dir.s}
	fc, err := e.dir.h.openFile(e.Name, f)
	if err != nil {
		return nil, mapOpenErr(err, e.Path)
	}
	info, err := e.dir.s.checkOpened(f.handle(), fc, t, false, AccessRead)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Info = info
	return f, nil
}

// openChild opens the regular file name, an entry of d, into f through
// d's handle, exactly that entry (never through a symlink: its real path
// is d's plus name), and checks what it is: a regular file, on no special
// file system, with no more links than deny_hardlinks allows, none of
// fsbox's state. The name's rules were checked when d was listed. f's
// memory is reused (a search opens thousands of files through one File);
// f.Info.Abs is left empty.
func (d *Dir) openChild(name, display string, f *File) error {
	f.obj = nil
	fc, err := d.h.openChild(name, f)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fserr.Deny(fserr.RuleSymlink, display, "%s became a symlink", display)
		}
		return mapOpenErr(err, display)
	}
	var refuse *fserr.Error
	switch {
	case !fc.Mode.IsRegular():
		refuse = fserr.Deny(fserr.RuleSpecialFile, display, "%s is not a regular file", display)
	case fc.special:
		refuse = fserr.Deny(fserr.RuleSpecialFS, display, "%s lies on procfs or sysfs", display)
	case d.s.policy.Paths.DenyHardlinks && fc.Nlink > 1:
		refuse = fserr.Deny(fserr.RuleHardlink, display, "%s has %d hard links and deny_hardlinks is on", display, fc.Nlink)
	case d.s.state.fileIDs != nil && d.s.stateFile(fc.key) != nil:
		refuse = stateDenial(display, d.s.stateFile(fc.key))
	}
	if refuse != nil {
		f.handle().close()
		return refuse
	}
	f.Info = fc.named(name, display, "")
	f.s, f.n = d.s, 0
	return nil
}

// Release gives back the entry's hold on its parent directory. Every
// entry a walk reports must be released once, from any goroutine.
func (e *Entry) Release() {
	if e.dir != nil {
		e.dir.Close()
		e.dir = nil
	}
}

type walker struct {
	cx      context.Context // the call's: once it is done, nothing more is opened
	s       *Sandbox
	o       WalkOptions
	fn      func(*Entry) error
	skipped WalkSkipped
	visited int64   // entries delivered (emit runs on one goroutine)
	ctx     walkCtx // the walk's own buffers (workers have theirs)
	sched   *sched  // nil: no workers, the walk prepares every directory itself
}

// walkCtx is what one goroutine reuses while preparing directories.
type walkCtx struct {
	scratch listScratch
	ents    []dirent
	slab    []Entry // entries are handed out from here, a block at a time
}

// newEntry hands out an Entry from a block of them: one allocation per
// block rather than per entry. The callback may keep entries (grep does,
// in batches); a block lives as long as any of its entries.
func (c *walkCtx) newEntry() *Entry {
	if len(c.slab) == 0 {
		c.slab = make([]Entry, 128)
	}
	e := &c.slab[0]
	c.slab = c.slab[1:]
	return e
}

// relPaths sets each entry's root-relative path (dirRel + "/" + name),
// built back to back in one string: one allocation per directory instead
// of one per entry. At the root an entry's path is its name.
func relPaths(dirRel string, ents []dirent) {
	if dirRel == "." {
		for i := range ents {
			ents[i].rel = ents[i].name
		}
		return
	}
	n := 0
	for _, e := range ents {
		n += len(dirRel) + 1 + len(e.name)
	}
	var b strings.Builder
	b.Grow(n)
	for _, e := range ents {
		b.WriteString(dirRel)
		b.WriteByte('/')
		b.WriteString(e.name)
	}
	all, off := b.String(), 0
	for i, e := range ents {
		end := off + len(dirRel) + 1 + len(e.name)
		ents[i].rel = all[off:end]
		off = end
	}
}

// WalkCompare compares two '/'-separated relative paths in the order a
// walk reports them, and returns -1, 0 or +1 as a sorts before, with or
// after b. The order is component by component, each in byte order
// (strings.Compare), a path before its descendants: "a" < "a/x" < "a-b"
// < "b". Put another way, it is a byte comparison in which '/' sorts
// below every other byte.
func WalkCompare(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		switch {
		case x == '/':
			return -1
		case y == '/':
			return 1
		case x < y:
			return -1
		}
		return 1
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// Walk reports every entry below the directory start, depth first, each
// directory's entries in byte order of their names, so output is in path
// order. It goes through the sandbox only: denied paths are never
// reported, and each directory is reached from its parent's handle.
//
// Once ctx is done the walk opens no more directories and reports no more
// entries; it returns ctx's error.
func (s *Sandbox) Walk(ctx context.Context, start string, o WalkOptions, fn func(*Entry) error) (WalkSkipped, error) {
	if err := ctx.Err(); err != nil {
		return WalkSkipped{}, err
	}
	d, err := s.OpenDir(start)
	if err != nil {
		return WalkSkipped{}, err
	}
	if tl, ok := d.h.(treeLister); ok && o.MaxDepth != 0 && o.MaxDepth != 1 {
		tl.listTree() // an object root: the subtree in a few flat listings
	}
	w := &walker{cx: ctx, s: s, o: o, fn: fn}
	root := &dirJob{dir: d, list: true}
	if !o.NoIgnore {
		var base *ignore.Stack // inside a repository: .gitignore applies
		if !o.NoRequireGit && (d.rt.st.kind() != kindPosix || !gitAbove(d.rt.dir)) {
			base = ignore.Outside()
		}
		root.stack = w.ancestorIgnores(d, base)
	}
	n := o.workers
	if n == 0 && runtime.GOMAXPROCS(0) > 1 {
		n = runtime.GOMAXPROCS(0)
	}
	if d.rt.url && n >= 0 {
		n = max(n, s.policy.Store.Concurrency) // a listing is a request: [store] concurrency in flight
	}
	if n > 0 && !o.writeCheck {
		w.sched = startSched(w, n)
	}
	root.state.Store(jobRunning)
	w.prepare(root, &w.ctx)
	root.state.Store(jobDone)
	err = w.emit(root)
	if err == nil {
		err = ctx.Err() // a cancel seen while preparing left entries out
	}
	if err == nil && root.listErr != nil && d.rt.url {
		// The start of a walk on an object root could not be listed
		// (refused credentials, no such bucket, a server error): the
		// walk has seen nothing, and an empty result would pass that
		// off as an empty directory.
		err = root.listErr
	}
	if w.sched != nil {
		w.sched.stop()
	}
	d.Close()
	w.skipped.reported = w.visited
	return w.skipped, err
}

// ancestorIgnores loads the ignore files of the directories between the
// root and the start (the start's own are read by walk), on base.
func (w *walker) ancestorIgnores(d *Dir, base *ignore.Stack) *ignore.Stack {
	st := base
	if d.rel == "." {
		return st
	}
	parts := strings.Split(d.rel, "/")
	for i := 0; i < len(parts); i++ {
		rel := strings.Join(parts[:i], "/")
		if rel == "" {
			rel = "."
		}
		h, fc, err := d.rt.st.openDir(w.cx, rel)
		if err != nil {
			return st
		}
		ad, err := w.s.adoptDir(h, fc, &target{given: rel, rt: d.rt, rel: rel}, false)
		if err != nil {
			return st
		}
		st = w.pushIgnores(st, ad, nil, &w.skipped)
		ad.Close()
	}
	return st
}

// pushIgnores reads dir's .ignore and, inside a git repository (see
// ignore.Outside), its .gitignore and (beside a .git directory)
// .git/info/exclude, lowest precedence first.
func (w *walker) pushIgnores(st *ignore.Stack, d *Dir, names map[string]fs.FileMode, sk *WalkSkipped) *ignore.Stack {
	// Without the listing, each name is looked up once (.git is asked
	// after twice): on an object root a lookup is two requests.
	var looked map[string]fs.FileMode // a name's type; missing: fs.ModeIrregular
	has := func(n string, want fs.FileMode) bool {
		if names == nil {
			m, ok := looked[n]
			if !ok {
				m = fs.ModeIrregular
				if fc, err := d.h.lstat(n); err == nil {
					m = fc.Mode.Type()
				}
				if looked == nil {
					looked = map[string]fs.FileMode{}
				}
				looked[n] = m
			}
			return m == want
		}
		m, ok := names[n]
		return ok && m == want
	}
	var files []*ignore.File
	gitDir := has(".git", fs.ModeDir)
	repo := gitDir || has(".git", 0) // a worktree or submodule has a .git file
	if gitDir {
		files = append(files, w.readIgnore(d, ".git/info/exclude", ignore.Exclude))
	}
	if (repo || st.GitApplies()) && has(".gitignore", 0) {
		files = append(files, w.readIgnore(d, ".gitignore", ignore.Gitignore))
	}
	if has(".ignore", 0) {
		files = append(files, w.readIgnore(d, ".ignore", ignore.Dotignore))
	}
	dir := d.rel
	if dir == "." {
		dir = ""
	}
	if st == nil {
		st = &ignore.Stack{}
	}
	st, dropped := st.PushDir(dir, repo, files...)
	sk.IgnoreRules += int64(dropped)
	return st
}

// readIgnore reads one ignore file through the policy (a denied one is
// not read), and at most ignore.MaxBytes of it as rules.
func (w *walker) readIgnore(d *Dir, name string, kind ignore.Kind) *ignore.File {
	rel := path.Join(d.rel, name)
	if w.s.checkPatterns(d.rt, rel, false, AccessRead, name) != nil {
		return nil
	}
	f, err := d.openEntry(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, ignore.MaxBytes+1))
	if err != nil {
		return nil
	}
	p := ignore.Parse(data)
	p.Kind = kind
	return p
}

// dirent is one name in a directory listing, with its type bits.
type dirent struct {
	name string
	rel  string // root-relative path, set by relPaths
	typ  fs.FileMode
}

// listScratch is what listDir reuses from one directory to the next.
type listScratch struct {
	buf   []byte     // getdents
	arena []byte     // the names, back to back
	spans []nameSpan // where each name lies in arena
}

type nameSpan struct {
	start, end int
	typ        fs.FileMode
	unknown    bool // no d_type: fstatat
}

// prepare opens a directory job (unless it is the start, already open)
// and, unless it lies at --max-depth, lists it: sorted, filtered by the
// policy, hidden and ignore rules, with a job for every subdirectory to
// enter. It runs on a worker or on the walk itself, and touches nothing
// but the job and ctx (the callback and the counters are the walk's).
func (w *walker) prepare(j *dirJob, ctx *walkCtx) {
	if !w.openJob(j) || !j.list {
		return
	}
	l, ok := w.listJob(j, ctx)
	if !ok {
		return
	}
	j.items = make([]walkItem, 0, len(l.ents)) // one allocation: fresh memory costs a fault per page
	for _, e := range l.ents {
		if it, ok := w.item(&l, ctx, e); ok {
			j.items = append(j.items, it)
		}
	}
	if w.sched != nil {
		w.sched.push(j.items)
	}
}

// openJob opens the job's directory (unless it is the start, already
// open), and reports whether it has it: once the walk is cancelled, or
// when the directory cannot be opened or (-L) is one of its own
// ancestors, j.fail says why not.
func (w *walker) openJob(j *dirJob) bool {
	if w.cx.Err() != nil {
		if j.from != nil {
			j.from.Close()
			j.from = nil
		}
		j.fail = failError // never emitted: emit returns the context's error first
		return false
	}
	if j.from == nil {
		return true
	}
	sub, err := w.openSub(j.from, j.name, j.display, j.via)
	j.from.Close()
	j.from = nil
	if err != nil {
		j.fail = failDenied
		if !j.via && fserr.AsError(err).Code != fserr.CodeDenied {
			j.fail = failError
		}
		return false
	}
	if key, ok := fileKey(sub.Info); ok && j.via && j.ancestors.has(key) {
		sub.Close()
		j.fail = failLoop
		return false
	}
	j.dir = sub
	return true
}

// listing is a directory a job lists: its entries, and what each is
// decided by.
type listing struct {
	j     *dirJob
	d     *Dir
	ents  []dirent // sorted, each with its root-relative path
	state bool     // a state directory of fsbox: every entry is denied
	stack *ignore.Stack
	// ancestors are the directory's own identity and those above it
	// (-L loops), for its subdirectories' jobs.
	ancestors *keyNode
	// after is the resume position while entries may still sort at or
	// before it; "" once they all come after it (the directory itself
	// does, or an earlier entry did: entries are in walk order).
	after string
}

// listJob lists the job's directory, sorted, with the ignore rules that
// apply in it; false when it is not listed (the walk was cancelled, or
// the listing failed: counted).
func (w *walker) listJob(j *dirJob, ctx *walkCtx) (listing, bool) {
	d := j.dir
	atDirSeam(w.cx, "dir.list", d.Info.Path)
	if w.cx.Err() != nil {
		return listing{}, false // not listed: emit returns the context's error before its entries
	}
	ents, err := d.h.list(&ctx.scratch, ctx.ents)
	ctx.ents = ents // kept for the next directory
	if err != nil {
		j.skipped.Errors++
		j.listErr = err
		return listing{}, false
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	// A state directory of fsbox (ownstate.go): each entry is denied, as
	// below a directory a deny rule matches, and its ignore files are
	// not read.
	_, marked := slices.BinarySearchFunc(ents, journalMarker, func(e dirent, n string) int { return strings.Compare(e.name, n) })
	l := listing{j: j, d: d, ents: ents, state: w.s.stateListed(d, marked) != nil, stack: j.stack, after: w.o.After}
	if !w.o.NoIgnore && !l.state {
		l.stack = w.ignoresIn(j, d, ents)
	}
	if key, ok := fileKey(d.Info); ok {
		l.ancestors = &keyNode{key: key, next: j.ancestors}
	}
	relPaths(d.rel, ents)
	if l.after != "" && j.relPrefix != "" && WalkCompare(j.relPrefix, l.after) > 0 {
		l.after = ""
	}
	return l, true
}

// ignoresIn is the ignore stack for the entries of d: j's, with the
// ignore files d holds (read once the stack has none yet).
func (w *walker) ignoresIn(j *dirJob, d *Dir, ents []dirent) *ignore.Stack {
	var names map[string]fs.FileMode
	for _, e := range ents {
		switch e.name {
		case ".git", ".gitignore", ".ignore":
			if names == nil {
				names = make(map[string]fs.FileMode, 3)
			}
			names[e.name] = e.typ
		}
	}
	if names != nil || j.stack == nil {
		return w.pushIgnores(j.stack, d, names, &j.skipped)
	}
	return j.stack
}

// item is the walk's item for entry e of l: its Entry, and for a
// directory to enter the job that prepares it; false when e is not
// walked (before the resume position, past --max-depth, or left out:
// counted).
func (w *walker) item(l *listing, ctx *walkCtx, e dirent) (walkItem, bool) {
	j, d, depth := l.j, l.d, l.j.depth
	name, typ, rel := e.name, e.typ, e.rel
	// The path relative to the walk's start, and the path as shown,
	// are usually the tail of rel, or rel itself: share its bytes.
	walkRel := name
	if j.relPrefix != "" {
		walkRel = joinShared(rel, j.relPrefix, name)
	}
	hide, skip := w.resume(l, walkRel, typ, depth)
	if skip {
		return walkItem{}, false
	}
	isDir := typ == fs.ModeDir
	if !w.admit(l, name, rel, isDir) {
		return walkItem{}, false
	}
	if w.o.MaxDepth >= 0 && depth+1 > w.o.MaxDepth {
		return walkItem{}, false
	}
	display := rel
	if d.Info.Path != d.rel {
		display = childPath(d.Info.Path, name)
	}
	ent := ctx.newEntry()
	*ent = Entry{Name: name, Path: display, Rel: walkRel, Type: TypeOf(typ), Depth: depth + 1, rel: rel, hide: hide}
	it := walkItem{ent: ent}
	if typ == fs.ModeSymlink && w.o.Follow {
		var ok bool
		if isDir, ok = w.follow(l, ent, rel, name); !ok || hide && !isDir {
			return walkItem{}, false
		}
	}
	if isDir {
		it.sub = &dirJob{from: d, name: name, via: ent.via, display: display, relPrefix: walkRel,
			depth: depth + 1, list: w.o.MaxDepth < 0 || depth+1 < w.o.MaxDepth,
			stack: l.stack, ancestors: l.ancestors, done: make(chan struct{})}
		if ent.via {
			it.sub.name = rel
		}
		d.refs.Add(1) // the job's hold on its parent, until it opens
	}
	return it, true
}

// resume places an entry (walkRel, of type typ, in a directory at depth)
// against the resume position, decided before anything else: what sorts
// before it is skipped (not counted, opened or listed); an ancestor of
// it, or a directory at it, is entered hidden (unreported), and passes
// every check after this as it would if it were shown.
func (w *walker) resume(l *listing, walkRel string, typ fs.FileMode, depth int) (hide, skip bool) {
	if l.after == "" {
		return false, false
	}
	after := l.after
	switch c := WalkCompare(walkRel, after); {
	case c > 0:
		l.after = ""
		return false, false
	case c < 0 && !(len(after) > len(walkRel) && after[len(walkRel)] == '/' && after[:len(walkRel)] == walkRel):
		return false, true
	case typ != fs.ModeDir && (typ != fs.ModeSymlink || !w.o.Follow):
		return false, true // not a directory: nothing below it to come back for
	case w.o.MaxDepth >= 0 && depth+1 >= w.o.MaxDepth:
		return false, true // its entries lie past --max-depth
	}
	return true, false
}

// admit reports whether the entry name (rel, root-relative) of l is
// walked: not too long a path, not .git, not hidden, not denied (the
// policy, a state directory, a special filesystem) and not ignored. An
// entry left out is counted by why.
func (w *walker) admit(l *listing, name, rel string, isDir bool) bool {
	j, d, stack := l.j, l.d, l.stack
	switch {
	case len(rel) > maxPathLen:
		j.skipped.LongPaths++
	case name == ".git" && isDir && !w.o.writeCheck:
		if w.o.Hidden {
			j.skipped.Ignored++
		} else {
			j.skipped.Hidden++
		}
	case !w.o.Hidden && name[0] == '.' && (stack == nil || stack.Match(rel, isDir) != -1):
		// A dot-name a '!' rule whitelists is shown (rg, fd).
		j.skipped.Hidden++
	case l.state || w.s.admitChild(d.rt, rel, isDir, w.access(), name) != nil:
		j.skipped.Denied++
		if w.o.onDenied != nil {
			j.denied = append(j.denied, childPath(d.Info.Path, name))
		}
	case stack != nil && stack.Ignored(rel, isDir):
		j.skipped.Ignored++
		j.skipped.byRules++
	default:
		return true
	}
	return false
}

// follow resolves the symlink ent (rel, root-relative, called name) that
// -L follows: ent takes its target's type, and isDir says whether that
// is a directory to enter. A link that dangles inside its root stays the
// symlink it is; one that leads out of the root, or where a deny rule
// reaches, is left out (false: counted as denied).
func (w *walker) follow(l *listing, ent *Entry, rel, name string) (isDir, ok bool) {
	d := l.d
	fc, err := d.rt.st.stat(w.cx, rel)
	switch {
	case w.s.deniedAncestor(d.rt, rel, name) != nil || (err != nil && !errors.Is(err, fs.ErrNotExist)):
		// Leads out of the root, or where a deny rule reaches: both
		// look the same.
		l.j.skipped.Denied++
		return false, false
	case err != nil:
		// Dangles inside its root: listed as the symlink it is, as fd
		// -L lists it (find -L -t l), and not followed.
		return false, true
	}
	ent.Type, ent.via = TypeOf(fc.Mode), true
	return fc.Mode.IsDir(), true
}

// emit reports a prepared directory's entries in order, entering each
// subdirectory (prepared by a worker ahead of time, or now) before going
// on: the output is the serial walk's, whatever ran in parallel.
func (w *walker) emit(j *dirJob) (err error) {
	w.skipped.Add(j.skipped)
	for _, p := range j.denied {
		w.o.onDenied(p)
	}
	d, items := j.dir, j.items
	j.items = nil
	defer func() {
		for _, it := range items { // what an error left unvisited
			if it.sub != nil {
				w.discard(it.sub)
			}
		}
	}()
	for len(items) > 0 {
		if err := w.cx.Err(); err != nil {
			return err
		}
		it := items[0]
		items = items[1:]
		if sub := it.sub; sub != nil {
			if w.o.Waiting != nil && sub.state.Load() != jobDone {
				w.o.Waiting()
			}
			w.get(sub)
			if err := w.cx.Err(); err != nil {
				// Done while it was prepared (a listing that hung until
				// the deadline): the directory is not reported either.
				w.release(sub)
				return err
			}
			switch sub.fail {
			case failDenied:
				w.skipped.Denied++
				continue
			case failError:
				w.skipped.Errors++
				continue
			case failLoop:
				w.skipped.Loops++
				continue
			}
		}
		if !it.ent.hide {
			d.refs.Add(1)
			it.ent.dir = d
			err = w.fn(it.ent)
			if w.visited++; w.s.progress != nil && w.visited%ProgressEvery == 0 {
				w.s.progress(w.visited)
			}
		}
		if sub := it.sub; sub != nil {
			if err == nil && sub.list {
				err = w.emit(sub)
				sub.dir.Close()
			} else {
				w.release(sub)
			}
		}
		if errors.Is(err, SkipDir) {
			err = nil
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
	var h dirHandle
	var fc facts
	var err error
	switch {
	case viaRoot:
		h, fc, err = d.rt.st.openDir(w.cx, name)
	case d.rt.st.exact():
		return d.openChildDir(name, display)
	default:
		h, fc, err = d.h.openDir(name)
		rel = path.Join(d.rel, name)
	}
	if err != nil {
		return nil, mapOpenErr(err, name)
	}
	sd, err := w.s.adoptDir(h, fc, &target{given: display, rt: d.rt, rel: rel}, true)
	if err == nil {
		sd.Info.Path = display
	}
	return sd, err
}

// openChildDir opens the directory name, an entry of d, through d's
// handle, exactly that entry (never through a symlink: its real path is
// d's plus name), on no special file system. The name's rules were
// checked when d was listed.
func (d *Dir) openChildDir(name, display string) (*Dir, error) {
	h, fc, err := d.h.openChildDir(name)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fserr.Deny(fserr.RuleSymlink, display, "%s is no longer a directory", display)
		}
		return nil, mapOpenErr(err, display)
	}
	if fc.special {
		h.close()
		return nil, fserr.Deny(fserr.RuleSpecialFS, display, "%s lies on procfs or sysfs", display)
	}
	rel := name
	if d.rel != "." {
		rel = d.rel + "/" + name
	}
	sub := &Dir{s: d.s, rt: d.rt, h: h, rel: rel, Info: fc.named(name, display, d.rt.abs(rel))}
	sub.refs.Store(1)
	return sub, nil
}

// joinShared returns prefix+"/"+name, as a substring of full when full
// (a path ending in "/"+name) ends with it, so no bytes are copied.
func joinShared(full, prefix, name string) string {
	n := len(prefix) + 1 + len(name)
	if len(full) >= n && (len(full) == n || full[len(full)-n-1] == '/') {
		if t := full[len(full)-n:]; t[:len(prefix)] == prefix && t[len(prefix)] == '/' && t[len(prefix)+1:] == name {
			return t
		}
	}
	return prefix + "/" + name
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
	if d.rt.st.exact() && !strings.Contains(name, "/") {
		f := &File{}
		if err := d.openChild(name, name, f); err != nil {
			return nil, err
		}
		return f, nil
	}
	f := &File{s: d.s}
	fc, err := d.h.openFile(name, f)
	if err != nil {
		return nil, err
	}
	if !fc.Mode.IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	f.Info = Info{Size: fc.Size}
	// Checked where the name was: a symlink on the way (.git/info/exclude
	// -> ../../.env, made by another process) would feed the lines of a
	// file the policy denies into the ignore rules, and the walk's counts
	// would tell whether a guessed line is in it.
	want := d.rt.abs(path.Join(d.rel, name))
	if real, err := f.handle().where(want); err != nil || real != want {
		f.Close()
		return nil, fserr.Deny(fserr.RuleSymlink, name, "%s leads elsewhere through a symlink", name)
	}
	return f, nil
}

// statOpened describes the entry through a checked open (a file) or
// its Info as the walk found it (a directory or a symlink).
func (e *Entry) statOpened() (int64, time.Time, error) {
	if e.Type != "file" {
		info, err := e.dir.s.Lstat(e.Path)
		return info.Size, info.ModTime, err
	}
	var f File
	if err := e.OpenInto(&f); err != nil {
		return 0, time.Time{}, err
	}
	defer f.Close()
	return f.Info.Size, f.Info.ModTime, nil
}
