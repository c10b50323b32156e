package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
	"github.com/fsbox/fsbox/pkg/fserr"
)

// Env is what policy discovery reads from the process environment. Tests
// fill it by hand; the CLI fills it from the real process.
type Env struct {
	ConfigFlag string                      // --config, "" when absent
	ConfigSet  bool                        // --config was given, even as "" (an empty name is never "no flag")
	Getenv     func(string) (string, bool) // os.LookupEnv
	Cwd        string                      // the current directory
	Home       string                      // the home directory ("" if unknown)
	// Known, when set, says which names [commands] may switch: the
	// operations the caller runs (the sandbox knows none by name). An
	// unknown one is a config error naming its line.
	Known func(name string) bool
}

// Load finds and loads the policy in SPEC order: $FSBOX_CONFIG, --config,
// $XDG_CONFIG_HOME/fsbox/config.toml (or ~/.config/fsbox/config.toml), the
// built-in default. Errors are *fserr.Error with fserr.CodeConfig or fserr.CodeUsage.
//
// A policy fsbox itself writes or could have written is never loaded: one
// inside the current directory (unless the host fixed it with
// FSBOX_CONFIG), a --config file inside a writable root of the policy
// that would otherwise apply, inside an audit log's or a journal's
// directory or inside fsbox's state directory (see refuseWritable), and
// one inside its own writable roots (refuseOwnRoots; New refuses one
// there by path too); each by path and by identity (trust.go). A policy
// file with more than one hard link is refused (readPolicyFile).
func Load(env Env) (*Policy, error) {
	if env.Getenv == nil {
		env.Getenv = func(string) (string, bool) { return "", false }
	}
	fromEnv, hostFixed := env.Getenv("FSBOX_CONFIG")
	flagGiven := env.ConfigSet || env.ConfigFlag != ""
	if hostFixed && flagGiven {
		return nil, fserr.Spellf(fserr.CodeUsage, env.ConfigFlag, "%s is not allowed: FSBOX_CONFIG fixes the policy for this host", fserr.SettingConfig)
	}
	if flagGiven && env.ConfigFlag == "" {
		return nil, fserr.Spellf(fserr.CodeUsage, "", "%s needs a policy file name, got an empty one (leave the flag out for the default discovery)", fserr.SettingConfig)
	}
	var file string
	switch {
	case hostFixed:
		if fromEnv == "" {
			return nil, fserr.Errorf(fserr.CodeConfig, "", "FSBOX_CONFIG is set but empty")
		}
		file = fromEnv
	case flagGiven:
		file = env.ConfigFlag
	default:
		file = discovered(env)
	}
	if file == "" {
		p := DefaultPolicy(env.Cwd)
		p.Journal.State, p.ConfigDir = StateDir(env), ConfigDir(env)
		return p, nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(env.Cwd, file)
	}
	p, err := loadFile(file, env, !hostFixed && !flagGiven)
	if err != nil {
		return nil, err
	}
	// A policy the sandboxed side could have written is refused: by where
	// it really is, by where the name that reached it is (a symlink there
	// could be re-pointed), and by identity (a bind mount).
	if !hostFixed && (Within(p.Source, Canonical(env.Cwd)) || Within(p.Link, Canonical(env.Cwd))) {
		return nil, fserr.Errorf(fserr.CodeConfig, file, "the policy file lies inside the current directory, which the built-in default makes writable; keep policies outside the directories they open")
	}
	names := namesOf(file, p)
	if !hostFixed {
		if err := refuseCwd(file, env.Cwd, names); err != nil {
			return nil, err
		}
	}
	if !hostFixed && flagGiven {
		if err := refuseWritable(p, file, env, names); err != nil {
			return nil, err
		}
	}
	if err := refuseOwnRoots(p, file, names); err != nil {
		return nil, err
	}
	return p, nil
}

// discovered returns the user's policy file, $XDG_CONFIG_HOME/fsbox/config.toml
// (or ~/.config/fsbox/config.toml), or "" when there is none.
func discovered(env Env) string {
	dir := ConfigDir(env)
	if dir == "" {
		return ""
	}
	cand := filepath.Join(dir, "config.toml")
	if _, err := os.Stat(cand); err != nil { // policy discovery, before any sandbox exists
		return ""
	}
	return cand
}

// ConfigDir is fsbox's own configuration directory, $XDG_CONFIG_HOME/fsbox
// (or ~/.config/fsbox): where the user's policy is found, and nothing
// below it is readable through fsbox. "" when neither is known.
func ConfigDir(env Env) string {
	if env.Getenv == nil {
		env.Getenv = func(string) (string, bool) { return "", false }
	}
	dir, ok := env.Getenv("XDG_CONFIG_HOME")
	if !ok || dir == "" || !filepath.IsAbs(dir) {
		if env.Home == "" {
			return ""
		}
		dir = filepath.Join(env.Home, ".config")
	}
	return filepath.Join(dir, "fsbox")
}

// StateDir is fsbox's own state directory, $XDG_STATE_HOME/fsbox (or
// ~/.local/state/fsbox): the journal's default home. "" when neither is
// known.
func StateDir(env Env) string {
	if env.Getenv == nil {
		env.Getenv = func(string) (string, bool) { return "", false }
	}
	if dir, ok := env.Getenv("XDG_STATE_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "fsbox")
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".local", "state", "fsbox")
}

// refuseWritable refuses a policy chosen with --config that lies in a
// place fsbox writes or could have written, whatever workdir the file
// itself names: the current directory, every writable root of the policy
// that applies without --config (the user's config file if there is one,
// else the built-in default, whose workdir is the current directory),
// the directories of that policy's audit log and journal and of the
// candidate's own, and fsbox's state directory.
// Each place is compared as named and canonical, against every name of
// the file (policyNames: every place the name passes through on its way
// to the file, so a symlinked directory inside such a place, which could
// be re-pointed, counts too; other mounts of it), and by identity.
func refuseWritable(p *Policy, file string, env Env, names *policyNames) error {
	var places []place
	if fb := discovered(env); fb != "" {
		// The fallback's writable roots are protected even when the
		// fallback does not load now: the sandboxed side may have broken
		// it (renamed a read root away) after planting a policy in its
		// workdir. Only the keys that name places are needed; a fallback
		// without a workdir that can be read leaves nothing to compare, so
		// --config is refused.
		fp, err := fallbackPlaces(fb, env)
		if err != nil {
			return fserr.Spellf(fserr.CodeConfig, file, "the policy that applies without %[1]s, %[2]s, cannot be read (%[3]v): fsbox cannot tell where it writes, so no other policy is loaded with %[1]s; fix it, or set FSBOX_CONFIG", fserr.SettingConfig, fb, err)
		}
		places = append(places, place{dir: fp.work, what: "the workdir of " + fb + ", the policy", fallback: true})
		for _, w := range fp.writeRoots {
			places = append(places, place{dir: w, what: "a write root of " + fb + ", the policy", fallback: true})
		}
		places = append(places, place{dir: fp.logDir, what: "the directory of the audit log of " + fb},
			place{dir: fp.journal, what: "the journal directory of " + fb},
			place{dir: env.Cwd, what: "the current directory"})
	} else {
		places = append(places, place{dir: env.Cwd, what: "the current directory, the workdir of the built-in default", fallback: true})
	}
	if p.Audit.Log != "" {
		places = append(places, place{dir: filepath.Dir(p.Audit.Log), what: "the directory of its own audit log"})
	}
	places = append(places, place{dir: p.Journal.Dir, what: "its own journal directory"})
	if st := StateDir(env); st != "" {
		places = append(places, place{dir: st, what: "fsbox's state directory (its journal's home)"})
	}
	return names.refuseIn(places, writableRefusal(file))
}

// fallback are the places the policy file fb makes writable, as far as
// fallbackPlaces can tell.
type fallback struct {
	work       string
	writeRoots []string
	logDir     string
	journal    string // [journal] dir, "" for the default (in StateDir)
}

// fallbackPlaces reads the writable roots (and the audit log's and the
// journal's directories) of the policy file fb as loosely as it can: its
// roots need not exist and its other keys are not checked, so a policy
// broken after the fact still names the places it made writable.
func fallbackPlaces(fb string, env Env) (fallback, error) {
	if fp, err := loadFile(fb, env, true); err == nil {
		out := fallback{work: fp.Workdir, writeRoots: fp.WriteRoots, journal: fp.Journal.Dir}
		if fp.Audit.Log != "" {
			out.logDir = filepath.Dir(fp.Audit.Log)
		}
		return out, nil
	}
	data, err := readPolicyFile(fb)
	if err != nil {
		return fallback{}, err
	}
	var loose struct {
		Workdir    string   `toml:"workdir"`
		WriteRoots []string `toml:"write_roots"`
		Audit      struct {
			Log string `toml:"log"`
		} `toml:"audit"`
		Journal struct {
			Dir string `toml:"dir"`
		} `toml:"journal"`
	}
	if _, err := toml.Decode(string(data), &loose); err != nil {
		return fallback{}, err
	}
	if loose.Workdir == "" {
		return fallback{}, errors.New("it names no workdir")
	}
	var out fallback
	if out.work, err = ExpandRoot(loose.Workdir, env.Home, env.Getenv); err != nil {
		return fallback{}, err
	}
	for _, w := range loose.WriteRoots {
		// A write root that cannot be expanded leaves a place unknown:
		// nothing is loaded with --config then.
		if w, err = ExpandRoot(w, env.Home, env.Getenv); err != nil {
			return fallback{}, fmt.Errorf("write_roots: %v", err)
		}
		out.writeRoots = append(out.writeRoots, w)
	}
	if loose.Audit.Log != "" && filepath.IsAbs(loose.Audit.Log) {
		out.logDir = filepath.Dir(loose.Audit.Log)
	}
	if loose.Journal.Dir != "" {
		if out.journal, err = ExpandRoot(loose.Journal.Dir, env.Home, env.Getenv); err != nil {
			return fallback{}, fmt.Errorf("[journal] dir: %v", err)
		}
	}
	return out, nil
}

// reach lists every place the resolution of the absolute path abs passes
// through: each component's path as it is met, before and after a
// symlink there is followed (at most 40 links, as the kernel allows).
// The last entry is where abs leads.
func Reach(abs string) []string {
	vol := filepath.VolumeName(abs)
	sep := string(filepath.Separator)
	cur := vol + sep
	rest := strings.Split(abs[len(vol):], sep)
	var seen []string
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur holds no symlink: its parent is lexical
			continue
		}
		next := filepath.Join(cur, c)
		seen = append(seen, next)
		// Lstat/Readlink only: following a name to refuse places a
		// sandboxed call could write (package comment); nothing is opened.
		if fi, err := os.Lstat(next); err == nil && fi.Mode()&fs.ModeSymlink != 0 && hops < 40 { // policy discovery: no sandbox exists yet
			if target, err := os.Readlink(next); err == nil { // the link's target only: nothing is opened
				hops++
				if filepath.IsAbs(target) {
					tv := filepath.VolumeName(target)
					cur, target = tv+sep, target[len(tv):]
				}
				rest = append(strings.Split(target, sep), rest...)
				continue
			}
		}
		cur = next
	}
	return append(seen, cur)
}

// user: the file is the discovered user config, which may leave workdir
// out (the current directory) and takes the built-in default's value for
// every key it leaves out; a policy the host names (FSBOX_CONFIG,
// --config) must set workdir, and its max_results is HostMaxResults when
// left out.
func loadFile(file string, env Env, user bool) (*Policy, error) {
	cfgErr := func(format string, args ...any) *fserr.Error {
		return fserr.Errorf(fserr.CodeConfig, file, "%s: %s", file, fmt.Sprintf(format, args...))
	}
	data, err := readPolicyFile(file)
	if err != nil {
		var links hardLinked
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, cfgErr("policy file does not exist")
		case errors.As(err, &links):
			return nil, cfgErr("the policy file is refused: %v", err)
		}
		return nil, cfgErr("cannot read the policy file: %v", err)
	}
	p := newPolicy()
	md, err := toml.Decode(string(data), p)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, cfgErr("line %d, column %d: %s", pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return nil, cfgErr("%v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, cfgErr("line %d: unknown key %q", keyLine(string(data), k), k.String())
	}
	if md.IsDefined("deny_hardlinks") {
		p.Paths.DenyHardlinks = p.Paths.DenyHardlinks || p.DenyHardlinks
	}
	atLine := func(key ...string) string {
		return fmt.Sprintf("line %d: ", keyLine(string(data), toml.Key(key)))
	}
	if md.IsDefined("limits", "max_results") && p.Limits.MaxResults <= 0 {
		return nil, cfgErr("%s[limits] max_results must be a positive number, got %d (leave it out for no cap)", atLine("limits", "max_results"), p.Limits.MaxResults)
	}
	switch {
	case user && !md.IsDefined("workdir"):
		if env.Cwd == "" {
			return nil, cfgErr("workdir is not set, and the current directory is unknown")
		}
		p.Workdir, p.CwdWorkdir = env.Cwd, true
	case !md.IsDefined("workdir"):
		return nil, cfgErr("workdir is not set (only the discovered user config, fsbox/config.toml in the XDG config directory, may leave it out for the current directory)")
	}
	if user && !md.IsDefined("paths", "write_deny") {
		p.Paths.WriteDeny = DefaultPolicy("").Paths.WriteDeny
	}
	if !user && !md.IsDefined("limits", "max_results") {
		p.Limits.MaxResults = HostMaxResults
	}
	if err := p.checkNamed(); err != nil {
		key := "preset"
		if strings.HasPrefix(err.Error(), "defaults_off") {
			key = "defaults_off"
		}
		return nil, cfgErr("%s%v", atLine(key), err)
	}
	// The preset fills what the file leaves out, after the defaults of
	// its kind (user or host), which it overrides.
	p.ApplyPreset(md.IsDefined)
	if md.IsDefined("write", "require_precondition") {
		p.PreconditionLine = keyLine(string(data), toml.Key{"write", "require_precondition"})
	}
	if err := CheckTenantJournal(p.Journal.Dir, append([]string{p.Workdir}, p.WriteRoots...)); err != nil {
		return nil, cfgErr("%s%v", atLine("journal", "dir"), err)
	}
	if p.Workdir, err = ExpandRoot(p.Workdir, env.Home, env.Getenv); err != nil {
		return nil, cfgErr("%sworkdir: %v", atLine("workdir"), err)
	}
	if err := isDir(p.Workdir); err != nil {
		return nil, cfgErr("%sworkdir %s: %v", atLine("workdir"), p.Workdir, err)
	}
	for i, r := range p.WriteRoots {
		if p.WriteRoots[i], err = ExpandRoot(r, env.Home, env.Getenv); err != nil {
			return nil, cfgErr("%swrite_roots: %v", atLine("write_roots"), err)
		}
		if err := isDir(p.WriteRoots[i]); err != nil {
			return nil, cfgErr("%swrite_roots: %s: %v", atLine("write_roots"), p.WriteRoots[i], err)
		}
	}
	if o := overlapping(p.WritableDirs()); len(o) > 0 {
		return nil, cfgErr("%swrite_roots: %s and %s overlap: writable roots must be disjoint (a subtree that must not be written is a write_deny rule)", atLine("write_roots"), o[0][0], o[0][1])
	}
	for i, r := range p.ReadRoots {
		if p.ReadRoots[i], err = ExpandRoot(r, env.Home, env.Getenv); err != nil {
			return nil, cfgErr("%sread_roots: %v", atLine("read_roots"), err)
		}
		if err := isDir(p.ReadRoots[i]); err != nil {
			return nil, cfgErr("%sread_roots: %s: %v", atLine("read_roots"), p.ReadRoots[i], err)
		}
	}
	if p.Journal.Dir != "" {
		if p.Journal.Dir, err = ExpandRoot(p.Journal.Dir, env.Home, env.Getenv); err != nil {
			return nil, cfgErr("%s[journal] dir: %v", atLine("journal", "dir"), err)
		}
	}
	if p.Audit.Log != "" {
		if p.Audit.Log, err = auditPath(p, env); err != nil {
			return nil, cfgErr("%s[audit] log: %v", atLine("audit", "log"), err)
		}
	}
	if err := p.Validate(); err != nil {
		line := 0
		for _, k := range md.Keys() {
			if strings.Contains(err.Error(), k[len(k)-1]) {
				line = keyLine(string(data), k)
			}
		}
		if line > 0 {
			return nil, cfgErr("line %d: %v", line, err)
		}
		return nil, cfgErr("%v", err)
	}
	if env.Known != nil {
		names := make([]string, 0, len(p.Commands))
		for name := range p.Commands {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !env.Known(name) {
				return nil, cfgErr("line %d: [commands]: unknown command %q", keyLine(string(data), toml.Key{"commands", name}), name)
			}
		}
	}
	p.Source = Canonical(file)
	p.Link = filepath.Join(Canonical(filepath.Dir(file)), filepath.Base(file))
	p.Journal.State, p.ConfigDir = StateDir(env), ConfigDir(env)
	return p, nil
}

// readPolicyFile reads a policy: a regular file, never a pipe, a device
// or anything under /proc, /dev or /sys (--config /dev/stdin would let
// the caller hand fsbox a policy of its own), opened without blocking.
func readPolicyFile(file string) ([]byte, error) {
	// The policy file itself, named by the host (flag or environment),
	// read before the sandbox it defines exists.
	if real, err := filepath.EvalSymlinks(file); err == nil && SpecialFS(real) { // the host-named policy, before any sandbox
		return nil, errors.New("it lies under /proc, /dev or /sys; a policy is a regular file")
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is a %s; a policy is a regular file", KindName(fi.Mode()))
	} else if n := linkCount(fi); n > 1 {
		return nil, hardLinked(n)
	}
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

// hardLinked is a policy file's refusal for having more than one name: a
// hard link is another name no path or directory identity shows, and it
// could lie where the sandboxed side writes.
type hardLinked uint64

func (n hardLinked) Error() string {
	return fmt.Sprintf("it has %d hard links: another name for it could lie where the sandboxed side writes, so a policy file must have exactly one (copy it rather than link it)", uint64(n))
}

// isDir reports why dir, a configured root, cannot serve as one.
func isDir(dir string) error {
	if IsObjectURL(dir) {
		return nil // an object root is not checked at load: an empty prefix is an empty directory
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("does not exist or cannot be resolved: %v", unwrapPathErr(err))
	case !fi.IsDir():
		return errors.New("is not a directory")
	}
	return nil
}

// keyLine finds the line that defines key k, for error messages: the line of
// its table header, or of `name =` inside that table. 0 if not found.
func keyLine(data string, k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	table := ""
	last := k[len(k)-1]
	keyRe := regexp.MustCompile(`^\s*["']?` + regexp.QuoteMeta(last) + `["']?\s*=`)
	want := strings.Join(k[:len(k)-1], ".")
	for i, line := range strings.Split(data, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			table = strings.Trim(strings.SplitN(t, "]", 2)[0], "[ ")
			if table == k.String() {
				return i + 1
			}
			continue
		}
		if table == want && keyRe.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// canonical returns the absolute, symlink-free form of p, or its cleaned
// absolute form when it cannot be resolved.
func Canonical(p string) string {
	if IsObjectURL(p) { // an object root: its URL, as ExpandRoot made it canonical
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	// Part of it does not exist (a state directory not made yet): follow
	// it component by component, symlinks (dangling ones too) included,
	// so a name that would lead into a root through a link is seen there.
	r := Reach(p)
	return r[len(r)-1]
}

// reachesInto names the first of dirs that the resolution of abs passes
// through or ends in ("" when none): a symlink on the way that lies in a
// root counts, since the sandboxed side could re-point it.
func ReachesInto(abs string, dirs []string) string {
	for _, r := range Reach(abs) {
		for _, d := range dirs {
			if Within(r, d) {
				return d
			}
		}
	}
	return ""
}

// within reports whether p equals dir or lies below it, comparing whole
// path components.
// overlapping lists the pairs of dirs of which one is or holds the other.
func overlapping(dirs []string) [][2]string {
	var out [][2]string
	for i, a := range dirs {
		for _, b := range dirs[i+1:] {
			if Within(a, b) || Within(b, a) {
				out = append(out, [2]string{a, b})
			}
		}
	}
	return out
}

func Within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// SpecialFS reports whether an absolute path lies in /proc, /sys or /dev.
func SpecialFS(abs string) bool {
	for _, d := range []string{"/proc", "/sys", "/dev"} {
		if abs == d || strings.HasPrefix(abs, d+"/") {
			return true
		}
	}
	return false
}

func unwrapPathErr(err error) error { return fserr.UnwrapPath(err) }

// KindName names a special file's kind for messages.
func KindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	}
	return "special file"
}

// UnderAny reports whether abs is one of dirs or lies below one.
func UnderAny(abs string, dirs []string) bool {
	for _, d := range dirs {
		if abs == d || strings.HasPrefix(abs, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
