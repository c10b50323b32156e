//go:build unix

package ops

// The property of issue 39 ("narrowing never widens"), through the
// operations: random policies (deny, allow, write_deny, the agent preset,
// a write root), random narrowings (directories fsbox mcp serves, native
// or reference, at, under and above denied directories; client roots
// through Sandbox.Narrow, alone or over a served sandbox; read's
// --max-bytes and ls's and find's --limit), random paths (absolute, with
// ".." detours through existing and missing names, through symlinks to
// a denied directory, a plain one and one outside every root) and every
// operation (read, stat, ls, grep, find, wc, write, edit, mv, cp, rm,
// mkdir). Checked:
//
//  1. What the narrowed sandbox allows, the policy's own sandbox allows;
//     what the narrowed one denies by a rule of the policy (deny, allow,
//     write_deny, own_file, config_file), the policy's own denies by the
//     same rule and rule set. A path find or grep reaches through the
//     narrowed sandbox the policy's own may stat.
//  2. The full answer (code, message, rule, and the result's JSON) for
//     a path through a directory the policy denies is the same whether
//     or not a name inside that directory exists (made as a directory, a
//     file or a symlink between the two asks), in either sandbox.
//  3. A policy file the sandboxed side wrote (fsbox write into a writable
//     root of the user's discovered policy) is never loaded as --config,
//     by its name or through a symlink to it.
//
// A mutating call that succeeded is undone by rebuilding the trees
// before the other sandbox is asked, so both answer for the same tree.
//
// Bounded by count: FSBOX_PROPERTY_N sequences (default 25) of
// FSBOX_PROPERTY_STEPS steps (default 20). FSBOX_PROPERTY_SEED fixes the
// seed; a failure prints the seed, the policy, the narrowing and the
// steps, with the replay line
// FSBOX_PROPERTY_SEED=<seed> FSBOX_PROPERTY_N=1 go test ./pkg/ops -run TestPropertyNarrow
//
// Fails on c24bc27 (findings 1, 3 and 5 of issue 39). Checked by reverting
// each fix alone and running the default 25 sequences from
// FSBOX_PROPERTY_SEED=1 (300 sequences from 1000 pass with every fix):
//
//   - With finding 1's fix reverted (ServeDirs making the served
//     directories the roots again: q.Workdir, q.WriteRoots, q.ReadRoots =
//     abs[0], writes, reads instead of q.Serve = served), seed 1 fails:
//     serving W/secret under deny ["docs/*.txt" "secret/**"] (reference)
//     is accepted and "ls W/secret: the narrowed sandbox allows it, the
//     policy answers denied/deny ... matches the deny pattern secret/**".
//   - With finding 3's fix reverted (refuseWritable protecting the
//     fallback's workdir but not its write_roots), seed 1 fails:
//     "--config W2/evil.toml, written through fsbox into a writable root
//     of the user's policy, is not refused: <nil> (loaded W2/evil.toml,
//     workdir out, read roots ["/"])".
//   - With finding 5's fix reverted (git show 4295719 --
//     pkg/sandbox/resolve.go | git apply -R: ".." walked, not lexical),
//     seed 1 fails: "grep W/secret/probe/../../sub through the narrowed
//     sandbox answers not_found ... does not exist while W/secret/probe is
//     missing and not_found ... (a parent is not a directory) once it
//     exists: an existence oracle in denied secret".

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func TestPropertyNarrowNeverWidens(t *testing.T) {
	n := envInt("FSBOX_PROPERTY_N", 25)
	steps := envInt("FSBOX_PROPERTY_STEPS", 20)
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps", seed, n, steps)
	failed := 0
	for i := 0; i < n; i++ {
		if !narrowSequence(t, seed+uint64(i), steps) {
			if failed++; failed >= envInt("FSBOX_PROPERTY_MAXFAIL", 3) {
				return
			}
		}
	}
}

// narrowDirs are the directories of the test tree (W and its copy are
// the same), narrowFiles the files in each.
var (
	narrowDirs  = []string{"", "secret", "secret/sub", "sub", "sub/secret", "sub/deep", ".git", ".git/hooks", "vendor", "docs", ".ssh"}
	narrowFiles = []string{"a.txt", "k.pem", "id_rsa"}
	narrowLinks = map[string]string{"lsec": "secret", "lsub": "sub", "lout": "../out"}
)

type narrowSeq struct {
	t                      *testing.T
	seed                   uint64
	r                      *rand.Rand
	base, w, w2, out, home string
	log                    []string
	failed                 bool
}

func (s *narrowSeq) fail(format string, args ...any) {
	s.failed = true
	s.t.Errorf("%s\n\nreplay: FSBOX_PROPERTY_SEED=%d FSBOX_PROPERTY_N=1 go test ./pkg/ops -run TestPropertyNarrow\nsteps:\n  %s",
		fmt.Sprintf(format, args...), s.seed, strings.Join(s.log, "\n  "))
}

// build (re)makes the trees: every entry of W, W2 and out removed and
// made again (the roots themselves stay: the sandboxes hold them open).
func (s *narrowSeq) build() {
	for _, root := range []string{s.w, s.w2, s.out} {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	for _, d := range narrowDirs {
		for _, f := range narrowFiles {
			if err := os.MkdirAll(filepath.Join(s.w, d), 0o755); err != nil {
				s.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.w, d, f), []byte("alpha "+d+"/"+f+"\n"), 0o644); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	for name, target := range narrowLinks {
		if err := os.Symlink(target, filepath.Join(s.w, name)); err != nil {
			s.t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(s.w2, "a.txt"), filepath.Join(s.out, "s.txt")} {
		if err := os.WriteFile(f, []byte("alpha outside\n"), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// answer is everything a call says: its error's code, rule, rule set and
// message, or its result as JSON.
type answer struct {
	Code, Rule, Set, Msg, Result string
	res                          any
}

func (a answer) String() string {
	if a.Code == "" {
		return "ok " + a.Result
	}
	return fmt.Sprintf("%s/%s(%s) %q", a.Code, a.Rule, a.Set, a.Msg)
}

func answerOf(res any, err error) answer {
	if err != nil {
		e := fserr.AsError(err)
		return answer{Code: string(e.Code), Rule: string(e.Rule), Set: e.Set, Msg: e.Error()}
	}
	b, _ := json.Marshal(res)
	return answer{Result: string(b), res: res}
}

var narrowOps = []string{"read", "stat", "ls", "grep", "find", "wc", "write", "edit", "mv", "cp", "rm", "mkdir"}

func mutates(op string) bool {
	switch op {
	case "write", "edit", "mv", "cp", "rm", "mkdir":
		return true
	}
	return false
}

// call runs op on p (absolute) through sb; limit narrows read (bytes)
// and ls and find (entries) when above 0.
func (s *narrowSeq) call(sb *sandbox.Sandbox, op, p string, limit int64) answer {
	ctx := context.Background()
	var res any
	var err error
	switch op {
	case "read":
		res, err = Read(ctx, sb, ReadOptions{Path: p, MaxBytes: limit})
	case "stat":
		res, err = Stat(ctx, sb, StatOptions{Path: p})
	case "ls":
		res, err = Ls(ctx, sb, LsOptions{Path: p, All: true, Limit: limit})
	case "grep":
		res, err = Grep(ctx, sb, GrepOptions{Pattern: "alpha", Paths: []string{p}, Hidden: true, NoIgnore: true})
	case "find":
		res, err = Find(ctx, sb, FindOptions{Dir: p, MaxDepth: -1, Hidden: true, NoIgnore: true, Limit: limit})
	case "wc":
		res, err = Wc(ctx, sb, WcOptions{Paths: []string{p}})
	case "write":
		res, err = Write(ctx, sb, WriteOptions{Path: p, Content: strings.NewReader("alpha written\n")})
	case "edit":
		res, err = Edit(ctx, sb, EditOptions{Path: p, Edits: []EditSpec{{Old: "alpha", New: "beta"}}})
	case "mv":
		res, err = Move(ctx, sb, p, filepath.Join(s.w, "docs", "moved"), false)
	case "cp":
		res, err = Copy(ctx, sb, p, filepath.Join(s.w, "docs", "copied"), false)
	case "rm":
		res, err = Remove(ctx, sb, p, true)
	case "mkdir":
		res, err = Mkdir(ctx, sb, p)
	}
	return answerOf(res, err)
}

// randPath is a path below W (or now and then W2) as an agent might
// spell it: through a symlink, with a ".." detour through an existing or
// missing name.
func (s *narrowSeq) randPath() string {
	if s.r.IntN(10) == 0 {
		return filepath.Join(s.w2, pick(s.r, []string{"a.txt", "new.txt", "evil.toml"}))
	}
	d := pick(s.r, narrowDirs)
	if s.r.IntN(4) == 0 {
		d = pick(s.r, []string{"lsec", "lsub", "lout", "lsec/sub"})
	}
	p := s.w + "/" + d
	if s.r.IntN(3) == 0 { // a detour: NAME/.. (NAME existing or not, a file or a directory)
		p += "/" + pick(s.r, []string{"sub", "zz", "a.txt", "id_rsa"}) + "/.."
		if s.r.IntN(2) == 0 {
			p += "/../" + pick(s.r, narrowDirs)
		}
	}
	switch s.r.IntN(5) {
	case 0: // the directory itself
	case 1:
		p += "/new.txt"
	default:
		p += "/" + pick(s.r, narrowFiles)
	}
	return p
}

// policyRules are the deny, allow and write_deny pools of the random
// policies.
var (
	narrowDeny      = []string{"secret", "secret/**", "sub/secret/**", "**/secret/**", "**/*.pem", "docs/*.txt", "**/deep", ".ssh/**"}
	narrowAllow     = []string{"**/*.txt", "sub/**", "*.txt", "docs/**"}
	narrowWriteDeny = []string{"vendor/**", "**/hooks/**", "sub/*.txt", "**/sub/deep/**"}
)

func pickSome(r *rand.Rand, pool []string, most int) []string {
	var out []string
	for i := r.IntN(most + 1); i > 0; i-- {
		out = append(out, pick(r, pool))
	}
	return out
}

// policyRule: a denial a rule of the policy decided (not the bound).
func policyRule(a answer) bool {
	switch a.Rule {
	case "deny", "allow", "write_deny", "own_file", "config_file":
		return a.Code != ""
	}
	return false
}

func narrowSequence(t *testing.T, seed uint64, steps int) bool {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	s := &narrowSeq{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x39)), base: base,
		w: filepath.Join(base, "w"), w2: filepath.Join(base, "w2"), out: filepath.Join(base, "out"), home: filepath.Join(base, "home")}
	for _, d := range []string{s.w, s.w2, s.out, filepath.Join(s.home, ".config", "fsbox"), filepath.Join(base, "cwd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.build()
	r := s.r
	p := policy.DefaultPolicy(s.w)
	p.WriteRoots = []string{s.w2}
	p.Source, p.Link = filepath.Join(base, "p.toml"), filepath.Join(base, "p.toml")
	p.Journal.State = filepath.Join(base, "state")
	p.Paths.Deny, p.Paths.Allow = pickSome(r, narrowDeny, 3), pickSome(r, narrowAllow, 1)
	p.Paths.WriteDeny = append(p.Paths.WriteDeny, pickSome(r, narrowWriteDeny, 2)...)
	if r.IntN(3) == 0 {
		p.Preset = "agent"
		p.ApplyPreset(nil)
		p.Write.RequirePrecondition, p.PreconditionByPreset = false, false
	}
	s.log = append(s.log, fmt.Sprintf("policy: deny %q allow %q write_deny %q preset %q", p.Paths.Deny, p.Paths.Allow, p.Paths.WriteDeny, p.Preset))
	orig, err := sandbox.New(p, s.home)
	if err != nil {
		t.Fatalf("seed %d: policy %+v: %v", seed, p.Paths, err)
	}
	defer orig.Close()

	// The narrowing: served directories (native or reference), client
	// roots, or both.
	narrowed := orig
	kind := r.IntN(3)
	if kind != 1 {
		sdirs := []string{filepath.Join(s.w, pick(r, narrowDirs))}
		if r.IntN(2) == 0 {
			sdirs = append(sdirs, filepath.Join(s.w, pick(r, narrowDirs)))
		}
		reference := r.IntN(2) == 0
		q, err := policy.ServeDirs(p, sdirs, func(int) bool { return reference })
		if err == nil && reference {
			q, err = policy.ForReferenceProfile(q)
		}
		var sb *sandbox.Sandbox
		if err == nil {
			sb, err = sandbox.New(q, s.home)
		}
		s.log = append(s.log, fmt.Sprintf("serve %q (reference %v): %v", sdirs, reference, err))
		if err != nil {
			if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConfig {
				s.fail("serving %q: %v, want served or config", sdirs, err)
			}
			kind = 1
		} else {
			defer sb.Close()
			narrowed = sb
		}
	}
	if kind != 0 {
		roots := []string{filepath.Join(s.w, pick(r, narrowDirs))}
		v, kept, _ := narrowed.Narrow(roots)
		s.log = append(s.log, fmt.Sprintf("client roots %q: kept %q", roots, kept))
		narrowed = v
	}

	for i := 0; i < steps && !s.failed; i++ {
		op, path := pick(r, narrowOps), s.randPath()
		var limit int64
		if r.IntN(3) == 0 {
			limit = int64(1 + r.IntN(8))
		}
		nv := s.call(narrowed, op, path, limit)
		if nv.Code == "" && mutates(op) {
			s.build()
		}
		ov := s.call(orig, op, path, 0)
		if ov.Code == "" && mutates(op) {
			s.build()
		}
		s.log = append(s.log, fmt.Sprintf("%2d. %s %s (limit %d): narrowed %s; policy %s", i, op, path, limit, nv, ov))
		switch {
		case nv.Code == "" && ov.Code != "" && !(op == "read" && ov.Code == "too_large"):
			s.fail("%s %s: the narrowed sandbox allows it, the policy answers %s", op, path, ov)
		case policyRule(nv) && (ov.Rule != nv.Rule || ov.Set != nv.Set):
			s.fail("%s %s: the narrowed sandbox denies by %s/%s, the policy answers %s (another rule decided)", op, path, nv.Rule, nv.Set, ov)
		}
		s.checkReached(orig, narrowed, op, nv)
		if !s.failed {
			s.checkOracle(orig, narrowed)
		}
	}
	if !s.failed {
		s.checkConfig(orig, narrowed)
	}
	return !s.failed
}

// checkReached: every path a narrowed find or grep printed, the policy
// may stat.
func (s *narrowSeq) checkReached(orig, narrowed *sandbox.Sandbox, op string, nv answer) {
	var paths []string
	switch res := nv.res.(type) {
	case FindResult:
		if res.Paths != nil {
			paths = *res.Paths
		}
	case GrepResult:
		if res.Matches != nil {
			for _, m := range *res.Matches {
				paths = append(paths, m.Path)
			}
		}
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(narrowed.Workdir(), p)
		}
		if a := s.call(orig, "stat", p, 0); a.Code != "" {
			s.fail("%s through the narrowed sandbox reached %s, which the policy answers %s", op, p, a)
			return
		}
	}
}

// checkOracle asks about a path through a denied directory of the
// policy before and after a name appears inside it: the answers must
// not differ.
func (s *narrowSeq) checkOracle(orig, narrowed *sandbox.Sandbox) {
	r := s.r
	d := pick(r, narrowDirs[1:])
	if a := s.call(orig, "stat", filepath.Join(s.w, d), 0); a.Code != "denied" || a.Rule != "deny" {
		return // not a denied directory
	}
	name := pick(r, []string{"probe", "sub", "a.txt"})
	if _, err := os.Lstat(filepath.Join(s.w, d, name)); err == nil {
		name = "probe" // exists already: a new name
	}
	up := strings.Repeat("../", strings.Count(d, "/")+2)
	tail := pick(r, []string{up + "a.txt", up + "sub/a.txt", up + "sub", "../a.txt", "x", up + "missing.txt"})
	p := s.w + "/" + d + "/" + name + "/" + tail
	op := pick(r, []string{"read", "stat", "wc", "grep", "ls", "find"})
	sb := pick(r, []string{"policy", "narrowed"})
	view := orig
	if sb == "narrowed" {
		view = narrowed
	}
	before := s.call(view, op, p, 0)
	made := filepath.Join(s.w, d, name)
	var err error
	switch how := r.IntN(3); how {
	case 0:
		err = os.Mkdir(made, 0o755)
	case 1:
		err = os.WriteFile(made, []byte("hidden\n"), 0o644)
	default:
		err = os.Symlink("..", made)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	after := s.call(view, op, p, 0)
	if err := os.RemoveAll(made); err != nil {
		s.t.Fatal(err)
	}
	s.log = append(s.log, fmt.Sprintf("    oracle: %s %s (%s) without %s: %s; with it: %s", op, p, sb, made, before, after))
	if before.String() != after.String() {
		s.fail("%s %s through the %s sandbox answers %s while %s is missing and %s once it exists: an existence oracle in denied %s",
			op, p, sb, before, made, after, d)
	}
}

// checkConfig writes a policy file through fsbox into a writable root of
// the user's discovered policy, then loads it with --config (by its
// name, or through a symlink): it must be refused.
func (s *narrowSeq) checkConfig(orig, narrowed *sandbox.Sandbox) {
	r := s.r
	user := fmt.Sprintf("workdir = %q\nwrite_roots = [%q]\n", s.w, s.w2)
	if err := os.WriteFile(filepath.Join(s.home, ".config", "fsbox", "config.toml"), []byte(user), 0o644); err != nil {
		s.t.Fatal(err)
	}
	evil := fmt.Sprintf("workdir = %q\nread_roots = [\"/\"]\n[sandbox]\nlandlock = \"off\"\n", s.out)
	file := filepath.Join(pick(r, []string{s.w2, s.w2, s.w, s.w + "/sub"}), "evil.toml")
	sb := orig
	if r.IntN(2) == 0 {
		sb = narrowed
	}
	_, err := Write(context.Background(), sb, WriteOptions{Path: file, Content: strings.NewReader(evil)})
	s.log = append(s.log, fmt.Sprintf("    config: write %s: %v", file, err))
	if err != nil {
		return
	}
	flag := file
	if r.IntN(2) == 0 {
		flag = filepath.Join(s.base, "cwd", "..", "link.toml")
		os.Remove(flag)
		if err := os.Symlink(file, flag); err != nil {
			s.t.Fatal(err)
		}
	}
	getenv := func(string) (string, bool) { return "", false }
	q, err := policy.Load(policy.Env{ConfigFlag: flag, ConfigSet: true, Getenv: getenv, Cwd: filepath.Join(s.base, "cwd"), Home: s.home})
	s.log = append(s.log, fmt.Sprintf("    config: --config %s: %v", flag, err))
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeConfig {
		var src string
		if q != nil {
			src = fmt.Sprintf(" (loaded %s, workdir %s, read roots %q)", q.Source, q.Workdir, q.ReadRoots)
		}
		s.fail("--config %s, written through fsbox into a writable root of the user's policy, is not refused: %v%s", flag, err, src)
	}
	os.Remove(file)
}
