// Package policy is fsbox's sandbox policy: the TOML file's shape, where
// the policy comes from (discovery, --config, FSBOX_CONFIG, the built-in
// default), and the checks that refuse a policy fail closed. The sandbox
// (package sandbox) enforces what it decides.
//
// Loading is the one place besides the sandbox that looks at the
// filesystem, because it runs before any sandbox exists (the policy is
// what the sandbox is built from): it reads the policy file, looks for the
// user's config file, follows state and audit paths component by
// component (Reach, Canonical) to refuse places a sandboxed call could
// write, and probes /proc for what the platform guarantees. It reads no
// data under a root for a caller, and every path it looks at comes from
// the host (flags, environment, the policy file), never from a command's
// arguments.
package policy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsbox/fsbox/pkg/fserr"
)

// Policy is the decoded TOML policy. Field tags are the file's keys.
type Policy struct {
	Workdir string `toml:"workdir" json:"workdir"`
	// WriteRoots are more writable directories, writable exactly as the
	// workdir is; disjoint from each other and from the workdir.
	WriteRoots []string `toml:"write_roots" json:"write_roots"`
	ReadRoots  []string `toml:"read_roots" json:"read_roots"`
	// Preset names a set of defaults for the keys the file leaves out:
	// "" (none) or "agent".
	Preset string `toml:"preset" json:"preset"`
	// DefaultsOff switches named built-in rule sets off ("agent_config",
	// "secrets").
	DefaultsOff []string `toml:"defaults_off" json:"defaults_off"`
	// Commands switches operations on and off by name; an operation the
	// table leaves out keeps its default (package ops knows the names
	// and defaults, and refuses a name it does not know).
	Commands map[string]bool `toml:"commands" json:"commands"`
	Paths    Paths           `toml:"paths" json:"paths"`
	// DenyHardlinks may also be written at the top level, before any table;
	// it means the same as paths.deny_hardlinks.
	DenyHardlinks bool          `toml:"deny_hardlinks" json:"-"`
	Limits        Limits        `toml:"limits" json:"limits"`
	Write         Write         `toml:"write" json:"write"`
	Sandbox       SandboxPolicy `toml:"sandbox" json:"sandbox"`
	Audit         Audit         `toml:"audit" json:"audit"`
	Journal       Journal       `toml:"journal" json:"journal"`
	// Store is [store]: how the s3:// roots are reached (store.go).
	Store Store `toml:"store" json:"store"`

	// Source is the policy file's canonical path, "" for the built-in default.
	Source string `toml:"-" json:"-"`
	// Link is where the name that reached it lies (its directory resolved,
	// the last component kept): it differs from Source through a symlink.
	Link string `toml:"-" json:"-"`
	// ConfigDir is fsbox's own configuration directory as Load found it
	// in the call's environment (ConfigDir); "" has New read the
	// process's. Nothing below it is readable through fsbox.
	ConfigDir string `toml:"-" json:"-"`
	// CwdWorkdir: the workdir is the current directory because the
	// discovered user config left workdir out (fsbox mcp never serves it).
	CwdWorkdir bool `toml:"-" json:"-"`
	// PreconditionByPreset: Write.RequirePrecondition is true because the
	// preset filled it (the file left it out), not because the file set it:
	// the reference MCP profile drops it (ForReferenceProfile).
	PreconditionByPreset bool `toml:"-" json:"-"`
	// PreconditionLine is the line of the file that sets [write]
	// require_precondition (0: none), for the reference profile's refusal.
	PreconditionLine int `toml:"-" json:"-"`
	// Serve, when not nil, is the bound fsbox mcp DIR... adds to the
	// policy (ServeDirs): the directories served. The policy keeps its
	// roots, its rules and their anchors; the sandbox reaches only the
	// served directories and matches every rule where the policy's
	// roots anchor it.
	Serve *Served `toml:"-" json:"-"`
}

// Served is the bound the directories of fsbox mcp DIR... add to a
// policy: canonical directories, each inside one of its roots (or, with
// no policy file, the roots themselves). The sandbox opens these and no
// other part of the policy's roots.
type Served struct {
	// Workdir is the first directory: writable, where relative paths
	// resolve and are printed from.
	Workdir string
	// WriteRoots are the other writable directories (native: --write;
	// reference: every directory), ReadRoots the rest.
	WriteRoots []string
	ReadRoots  []string
	// Whole: served by the reference profile, which serves each
	// directory whole (readable and writable, as the reference server
	// does): a directory that a deny or write_deny rule matches or holds
	// is config, not only one a deny rule matches.
	Whole bool
}

// Write holds [write].
type Write struct {
	// RequirePrecondition: every change names what it replaces (the
	// sha256 of the file it replaces or removes, or that the file is
	// absent); a change without it is precondition_required.
	RequirePrecondition bool `toml:"require_precondition" json:"require_precondition"`
}

// Paths holds the path rules of [paths].
type Paths struct {
	Deny          []string `toml:"deny" json:"deny"`
	Allow         []string `toml:"allow" json:"allow"`
	WriteDeny     []string `toml:"write_deny" json:"write_deny"`
	DenyRegex     []string `toml:"deny_regex" json:"deny_regex"`
	AllowRegex    []string `toml:"allow_regex" json:"allow_regex"`
	DenyHardlinks bool     `toml:"deny_hardlinks" json:"deny_hardlinks"`
}

// Limits holds [limits]; every value is a positive count of bytes or items.
type Limits struct {
	MaxReadBytes  int64 `toml:"max_read_bytes" json:"max_read_bytes"`
	MaxWriteBytes int64 `toml:"max_write_bytes" json:"max_write_bytes"`
	// MaxResults caps the items of a list result; 0 (the built-in
	// default's, and a user config's that leaves it out) is no cap.
	MaxResults   int64 `toml:"max_results" json:"max_results"`
	MaxSortBytes int64 `toml:"max_sort_bytes" json:"max_sort_bytes"`
	// MaxLineBytes is where JSON and NDJSON cut a line's text (grep's text
	// and context, slice's and sort's lines, cut's fields).
	MaxLineBytes int64 `toml:"max_line_bytes" json:"max_line_bytes"`
	// MaxCallSeconds is the deadline of one call, in whole seconds:
	// walks and searches then give what they found so far (limit
	// "timeout"), a command that cannot give a part fails with timeout.
	// --timeout (and a tool call's timeout) can only lower it.
	MaxCallSeconds int64 `toml:"max_call_seconds" json:"max_call_seconds"`
	// MaxResultBytes is the byte budget of one list result, counted as
	// fsbox's JSON of its items: a list stops at it (limit
	// "max_result_bytes", with a cursor to resume after the last item).
	MaxResultBytes int64 `toml:"max_result_bytes" json:"max_result_bytes"`
}

// HostMaxResults is max_results when a policy named by the host
// (FSBOX_CONFIG, --config) leaves it out.
const HostMaxResults = 10000

// Items is the most items a list result may hold: max_results, or no
// bound (the largest int64) when it is 0.
func (l Limits) Items() int64 {
	if l.MaxResults <= 0 {
		return math.MaxInt64
	}
	return l.MaxResults
}

// Get returns the limit called name ("max_read_bytes").
func (l Limits) Get(name string) (int64, bool) {
	switch name {
	case "max_read_bytes":
		return l.MaxReadBytes, true
	case "max_write_bytes":
		return l.MaxWriteBytes, true
	case "max_results":
		return l.MaxResults, true
	case "max_sort_bytes":
		return l.MaxSortBytes, true
	case "max_line_bytes":
		return l.MaxLineBytes, true
	case "max_call_seconds":
		return l.MaxCallSeconds, true
	case "max_result_bytes":
		return l.MaxResultBytes, true
	}
	return 0, false
}

// CallTimeout is the deadline of one call: max_call_seconds, lowered by
// flag when flag is above 0 and shorter. Seconds past what a
// time.Duration holds (about 292 years) are the longest Duration, so
// every value up to 2^63-1 works.
func (l Limits) CallTimeout(flag time.Duration) time.Duration {
	d := time.Duration(math.MaxInt64)
	if l.MaxCallSeconds < int64(math.MaxInt64/time.Second) {
		d = time.Duration(l.MaxCallSeconds) * time.Second
	}
	if flag > 0 && flag < d {
		return flag
	}
	return d
}

// SandboxPolicy holds [sandbox].
type SandboxPolicy struct {
	Landlock string `toml:"landlock" json:"landlock"`
	// Require names the platform guarantees (Guarantees) fsbox refuses to
	// run without: all four unless the policy lowers it.
	Require []string `toml:"require" json:"require"`
}

// Audit holds [audit].
type Audit struct {
	Log string `toml:"log" json:"log"`
}

// Journal holds [journal]: where the workdir's journal lives (outside
// every root; "" is the default, a directory per workdir under fsbox's
// state directory) and how large it may grow.
type Journal struct {
	Enabled  bool   `toml:"enabled" json:"enabled"`
	Dir      string `toml:"dir" json:"dir"`
	MaxBytes int64  `toml:"max_bytes" json:"max_bytes"`
	// State is fsbox's state directory as Load found it in the call's
	// environment (the default journal lives below it); "" has New read
	// the process's.
	State string `toml:"-" json:"-"`
}

// DefaultJournal is [journal] when the policy leaves it out.
var DefaultJournal = Journal{Enabled: true, MaxBytes: 1 << 30}

// MinJournalBytes is the least [journal] max_bytes: a journal's own
// directories and files count 28 KiB, and a bound below 64 KiB would
// leave too little to keep anything.
const MinJournalBytes = 64 << 10

// DefaultLimits are the limits of SPEC §4.
var DefaultLimits = Limits{
	MaxReadBytes:  1 << 20,
	MaxWriteBytes: 16 << 20,
	MaxResults:    0, // no cap: complete output, as rg and sort give
	MaxSortBytes:  512 << 20,
	MaxLineBytes:  64 << 10,
	// A day: a bound on a call that runs away, not a budget a call is
	// expected to meet; a host serving agents lowers it.
	MaxCallSeconds: 86400,
	// 1 GiB: a bound, not a page; a host serving agents lowers it
	// (64 KiB suits a context window).
	MaxResultBytes: 1 << 30,
}

// newPolicy returns a policy holding every default a file may override.
func newPolicy() *Policy {
	return &Policy{Limits: DefaultLimits, Sandbox: SandboxPolicy{Landlock: "best-effort", Require: slices.Clone(guaranteeNames)}, Commands: map[string]bool{}, Journal: DefaultJournal,
		Store: Store{Concurrency: DefaultStoreConcurrency}}
}

// DefaultPolicy is the built-in policy: workdir = cwd, no extra read roots,
// every command but rm on, .git never written (and, as under every
// policy, the agent_config rule set: RuleSets).
func DefaultPolicy(cwd string) *Policy {
	p := newPolicy()
	p.Workdir = cwd
	p.Paths.WriteDeny = []string{"**/.git/**"}
	return p
}

// WritableDirs are the canonical paths of the policy's writable roots:
// the workdir, then write_roots (a root that cannot be resolved is given
// cleaned). The command layer reads them before any sandbox is open (to
// refuse running a companion binary that lies in one).
func (p *Policy) WritableDirs() []string {
	out := []string{Canonical(p.Workdir)}
	for _, d := range p.WriteRoots {
		out = append(out, Canonical(d))
	}
	return out
}

// expandRoot turns a configured root into an absolute path: ~ and
// environment variables are expanded, and the result must be absolute.
func ExpandRoot(s, home string, getenv func(string) (string, bool)) (string, error) {
	if IsObjectURL(s) {
		return expandObjectRoot(s, getenv)
	}
	var bad error
	s = os.Expand(s, func(name string) string {
		v, ok := getenv(name)
		switch {
		case !ok || v == "":
			bad = fmt.Errorf("environment variable %s is unset or empty", name)
		case strings.ContainsAny(v, "/\x00") || strings.Contains(v, "..") || v == "." || strings.HasPrefix(v, "~"):
			bad = fmt.Errorf("environment variable %s holds %q: a value may not hold '/' or '..', start with '~', or be '.'", name, v)
		}
		return v
	})
	if bad != nil {
		return "", bad
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		if home == "" {
			return "", fmt.Errorf("%q needs a home directory and $HOME is unset", s)
		}
		s = filepath.Join(home, strings.TrimPrefix(s, "~"))
	}
	if !filepath.IsAbs(s) {
		return "", fmt.Errorf("%q is not an absolute path (write it absolute, or start it with ~/)", s)
	}
	return filepath.Clean(s), nil
}

// validate checks everything that does not need the filesystem.
func (p *Policy) Validate() error {
	if err := p.checkNamed(); err != nil {
		return err
	}
	if err := p.checkStore(); err != nil {
		return err
	}
	if p.Journal.MaxBytes < MinJournalBytes {
		return fmt.Errorf("[journal] max_bytes must be at least %d (64 KiB: a journal's own files take 28 KiB of it), got %d", MinJournalBytes, p.Journal.MaxBytes)
	}
	if p.Journal.Dir != "" && !filepath.IsAbs(p.Journal.Dir) && !IsObjectURL(p.Journal.Dir) {
		return fmt.Errorf("[journal] dir must be an absolute path or an s3:// URL, got %q", p.Journal.Dir)
	}
	for _, lim := range []struct {
		name string
		v    int64
	}{{"max_read_bytes", p.Limits.MaxReadBytes}, {"max_write_bytes", p.Limits.MaxWriteBytes},
		{"max_results", p.Limits.Items()}, {"max_sort_bytes", p.Limits.MaxSortBytes},
		{"max_line_bytes", p.Limits.MaxLineBytes}, {"max_call_seconds", p.Limits.MaxCallSeconds},
		{"max_result_bytes", p.Limits.MaxResultBytes}} {
		if lim.v <= 0 {
			return fmt.Errorf("[limits] %s must be a positive number, got %d", lim.name, lim.v)
		}
	}
	switch p.Sandbox.Landlock {
	case "best-effort", "off", "required":
	default:
		return fmt.Errorf(`[sandbox] landlock must be "best-effort", "required" or "off", got %q`, p.Sandbox.Landlock)
	}
	if err := checkRequire(p.Sandbox.Require, platformGuarantees()); err != nil {
		return err
	}
	for _, set := range []struct {
		name string
		pats []string
	}{{"deny", p.Paths.Deny}, {"allow", p.Paths.Allow}, {"write_deny", p.Paths.WriteDeny}} {
		for _, g := range set.pats {
			n := NormalizeGlob(g)
			if n == "" || !doublestar.ValidatePattern(n) {
				return fmt.Errorf("[paths] %s: invalid glob %q", set.name, g)
			}
			if n == ".." || strings.HasPrefix(n, "../") || strings.HasSuffix(n, "/..") || strings.Contains(n, "/../") {
				return fmt.Errorf("[paths] %s: glob %q holds '..': paths are matched after '..' is resolved, so it could never match", set.name, g)
			}
		}
	}
	for _, set := range []struct {
		name string
		res  []string
	}{{"deny_regex", p.Paths.DenyRegex}, {"allow_regex", p.Paths.AllowRegex}} {
		for _, r := range set.res {
			if _, err := regexp.Compile(r); err != nil {
				return fmt.Errorf("[paths] %s: invalid regular expression %q: %v", set.name, r, err)
			}
		}
	}
	return nil
}

// normalizeGlob is a path glob as the paths it is matched against are
// spelled: relative to its root (a leading "/" or "./" only anchors),
// without empty or "." components, and without a trailing "/" (written
// gitignore-style for a directory: a rule on a directory covers what lies
// below it anyway). "secrets/", "/secrets/", "secrets//k" and
// "secrets/./k" silently matched nothing before.
func NormalizeGlob(g string) string {
	parts := strings.Split(g, "/")
	kept := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, "/")
}

// ServePolicy is the policy a long-lived server (fsbox mcp) serves: never
// the built-in default alone (a desktop host may start a server in /,
// which would make / writable). It takes p when p came from a file, or
// directories as the reference MCP server takes them: the first is the
// workdir, the rest read roots, everything else the built-in default.
// With a policy file, the directories only narrow it: the first must lie
// inside its workdir, each other inside one of its roots. Directories are
// resolved here as Load resolves roots: they are configuration.
func ServePolicy(p *Policy, dirs []string) (*Policy, error) {
	return ServeDirs(p, dirs, nil)
}

// ServePolicyWritable is ServePolicy where every listed directory, not
// only the first, is writable (the reference MCP profile: the reference
// server lets each directory it is given be written).
func ServePolicyWritable(p *Policy, dirs []string, allWritable bool) (*Policy, error) {
	if !allWritable {
		return ServeDirs(p, dirs, nil)
	}
	return ServeDirs(p, dirs, func(int) bool { return true })
}

// ServeDirs is the policy fsbox mcp serves for directories dirs, of which
// the first is the workdir and those writable(i) says (nil: none) are
// writable too, the rest read-only. Without a policy file they make one
// (the built-in default's rules, with the directories as its roots);
// with one they narrow it: the policy keeps its roots, rules and anchors
// and gains a bound (Policy.Serve), so whatever the narrowed policy
// allows the policy allows, with the same rule deciding. The workdir and
// each writable directory must lie in one of its writable roots, each
// read directory in one of its roots (else config). A writable directory
// inside the workdir or one listed writable before it is writable with
// it and left out; one that holds such a directory is config (list the
// outer directory first).
func ServeDirs(p *Policy, dirs []string, writable func(i int) bool) (*Policy, error) {
	if p == nil {
		return nil, fserr.Errorf(fserr.CodeConfig, "", "no policy")
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		a, err := filepath.Abs(d)
		if err == nil {
			a, err = filepath.EvalSymlinks(a)
		}
		if err != nil {
			return nil, fserr.Errorf(fserr.CodeConfig, d, "%s: %v", d, unwrapPathErr(err))
		}
		if err := isDir(a); err != nil {
			return nil, fserr.Errorf(fserr.CodeConfig, d, "%s is not a directory", d)
		}
		abs[i] = a
	}
	if p.Source == "" && len(abs) == 0 {
		return nil, fserr.Spellf(fserr.CodeConfig, "", "%s does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give %s, or name the directories to serve (%s)", fserr.SettingServe, fserr.SettingConfig, fserr.SettingServeDirs)
	}
	if p.CwdWorkdir && len(abs) == 0 {
		return nil, fserr.Spellf(fserr.CodeConfig, p.Source, "%s does not serve the current directory, which %s makes the workdir by leaving workdir out (a host may start it in /): set workdir there, set FSBOX_CONFIG, give %s, or name the directories to serve (%s)", fserr.SettingServe, p.Source, fserr.SettingConfig, fserr.SettingServeDirs)
	}
	if len(abs) == 0 {
		return p, nil
	}
	isWrite := func(i int) bool { return i > 0 && writable != nil && writable(i) }
	var reads []string
	for i := 1; i < len(abs); i++ {
		if !isWrite(i) {
			reads = append(reads, abs[i])
		}
	}
	writes, err := disjointRoots(dirs, abs, isWrite)
	if err != nil {
		return nil, err
	}
	served := &Served{Workdir: abs[0], WriteRoots: writes, ReadRoots: reads}
	if p.Source == "" {
		// No policy: the directories are its roots (the one case roots
		// are made from them), the bound the same directories.
		q := DefaultPolicy(abs[0])
		q.Journal.State, q.ConfigDir = p.Journal.State, p.ConfigDir
		q.ReadRoots, q.WriteRoots, q.Serve = slices.Clone(reads), slices.Clone(writes), served
		return q, nil
	}
	if p.CwdWorkdir {
		// The directories stand for the current directory, which the
		// user config left the workdir: the rest of it holds.
		q := *p
		q.Workdir, q.ReadRoots, q.WriteRoots, q.CwdWorkdir = abs[0], append(slices.Clone(reads), p.ReadRoots...), slices.Clone(writes), false
		served.ReadRoots = slices.Clone(q.ReadRoots)
		q.Serve = served
		return &q, nil
	}
	real := func(roots ...string) []string {
		var out []string
		for _, r := range roots {
			if c, err := filepath.EvalSymlinks(r); err == nil {
				out = append(out, c)
			}
		}
		return out
	}
	canWrite := real(append([]string{p.Workdir}, p.WriteRoots...)...)
	canRead := append(canWrite, real(p.ReadRoots...)...)
	for i, d := range abs {
		switch {
		case (i == 0 || isWrite(i)) && !UnderAny(d, canWrite):
			return nil, fserr.Errorf(fserr.CodeConfig, dirs[i], "%s is not inside the policy's workdir %s or a write root: a directory served writable must be writable under the policy (directories only narrow a policy)", dirs[i], p.Workdir)
		case !UnderAny(d, canRead):
			return nil, fserr.Errorf(fserr.CodeConfig, dirs[i], "%s is not inside the policy's roots: directories only narrow a policy", dirs[i])
		}
	}
	if p.Serve != nil {
		// Narrowing a narrowed policy: only what lies in both.
		for i, d := range abs {
			if !UnderAny(d, p.Serve.Reach()) || (i == 0 || isWrite(i)) && !UnderAny(d, p.Serve.Writable()) {
				return nil, fserr.Errorf(fserr.CodeConfig, dirs[i], "%s is not inside the directories the policy is already narrowed to: directories only narrow a policy", dirs[i])
			}
		}
	}
	// The policy keeps its roots (and with them every rule's anchor, the
	// writable roots fsbox's companion check and own files go by); the
	// directories bound what is reached.
	q := *p
	q.Serve = served
	return &q, nil
}

// Reach are the served directories: the workdir, then the write roots,
// then the read roots.
func (b *Served) Reach() []string {
	return append(b.Writable(), b.ReadRoots...)
}

// Writable are the served directories that may be written: the workdir,
// then the write roots.
func (b *Served) Writable() []string {
	return append([]string{b.Workdir}, b.WriteRoots...)
}

// disjointRoots are the write roots among directories abs (as given:
// dirs) after the first, the workdir, that write says are writable: one
// inside the workdir or an earlier write root is left out (it is
// writable with it); one that holds either is config.
func disjointRoots(dirs, abs []string, write func(int) bool) ([]string, error) {
	var roots []string
	for i := 1; i < len(abs); i++ {
		if !write(i) {
			continue
		}
		inside := false
		for j := 0; j < i; j++ {
			if j > 0 && !write(j) {
				continue
			}
			switch {
			case Within(abs[i], abs[j]):
				inside = true
			case Within(abs[j], abs[i]):
				return nil, fserr.Errorf(fserr.CodeConfig, dirs[i], "%s holds %s, listed before it: writable roots are disjoint, so list the outer directory first (the ones inside it are writable with it)", dirs[i], dirs[j])
			}
		}
		if !inside {
			roots = append(roots, abs[i])
		}
	}
	return roots, nil
}

// auditPath expands and checks [audit] log: absolute (after ~ and ${VAR}),
// and outside the workdir, where the sandboxed side could rewrite it.
func auditPath(p *Policy, env Env) (string, error) {
	log, err := ExpandRoot(p.Audit.Log, env.Home, env.Getenv)
	if err != nil {
		return "", err
	}
	for _, work := range p.WritableDirs() {
		if Within(log, work) || ReachesInto(log, []string{work}) != "" {
			what := "the workdir"
			if work != Canonical(p.Workdir) {
				what = "the write root"
			}
			return "", fmt.Errorf("%s lies inside %s %s, where the sandboxed side could rewrite it; keep the audit log outside", log, what, work)
		}
	}
	return log, nil
}
