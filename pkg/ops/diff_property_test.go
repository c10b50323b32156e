//go:build unix

package ops

// The differential property of issue 44: random sequences of write
// (new, overwrite, --no-clobber, --expect-sha256 right and wrong,
// --append), edit, mkdir -p, mv (--force), cp (--force), rm (-r), patch
// (multi-file: add, update, delete) and undo (the newest), run under one
// policy (deny **/priv*, write_deny **/secret* and **/*.lock, rm on, the
// default limits) on a local directory and on an object root
// (s3://bkt/w, its journal at s3://bkt/jn, over the in-memory bucket of
// diff_store_test.go). Both start from the same tree; the names are few
// (22 paths in two levels, a name being a file in one place and a
// directory in another) so that the steps collide.
//
// After every step the two runs must agree on: success or failure, the
// error's code and path, the result's fields (paths, created/removed,
// bytes, sha256, replacements, diffs, undo's files and actions, whether
// a change was recorded), the files and their content, the directories
// both sides can express, and the history (each change's command, paths
// with before/after type, sha256 and size, moves, whether it undoes one).
// After the steps, every change of the history is undone newest first,
// by its id, while undo succeeds on both sides, each undo compared as a
// step; when every one succeeded, each side must be back at the initial
// tree.
//
// A call that fails must change nothing, on either side (all or
// nothing), directories a bucket cannot express included (below).
//
// What SPEC §4 "Object roots" says an object root cannot do is not a
// divergence, and the comparison models it instead of hiding it:
//
//   - no modes: modes are never compared (history's mode neither);
//   - mtimes to the second: never compared;
//   - no symlinks: none are made;
//   - no empty directory without a DIR/ marker: a directory is compared
//     only where the bucket can express it. Before every step, a local
//     directory left empty that the bucket does not have (and never had
//     a marker for: one that had a marker and lost it while the local
//     directory stayed is a divergence, "marker_lost") is removed
//     locally, outside fsbox, and counted. For the same reason a
//     directory a change made or removed along with a path below it
//     (mkdir -p's parents, rm -r's directories) is recorded locally and
//     on a bucket only when it had a marker: history and undo's files
//     leave out such an implied directory on both sides, and an error
//     naming one is taken as naming the path below it. A failed local
//     call that left only new directories (the missing parents a write
//     made before it failed: README says they stay after a timeout) is
//     counted, not a divergence;
//   - a directory mv is unsupported: a mv whose source is a directory on
//     both sides must be unsupported on the bucket and is then not run
//     locally (counted).
//
// Anything else is a divergence. The sequence stops at its first one,
// which is then shrunk (steps and initial files dropped one at a time
// while the same divergence, by step kind, both codes and what differed,
// still happens) and printed as a replayable list of fsbox calls with
// both results.
//
// Divergences the lead must fix are listed in dfKnown, each with a
// TestDiffKnown* that replays its minimal case with dfKnown off and
// fails on it (skipped unless FSBOX_DIFF_KNOWN=1; when one is fixed, its
// entry and its skip go). Where the bucket refuses the step and changes
// nothing, the step is not run locally, counted KNOWN (steps), and the
// sequence goes on; otherwise a sequence ending in one is counted KNOWN
// (sequences). Neither fails this test; any other divergence does.
//
// Bounded by count: FSBOX_PROPERTY_N sequences (default 40, 10 with
// -short) of FSBOX_PROPERTY_STEPS steps (default 25); half the sequences
// run on a bucket that refuses a key below a file as versitygw over a
// file system does (fsLike), the other half as AWS S3 (no such refusal).
// FSBOX_PROPERTY_SEED fixes the seed; a failure prints it, and
// FSBOX_PROPERTY_SEED=<seed> FSBOX_PROPERTY_N=1 replays that sequence.
// FSBOX_PROPERTY_LOG=1 with -v prints every sequence's steps;
// FSBOX_DIFF_STRICT=1 turns dfKnown off (every divergence fails).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// The name space: top-level names, and names below three of them.
var (
	dfTop      = []string{"a.txt", "b.md", "c", "d", "secret.txt", "x.lock", "priv.txt"}
	dfParents  = []string{"c", "d", "a.txt"}
	dfChildren = []string{"a.txt", "b.md", "secret.txt", "y.lock", "priv.txt"}
	dfLines    = []string{"alpha", "beta", "gamma", "alpha beta"}
)

func dfPaths() []string {
	out := slices.Clone(dfTop)
	for _, p := range dfParents {
		for _, c := range dfChildren {
			out = append(out, p+"/"+c)
		}
	}
	return out
}

// dfPolicy is the one policy of both sides.
func dfPolicy(work, journal string) *policy.Policy {
	p := policy.DefaultPolicy(work)
	p.Commands["rm"] = true
	p.Paths.Deny = []string{"**/priv*"}
	p.Paths.WriteDeny = append(p.Paths.WriteDeny, "**/secret*", "**/*.lock")
	p.Journal.Dir = journal
	return p
}

// dfPatchAct is one file of a patch step.
type dfPatchAct struct {
	Action  string // add, update, delete
	Path    string
	Content string // add
	Old     string // update: the line replaced
	New     string
}

// dfOp is one step, symbolic: what it means is decided on each side's
// state when it runs (expect-right is the sha256 of that side's file).
type dfOp struct {
	Kind      string // write, edit, mkdir, mv, cp, rm, patch, undo
	Path, Dst string
	Content   string
	Mode      string // write: "", "no-clobber", "expect-right", "expect-wrong", "append"
	Force     bool   // mv, cp; undo
	Recursive bool   // rm
	Old, New  string // edit
	All       bool   // edit
	Acts      []dfPatchAct
	UndoAt    int // undo: -1 the newest (""), else the k-th change of the history taken before the undo-all phase
	UndoNth   int // undo: > 0, the change at this index of the history now (0 the newest), by its id
}

func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-", r))
	}) < 0 {
		return s
	}
	return "$'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`).Replace(s) + "'"
}

// String is the step as an fsbox call.
func (o dfOp) String() string {
	switch o.Kind {
	case "write":
		s := "write " + o.Path + " --content " + shq(o.Content)
		switch o.Mode {
		case "no-clobber":
			s += " --no-clobber"
		case "append":
			s += " --append"
		case "expect-right":
			s += " --expect-sha256 <sha256 of the current content>"
		case "expect-wrong":
			s += " --expect-sha256 <sha256 of other content>"
		}
		return s
	case "edit":
		s := "edit " + o.Path + " --old " + shq(o.Old) + " --new " + shq(o.New)
		if o.All {
			s += " --all"
		}
		return s
	case "mkdir":
		return "mkdir " + o.Path
	case "mv", "cp":
		s := o.Kind + " " + o.Path + " " + o.Dst
		if o.Force {
			s += " --force"
		}
		return s
	case "rm":
		if o.Recursive {
			return "rm -r " + o.Path
		}
		return "rm " + o.Path
	case "patch":
		return "patch --patch " + shq(dfEnvelope(o.Acts))
	case "undo":
		if o.UndoNth > 0 {
			s := fmt.Sprintf("undo <id of the change at index %d of the history now>", o.UndoNth)
			if o.Force {
				s += " --force"
			}
			return s
		}
		if o.UndoAt >= 0 {
			return fmt.Sprintf("undo <id of history's change %d, as read before the undo-all phase>", o.UndoAt)
		}
		return "undo"
	}
	return o.Kind
}

func dfEnvelope(acts []dfPatchAct) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, a := range acts {
		switch a.Action {
		case "add":
			fmt.Fprintf(&b, "*** Add File: %s\n", a.Path)
			for _, l := range strings.SplitAfter(a.Content, "\n") {
				if l != "" {
					b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
				}
			}
		case "update":
			fmt.Fprintf(&b, "*** Update File: %s\n@@\n-%s\n+%s\n", a.Path, a.Old, a.New)
		case "delete":
			fmt.Fprintf(&b, "*** Delete File: %s\n", a.Path)
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// dfGen draws steps and trees.
type dfGen struct {
	r     *rand.Rand
	paths []string
}

func (g *dfGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *dfGen) content() string {
	n := g.r.IntN(4)
	var ls []string
	for range n {
		ls = append(ls, g.pick(dfLines))
	}
	s := strings.Join(ls, "\n")
	if n > 0 && g.r.IntN(4) != 0 {
		s += "\n"
	}
	return s
}

// tree draws an initial tree: files (rel -> content) and directories
// with a marker (rel -> "/": empty, or holding files), a tree on both
// kinds of root.
func (g *dfGen) tree() map[string]string {
	out := map[string]string{}
	isFile := func(p string) bool { c, ok := out[p]; return ok && c != "/" }
	for range 3 + g.r.IntN(4) {
		p := g.pick(g.paths)
		dir := path.Dir(p)
		if _, ok := out[p]; ok || isFile(dir) {
			continue
		}
		if dir != "." {
			// p's parent must not be taken as a file (or an empty dir).
			if _, ok := out[dir]; ok {
				continue
			}
		}
		clash := false
		for k := range out {
			if strings.HasPrefix(k, p+"/") {
				clash = true
			}
		}
		if clash {
			continue
		}
		if g.r.IntN(8) == 0 && slices.Contains(dfParents, p) {
			out[p] = "/"
			continue
		}
		out[p] = g.content()
	}
	// Now and then a directory holding files has a marker too (as a
	// console makes them): it stays when its files go.
	for _, d := range dfParents {
		if _, ok := out[d]; ok || g.r.IntN(3) != 0 {
			continue
		}
		for k := range out {
			if strings.HasPrefix(k, d+"/") {
				out[d] = "/"
				break
			}
		}
	}
	return out
}

func (g *dfGen) op() dfOp {
	p := g.pick(g.paths)
	switch k := g.r.IntN(100); {
	case k < 22:
		return dfOp{Kind: "write", Path: p, Content: g.content(), Mode: g.pick([]string{"", "", "no-clobber", "expect-right", "expect-wrong", "append"})}
	case k < 34:
		o := dfOp{Kind: "edit", Path: p, Old: g.pick(append(slices.Clone(dfLines), "alpha\nbeta", "zeta")), New: g.pick([]string{"ALPHA", "", "beta", "x\ny"}), All: g.r.IntN(3) == 0}
		return o
	case k < 42:
		return dfOp{Kind: "mkdir", Path: p}
	case k < 54:
		return dfOp{Kind: "mv", Path: p, Dst: g.pick(g.paths), Force: g.r.IntN(2) == 0}
	case k < 64:
		return dfOp{Kind: "cp", Path: p, Dst: g.pick(g.paths), Force: g.r.IntN(2) == 0}
	case k < 74:
		return dfOp{Kind: "rm", Path: p, Recursive: g.r.IntN(2) == 0}
	case k < 88:
		var acts []dfPatchAct
		used := map[string]bool{}
		for range 1 + g.r.IntN(3) {
			q := g.pick(g.paths)
			if used[q] {
				continue
			}
			used[q] = true
			switch g.r.IntN(3) {
			case 0:
				acts = append(acts, dfPatchAct{Action: "add", Path: q, Content: g.content() + "new\n"})
			case 1:
				acts = append(acts, dfPatchAct{Action: "update", Path: q, Old: g.pick(dfLines), New: g.pick([]string{"ALPHA", "beta", "patched"})})
			default:
				acts = append(acts, dfPatchAct{Action: "delete", Path: q})
			}
		}
		return dfOp{Kind: "patch", Acts: acts}
	default:
		if g.r.IntN(3) == 0 {
			return dfOp{Kind: "undo", UndoAt: -1, UndoNth: 1 + g.r.IntN(3), Force: g.r.IntN(3) == 0}
		}
		return dfOp{Kind: "undo", UndoAt: -1}
	}
}

// dfSide is one run: a sandbox and how to read its tree from outside.
type dfSide struct {
	name string
	sb   *sandbox.Sandbox
	// local
	work string
	// bucket
	bkt *dfBucket
	// ids: the history's change ids, newest first, as read before the
	// undo-all phase.
	ids []string
}

func (s *dfSide) bucket() bool { return s.bkt != nil }

// dfTree is a side's tree: files and the directories it has.
type dfTree struct {
	files   map[string]string
	dirs    map[string]bool
	markers map[string]bool // bucket: directories with a DIR/ marker
}

func (s *dfSide) tree(t *testing.T) dfTree {
	tr := dfTree{files: map[string]string{}, dirs: map[string]bool{}, markers: map[string]bool{}}
	if s.bucket() {
		for k, v := range s.bkt.files("w/") {
			if d, ok := strings.CutSuffix(k, "/"); ok {
				tr.markers[d] = true
				for q := d; q != "."; q = path.Dir(q) {
					tr.dirs[q] = true
				}
				continue
			}
			tr.files[k] = string(v)
			for q := path.Dir(k); q != "."; q = path.Dir(q) {
				tr.dirs[q] = true
			}
		}
		return tr
	}
	err := filepath.WalkDir(s.work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.work, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.IsDir():
			tr.dirs[rel] = true
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tr.files[rel] = string(b)
		default:
			tr.files[rel] = "<" + d.Type().String() + ">"
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: walk: %v", s.name, err)
	}
	return tr
}

// dfOutcome is one step's answer on one side.
type dfOutcome struct {
	Code    string // "" on success
	ErrPath string
	Raw     bool   // the error is no *fserr.Error (AsError made it io)
	Msg     string // the error's message (shown, never compared)
	Res     string // the result's compared fields
	Skipped string // a by-design difference: the step was not run here
}

func (o dfOutcome) String() string {
	if o.Skipped != "" {
		return "not run: " + o.Skipped
	}
	if o.Code != "" {
		s := fmt.Sprintf("error %s (path %q): %s", o.Code, o.ErrPath, o.Msg)
		if o.Raw {
			s += " [not an fserr.Error]"
		}
		return s
	}
	return "ok " + o.Res
}

func dfSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func idSet(id *string) bool { return id != nil }

// apply runs op on side s (whose tree is tr) and says what came of it.
func (s *dfSide) apply(ctx context.Context, op dfOp, tr dfTree) dfOutcome {
	var res any
	var err error
	sb := s.sb
	switch op.Kind {
	case "write":
		o := WriteOptions{Path: op.Path, Content: strings.NewReader(op.Content)}
		switch op.Mode {
		case "no-clobber":
			o.NoClobber = true
		case "append":
			o.Append = true
		case "expect-right":
			o.ExpectSHA256 = dfSum(tr.files[op.Path])
		case "expect-wrong":
			o.ExpectSHA256 = dfSum(tr.files[op.Path] + "other")
		}
		var r WriteResult
		r, err = Write(ctx, sb, o)
		res = fmt.Sprintf("path=%s bytes=%d created=%v sha256=%.12s change=%v", r.Path, r.Bytes, r.Created, r.SHA256, idSet(r.ChangeID))
	case "edit":
		var r EditResult
		r, err = Edit(ctx, sb, EditOptions{Path: op.Path, Edits: []EditSpec{{Old: op.Old, New: op.New, All: op.All}}})
		res = fmt.Sprintf("path=%s replacements=%d changed=%v sha256=%.12s change=%v diff=%q", r.Path, r.Replacements, r.Changed, r.SHA256, idSet(r.ChangeID), r.Diff)
	case "mkdir":
		var r MkdirResult
		r, err = Mkdir(ctx, sb, op.Path)
		res = fmt.Sprintf("path=%s created=%v", r.Path, r.Created)
	case "mv":
		var r MoveResult
		r, err = Move(ctx, sb, op.Path, op.Dst, op.Force)
		res = fmt.Sprintf("from=%s to=%s", r.From, r.To)
	case "cp":
		var r CopyResult
		r, err = Copy(ctx, sb, op.Path, op.Dst, op.Force)
		res = fmt.Sprintf("from=%s to=%s bytes=%d sha256=%.12s", r.From, r.To, r.Bytes, r.SHA256)
	case "rm":
		var r RemoveResult
		r, err = Remove(ctx, sb, op.Path, op.Recursive)
		res = fmt.Sprintf("path=%s removed=%v type=%s", r.Path, r.Removed, r.Type)
	case "patch":
		var r PatchResult
		r, err = Patch(ctx, sb, PatchOptions{Patch: dfEnvelope(op.Acts)})
		var fs []string
		for _, f := range r.Files {
			b, a := "-", "-"
			if f.SHA256Before != nil {
				b = (*f.SHA256Before)[:12]
			}
			if f.SHA256After != nil {
				a = (*f.SHA256After)[:12]
			}
			fs = append(fs, fmt.Sprintf("{%s %s %s n=%d %v %s>%s %q}", f.Path, f.Action, f.MoveTo, f.Replacements, f.Matched, b, a, f.Diff))
		}
		res = fmt.Sprintf("changed=%v change=%v files=%v", r.Changed, idSet(r.ChangeID), fs)
	case "undo":
		id := ""
		if op.UndoNth > 0 {
			h, err := History(ctx, sb, "", 0)
			if err != nil || op.UndoNth >= len(h.Changes) {
				return dfOutcome{Code: "test: no such change", Msg: fmt.Sprintf("the history has %d changes (%v)", len(h.Changes), err)}
			}
			id = h.Changes[op.UndoNth].ID
		}
		if op.UndoAt >= 0 {
			if op.UndoAt >= len(s.ids) {
				return dfOutcome{Code: "test: no such change", Msg: fmt.Sprintf("the history has %d changes", len(s.ids))}
			}
			id = s.ids[op.UndoAt]
		}
		var r UndoResult
		r, err = Undo(ctx, sb, id, op.Force)
		var fs []string
		for _, f := range r.Files {
			// An implied directory (as in history, below) is left out.
			if (f.Action == "mkdir" || f.Action == "rmdir") && slices.ContainsFunc(r.Files, func(g UndoneFile) bool {
				return strings.HasPrefix(g.Path, f.Path+"/")
			}) {
				continue
			}
			fs = append(fs, f.Path+":"+f.Action)
		}
		slices.Sort(fs)
		res = fmt.Sprintf("undid=%v change=%v files=%v", r.Undid != "", idSet(r.ChangeID), fs)
	default:
		panic(op.Kind)
	}
	if err != nil {
		e := fserr.AsError(err)
		var fe *fserr.Error
		return dfOutcome{Code: string(e.Code), ErrPath: e.Path, Raw: !asFserr(err, &fe), Msg: e.Error()}
	}
	return dfOutcome{Res: fmt.Sprint(res)}
}

func asFserr(err error, fe **fserr.Error) bool {
	e, ok := err.(*fserr.Error)
	if ok {
		*fe = e
		return true
	}
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return asFserr(u.Unwrap(), fe)
	}
	return false
}

// history is the side's history, compared fields only (no ids, times,
// modes or byte counts of the journal's own storage).
func (s *dfSide) history(ctx context.Context) (string, []string, error) {
	h, err := History(ctx, s.sb, "", 0)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	var ids []string
	st := func(f *sandbox.FileState) string {
		if f == nil {
			return "-"
		}
		if f.Type == "file" {
			return fmt.Sprintf("file:%.12s:%d", f.SHA256, f.Size)
		}
		return f.Type
	}
	isDir := func(f *sandbox.FileState) bool { return f == nil || f.Type == "dir" }
	for _, c := range h.Changes {
		ids = append(ids, c.ID)
		fmt.Fprintf(&b, "%s undoes=%v kept=%v", c.Command, c.Undoes != "", c.Kept)
		for _, p := range c.Paths {
			// An implied directory (SPEC §4: a bucket's directory is
			// there while a key lies below it): a directory made or
			// removed by a change that also names a path below it is
			// recorded locally, and on a bucket only when it had a
			// marker. Left out on both sides.
			if isDir(p.Before) && isDir(p.After) && slices.ContainsFunc(c.Paths, func(q sandbox.PathChange) bool {
				return strings.HasPrefix(q.Path, p.Path+"/")
			}) {
				continue
			}
			fmt.Fprintf(&b, " %s[%s>%s]", p.Path, st(p.Before), st(p.After))
		}
		for _, m := range c.Moved {
			fmt.Fprintf(&b, " mv(%s>%s)", m.From, m.To)
		}
		b.WriteString("\n")
	}
	return b.String(), ids, nil
}

// dfRun is one run of a list of steps on both sides.
type dfRun struct {
	t       *testing.T
	fsLike  bool
	init    map[string]string
	ops     []dfOp
	undoAll bool // after ops, undo the whole history newest first

	base        string
	local, bkt  *dfSide
	hadMarker   map[string]bool
	gaps, dirMv int
	leftParents int            // failed local calls that left parent directories they made
	undoAllDone bool           // every change was undone (and the trees checked against the initial one)
	known       map[string]int // known divergences met (dfKnown), by name
	strict      bool           // dfKnown off: a known divergence is a divergence
	log         []string
}

// dfDiv is a divergence: where and what.
type dfDiv struct {
	Step   int // index in ops; len(ops)+k for the k-th undo of the undo-all phase
	Op     dfOp
	What   string // code, error_path, raw, result, files, dirs, marker_lost, history, undo_all_local, undo_all_bucket, dir_mv
	Local  string
	Bucket string
	After  string // for a divergence of the answers: what the trees are after the step
	// LocalSkipped: the step was not run locally (a known divergence).
	LocalSkipped string
	// BucketFileDir: a name the bucket holds as a file and a directory
	// after the step.
	BucketFileDir string
	// Known: the dfKnown entry (run locally) the step met.
	Known string
}

// sig is what must stay the same while a divergence is shrunk.
func (d *dfDiv) sig() string {
	l, b := d.Local, d.Bucket
	if d.What == "code" || d.What == "error_path" || d.What == "raw" {
		l, b = firstWord(l, 2), firstWord(b, 2)
	} else {
		l, b = firstWord(l, 1), firstWord(b, 1)
	}
	return fmt.Sprintf("%s/%s/%s|%s", d.Op.Kind, d.What, l, b)
}

func firstWord(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func (r *dfRun) setUp() {
	t := r.t
	base, err := os.MkdirTemp("", "fsbox-diffprop-")
	if err != nil {
		t.Fatal(err)
	}
	r.base = base
	work := filepath.Join(base, "w")
	must(t, os.Mkdir(work, 0o755))
	b := newDFBucket(r.fsLike)
	for p, c := range r.init {
		if c == "/" {
			must(t, os.MkdirAll(filepath.Join(work, p), 0o755))
			b.put("w/"+p+"/", nil)
			continue
		}
		must(t, os.MkdirAll(filepath.Join(work, path.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(work, p), []byte(c), 0o644))
		b.put("w/"+p, []byte(c))
	}
	useDFBucket("bkt", b)
	lsb, err := sandbox.New(dfPolicy(work, filepath.Join(base, "jn")), "")
	if err != nil {
		t.Fatalf("local sandbox: %v", err)
	}
	bsb, err := sandbox.New(dfPolicy("s3://bkt/w", "s3://bkt/jn"), "")
	if err != nil {
		t.Fatalf("bucket sandbox: %v", err)
	}
	r.local = &dfSide{name: "local", sb: lsb, work: work}
	r.bkt = &dfSide{name: "bucket", sb: bsb, bkt: b}
	r.hadMarker = map[string]bool{}
	r.known = map[string]int{}
}

func (r *dfRun) tearDown() {
	if r.local != nil {
		r.local.sb.Close()
		r.bkt.sb.Close()
	}
	os.RemoveAll(r.base)
}

// gapsAndMarkers removes the local directories the bucket cannot
// express (left empty, no marker ever), and says if a marker was lost:
// a directory that had one is gone from the bucket while it stays here.
func (r *dfRun) gapsAndMarkers(lt, bt dfTree) (lost string) {
	for d := range bt.markers {
		r.hadMarker[d] = true
	}
	var gap []string
	for d := range lt.dirs {
		if !bt.dirs[d] {
			gap = append(gap, d)
		}
	}
	for d := range r.hadMarker {
		if !lt.dirs[d] {
			delete(r.hadMarker, d)
		}
	}
	// Deepest first.
	slices.SortFunc(gap, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range gap {
		if r.hadMarker[d] {
			return d
		}
		ents, err := os.ReadDir(filepath.Join(r.local.work, d))
		if err != nil || len(ents) > 0 {
			continue // not empty: the tree comparison says so
		}
		if err := os.Remove(filepath.Join(r.local.work, d)); err == nil {
			r.gaps++
			r.log = append(r.log, "  (local directory "+d+" left empty, absent from the bucket: removed)")
		}
	}
	return ""
}

// compareTrees is "" when the two trees agree where both can express
// them, else what differs.
func compareTrees(lt, bt dfTree) (what, l, b string) {
	var lf, bf []string
	for p, c := range lt.files {
		if bc, ok := bt.files[p]; !ok || bc != c {
			lf = append(lf, fmt.Sprintf("%s=%q", p, c))
		}
	}
	for p, c := range bt.files {
		if lc, ok := lt.files[p]; !ok || lc != c {
			bf = append(bf, fmt.Sprintf("%s=%q", p, c))
		}
	}
	if len(lf)+len(bf) > 0 {
		slices.Sort(lf)
		slices.Sort(bf)
		return "files", "only here: " + strings.Join(lf, " "), "only here: " + strings.Join(bf, " ")
	}
	var bd []string
	for d := range bt.dirs {
		if !lt.dirs[d] {
			bd = append(bd, d)
		}
	}
	if len(bd) > 0 {
		slices.Sort(bd)
		return "dirs", "directories: " + strings.Join(slices.Sorted(mapKeys(lt.dirs)), " "), "directories the local side lacks: " + strings.Join(bd, " ")
	}
	return "", "", ""
}

// impliedDir: one error path is a directory above the other, which a
// change records locally and a bucket only with its marker (see the
// history below): the two name the first path of one list each.
func impliedDir(a, b string) bool {
	return strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// dfSameTree: a and b hold the same files and directories (markers
// included).
func dfSameTree(a, b dfTree) bool {
	return maps.Equal(a.files, b.files) && maps.Equal(a.dirs, b.dirs) && maps.Equal(a.markers, b.markers)
}

// dfTreeDelta says what changed from a to b.
func dfTreeDelta(a, b dfTree) string {
	var out []string
	for _, p := range slices.Sorted(mapKeys(a.files)) {
		if c, ok := b.files[p]; !ok {
			out = append(out, "file "+p+" removed")
		} else if c != a.files[p] {
			out = append(out, "file "+p+" changed")
		}
	}
	for _, p := range slices.Sorted(mapKeys(b.files)) {
		if _, ok := a.files[p]; !ok {
			out = append(out, "file "+p+" made")
		}
	}
	for _, p := range slices.Sorted(mapKeys(a.dirs)) {
		if !b.dirs[p] {
			out = append(out, "directory "+p+" removed")
		}
	}
	for _, p := range slices.Sorted(mapKeys(b.dirs)) {
		if !a.dirs[p] {
			out = append(out, "directory "+p+" made")
		}
	}
	for _, p := range slices.Sorted(mapKeys(b.markers)) {
		if !a.markers[p] {
			out = append(out, "marker "+p+"/ made")
		}
	}
	for _, p := range slices.Sorted(mapKeys(a.markers)) {
		if !b.markers[p] {
			out = append(out, "marker "+p+"/ removed")
		}
	}
	return "after it: " + strings.Join(out, ", ")
}

// onlyDirsMade: b is a with directories added, nothing else.
func onlyDirsMade(a, b dfTree) bool {
	if !maps.Equal(a.files, b.files) {
		return false
	}
	for d := range a.dirs {
		if !b.dirs[d] {
			return false
		}
	}
	return true
}

func (r *dfRun) localApply(ctx context.Context, op dfOp, lt dfTree) dfOutcome {
	return r.local.apply(ctx, op, lt)
}

// step runs one step on both sides and compares.
func (r *dfRun) step(ctx context.Context, i int, op dfOp) (lo, bo dfOutcome, _ *dfDiv) {
	lt, bt := r.local.tree(r.t), r.bkt.tree(r.t)
	if d := r.gapsAndMarkers(lt, bt); d != "" {
		prev := dfOp{Kind: "(before)"}
		if i > 0 {
			prev = r.opAt(i - 1)
		}
		return lo, bo, &dfDiv{Step: i - 1, Op: prev, What: "marker_lost", Local: "directory " + d + " exists", Bucket: "directory " + d + " (made with a DIR/ marker) is gone"}
	}
	lt = r.local.tree(r.t)
	bo = r.bkt.apply(ctx, op, bt)
	known, runLocal := "", false
	if !r.strict && bo.Code != "" {
		c := dfStepCtx{op: op, bo: bo, lt: lt, bt: bt}
		for _, k := range dfKnown {
			if k.is != nil && k.is(c) {
				known, runLocal = k.name, k.runLocal
			}
		}
	}
	knownStep := ""
	switch {
	case op.Kind == "mv" && bo.Code == string(fserr.CodeUnsupported) && bt.dirs[op.Path] && lt.dirs[op.Path]:
		lo = dfOutcome{Skipped: "a directory mv, unsupported on an object root (SPEC §4)"}
		r.dirMv++
	case known != "" && runLocal:
		// Run locally: a local refusal too is compared as usual; a
		// local success is the known divergence, and ends the sequence.
		lo = r.localApply(ctx, op, lt)
		if lo.Code == "" {
			knownStep = known
		}
	case known != "":
		lo = dfOutcome{Skipped: "KNOWN divergence " + known}
		r.known[known]++
	default:
		lo = r.localApply(ctx, op, lt)
	}
	r.log = append(r.log, fmt.Sprintf("%3d %s\n      local:  %s\n      bucket: %s", i, op, lo, bo))
	div := func(what, l, b string) (dfOutcome, dfOutcome, *dfDiv) {
		d := &dfDiv{Step: i, Op: op, What: what, Local: l, Bucket: b, LocalSkipped: lo.Skipped, Known: knownStep}
		for f := range r.bkt.tree(r.t).files {
			if r.bkt.tree(r.t).dirs[f] {
				d.BucketFileDir = f
			}
		}
		if what == "code" || what == "result" || what == "error_path" || what == "raw" {
			// What the step left, for the report.
			if w, l, b := compareTrees(r.local.tree(r.t), r.bkt.tree(r.t)); w != "" {
				d.After = fmt.Sprintf("and the trees differ after it (%s):\n    local:  %s\n    bucket: %s", w, l, b)
			} else {
				d.After = "the trees agree after it"
			}
		}
		return lo, bo, d
	}
	lt0, bt0 := lt, bt
	lt, bt = r.local.tree(r.t), r.bkt.tree(r.t)
	// A call that fails changes nothing (SPEC: all or nothing), on
	// either side, directories a bucket cannot express included: checked
	// first, as the worst a step can do.
	if lo.Code != "" && !dfSameTree(lt0, lt) {
		// Missing parents a write made before it failed stay (README
		// says so of a timeout): only new directories, which the bucket
		// cannot express, are counted, not a divergence.
		if onlyDirsMade(lt0, lt) {
			r.leftParents++
			r.log = append(r.log, "      (the failed call left local "+strings.TrimPrefix(dfTreeDelta(lt0, lt), "after it: ")+")")
		} else {
			return div("failed_call_changed_local", lo.String()+"; "+dfTreeDelta(lt0, lt), bo.String())
		}
	}
	if bo.Code != "" && !dfSameTree(bt0, bt) {
		return div("failed_call_changed_bucket", lo.String(), bo.String()+"; "+dfTreeDelta(bt0, bt))
	}
	switch {
	case lo.Skipped != "":
	case lo.Code != bo.Code:
		return div("code", lo.String(), bo.String())
	case lo.Code != "" && lo.ErrPath != bo.ErrPath && !impliedDir(lo.ErrPath, bo.ErrPath):
		return div("error_path", lo.String(), bo.String())
	case lo.Raw != bo.Raw:
		return div("raw", lo.String(), bo.String())
	case lo.Res != bo.Res:
		return div("result", lo.String(), bo.String())
	}
	if what, l, b := compareTrees(lt, bt); what != "" {
		return div(what, l, b)
	}
	lh, _, lerr := r.local.history(ctx)
	bh, _, berr := r.bkt.history(ctx)
	switch {
	case (lerr == nil) != (berr == nil):
		return div("history", fmt.Sprint(lerr), fmt.Sprint(berr))
	case lh != bh:
		return div("history", lh, bh)
	}
	return lo, bo, nil
}

func (r *dfRun) opAt(i int) dfOp {
	if i < len(r.ops) {
		return r.ops[i]
	}
	return dfOp{Kind: "undo", UndoAt: i - len(r.ops)}
}

// treeEq says whether tr is the initial tree (files, and the directories
// the initial tree names).
func (r *dfRun) atInit(tr dfTree) string {
	want := map[string]string{}
	for p, c := range r.init {
		if c != "/" {
			want[p] = c
		}
	}
	var diff []string
	for p, c := range want {
		if tr.files[p] != c {
			diff = append(diff, fmt.Sprintf("%s: %q, want %q", p, tr.files[p], c))
		}
	}
	for p, c := range tr.files {
		if _, ok := want[p]; !ok {
			diff = append(diff, fmt.Sprintf("%s: %q, want no file", p, c))
		}
	}
	for p, c := range r.init {
		if c == "/" && !tr.dirs[p] {
			diff = append(diff, p+": no directory, want one")
		}
	}
	slices.Sort(diff)
	return strings.Join(diff, "; ")
}

// run runs the steps (and the undo-all phase) and returns the first
// divergence, or nil.
func (r *dfRun) run() *dfDiv {
	r.setUp()
	defer r.tearDown()
	ctx := context.Background()
	for i, op := range r.ops {
		if _, _, d := r.step(ctx, i, op); d != nil {
			return d
		}
	}
	if !r.undoAll {
		if d := r.gapsAndMarkers(r.local.tree(r.t), r.bkt.tree(r.t)); d != "" && len(r.ops) > 0 {
			return &dfDiv{Step: len(r.ops) - 1, Op: r.ops[len(r.ops)-1], What: "marker_lost", Local: "directory " + d + " exists", Bucket: "directory " + d + " (made with a DIR/ marker) is gone"}
		}
		return nil
	}
	var lids, bids []string
	var err error
	if _, lids, err = r.local.history(ctx); err != nil {
		return &dfDiv{Step: len(r.ops), Op: dfOp{Kind: "history"}, What: "history", Local: err.Error()}
	}
	if _, bids, err = r.bkt.history(ctx); err != nil {
		return &dfDiv{Step: len(r.ops), Op: dfOp{Kind: "history"}, What: "history", Bucket: err.Error()}
	}
	r.local.ids, r.bkt.ids = lids, bids
	r.log = append(r.log, fmt.Sprintf("  undo all: %d changes", len(lids)))
	all := true
	for k := range lids {
		op := dfOp{Kind: "undo", UndoAt: k}
		lo, bo, d := r.step(ctx, len(r.ops)+k, op)
		if d != nil {
			return d
		}
		if lo.Code != "" || bo.Code != "" {
			all = false // undo stopped (on both sides alike)
			break
		}
	}
	if !all {
		return nil
	}
	r.undoAllDone = true
	lt, bt := r.local.tree(r.t), r.bkt.tree(r.t)
	lw, bw := r.atInit(lt), r.atInit(bt)
	op := dfOp{Kind: "undo-all"}
	switch {
	case lw != "" && bw != "":
		return &dfDiv{Step: len(r.ops) + len(lids), Op: op, What: "undo_all_both", Local: lw, Bucket: bw}
	case lw != "":
		return &dfDiv{Step: len(r.ops) + len(lids), Op: op, What: "undo_all_local", Local: lw, Bucket: "back at the initial tree"}
	case bw != "":
		return &dfDiv{Step: len(r.ops) + len(lids), Op: op, What: "undo_all_bucket", Local: "back at the initial tree", Bucket: bw}
	}
	return nil
}

// dfKnown are the divergences this test found that are left: choices
// about directories a bucket holds only as prefixes, a local planner's
// race, and a no-op's record (the ones fixed since are TestDiffFixed*).
// Each is recognised at its step: the bucket refused the step, and the
// step is then not run locally (the two trees stay the same, and the
// sequence goes on); the run counts it (known). TestDiffKnown* replays
// each one's minimal case with the recognizer off, and fails on it.
var dfKnown = []struct {
	name string
	// is recognises it at its step, where the bucket refused the step
	// and changed nothing (the trees are compared after it as after
	// every step, so a refusal that changed something is still a
	// divergence); div recognises a divergence that ends the sequence.
	is  func(c dfStepCtx) bool
	div func(d *dfDiv) bool
	// runLocal: at is, the step is still run locally; a local refusal is
	// compared as usual, a local success ends the sequence as this
	// known divergence. Otherwise the step is not run locally (only
	// where the bucket's refusal comes before anything the local side
	// could refuse).
	runLocal bool
}{
	// Undo of a change that recorded, locally, a directory a bucket
	// holds only as the prefix of a key it recorded (mkdir -p's
	// parents; rm -r's directory without a marker), once that directory
	// changed: made again (mkdir d after rm -r d) or given another file
	// (write c/a.txt after mkdir c/b.md). Locally conflict naming the
	// directory (README: undo removes the directories it made "when
	// empty", makes again those it removed); on a bucket, which never
	// recorded it, the undo goes ahead (rmdir of the marker, restore of
	// d/b.md).
	{name: "undo_implied_dir_changed", div: func(d *dfDiv) bool {
		m := errPathRE.FindStringSubmatch(d.Local)
		return d.Op.Kind == "undo" && d.What == "code" && strings.HasPrefix(d.Local, "error conflict") &&
			strings.HasPrefix(d.Bucket, "ok") && m != nil && strings.Contains(d.Bucket, m[1]+"/")
	}},
	// Undo that must make a file or a directory again below a name that
	// is now a file (rm -r a.txt; write a.txt; undo the rm): locally
	// denied ("which this policy may not write now", though no rule
	// denies it); on a bucket not_a_dir (SPEC §4: a key under a file),
	// but conflict for a directory (the undo of a mkdir) and not_found
	// "(a parent is not a directory)" for a file moved back, and
	// undo --force of a change whose added file is gone succeeds there
	// having nothing to do (change_id null). All change nothing.
	{name: "undo_below_file_denied_locally", div: func(d *dfDiv) bool {
		return d.Op.Kind == "undo" && d.What == "code" && strings.HasPrefix(d.Local, "error denied") &&
			strings.Contains(d.Local, "may not write now") &&
			(strings.HasPrefix(d.Bucket, "error ") || strings.Contains(d.Bucket, "change=false files=[]"))
	}},
	// A patch is planned file by file, concurrently (planWorkers), and
	// locally pinning an added file makes its missing parents then: an
	// update or delete of NAME in the same patch as an add of NAME/x
	// then finds a directory locally (not_a_file, or not, as the
	// planners race) where the bucket finds nothing (not_found) or
	// goes on to another file's refusal. Both fail; the code differs.
	// An undo moving a file back into a directory the comparison
	// removed locally (left empty by the change, absent from the bucket,
	// so taken away to keep the trees comparable): locally not_found,
	// which no real local run meets (the directory stays there); on the
	// bucket, where a prefix needs no making, the undo goes ahead, as a
	// local undo with its directory would.
	{name: "undo_into_dir_the_comparison_removed", div: func(d *dfDiv) bool {
		return d.Op.Kind == "undo" && d.What == "code" && strings.HasPrefix(d.Local, "error not_found") &&
			strings.HasPrefix(d.Bucket, "ok undid=true") && strings.Contains(d.Bucket, ":move")
	}},
	{name: "patch_plan_sees_parents_it_made", div: func(d *dfDiv) bool {
		return d.Op.Kind == "patch" && d.What == "code" && strings.HasPrefix(d.Local, "error not_a_file") &&
			!strings.HasPrefix(d.Bucket, "ok")
	}},
	// mv FILE FILE --force (the same name): both leave the file as it
	// is, but locally it is recorded as a change (a move of the name
	// onto itself), on an object root not.
	{name: "mv_onto_itself_loses_file", div: func(d *dfDiv) bool {
		return d.Op.Kind == "mv" && path.Clean(d.Op.Path) == path.Clean(d.Op.Dst)
	}},
}

var errPathRE = regexp.MustCompile(`^error \S+ \(path "([^"]*)"\)`)

// dfStepCtx is what a recognizer of dfKnown sees: the step, the bucket's
// answer, and both trees before it.
type dfStepCtx struct {
	op     dfOp
	bo     dfOutcome
	lt, bt dfTree
}

// shrink drops steps and initial entries while the divergence stays the
// same; it returns the smallest run and its divergence.
func (r *dfRun) shrink(d *dfDiv) (*dfRun, *dfDiv) {
	best, bd := r, d
	want := d.sig()
	try := func(c *dfRun) bool {
		nd := c.run()
		if nd != nil && nd.sig() == want {
			best, bd = c, nd
			return true
		}
		return false
	}
	// Steps past the divergence are never needed (nor, when it happened
	// before the undo-all phase, that phase).
	if d.Step < len(r.ops) && !strings.HasPrefix(d.What, "undo_all") {
		c := r.clone()
		c.ops = c.ops[:d.Step+1]
		c.undoAll = false
		try(c)
	}
	for changed := true; changed; {
		changed = false
		for i := len(best.ops) - 1; i >= 0; i-- {
			if i >= len(best.ops) {
				continue
			}
			c := best.clone()
			c.ops = slices.Delete(c.ops, i, i+1)
			if try(c) {
				changed = true
			}
		}
		for _, k := range slices.Sorted(mapKeys(best.init)) {
			c := best.clone()
			delete(c.init, k)
			if try(c) {
				changed = true
			}
		}
	}
	return best, bd
}

func (r *dfRun) clone() *dfRun {
	c := &dfRun{t: r.t, fsLike: r.fsLike, init: map[string]string{}, ops: slices.Clone(r.ops), undoAll: r.undoAll, strict: r.strict}
	for k, v := range r.init {
		c.init[k] = v
	}
	return c
}

// repro is the run as a replayable description.
func (r *dfRun) repro(d *dfDiv) string {
	var b strings.Builder
	store := "AWS-like (a key may lie below a file's key)"
	if r.fsLike {
		store = "fsLike (a key below a file's key is refused, as versitygw over a file system)"
	}
	fmt.Fprintf(&b, "bucket: %s\ninitial tree:", store)
	if len(r.init) == 0 {
		b.WriteString(" empty")
	}
	for _, k := range slices.Sorted(mapKeys(r.init)) {
		if r.init[k] == "/" {
			fmt.Fprintf(&b, " %s/ (a directory; its marker on the bucket)", k)
		} else {
			fmt.Fprintf(&b, " %s=%q", k, r.init[k])
		}
	}
	b.WriteString("\nsteps:\n")
	b.WriteString(strings.Join(r.log, "\n"))
	fmt.Fprintf(&b, "\ndivergence at step %d (%s), %s:\n  local:  %s\n  bucket: %s", d.Step, d.Op, d.What, d.Local, d.Bucket)
	if d.After != "" {
		b.WriteString("\n  " + d.After)
	}
	return b.String()
}

func dfSeed() uint64 {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("FSBOX_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	return seed
}

// dfSequence draws the run of one seed.
func dfSequence(t *testing.T, seed uint64, steps int) *dfRun {
	g := &dfGen{r: rand.New(rand.NewPCG(seed, seed^0x5eed)), paths: dfPaths()}
	r := &dfRun{t: t, fsLike: seed%2 == 1, init: g.tree(), undoAll: true, strict: os.Getenv("FSBOX_DIFF_STRICT") != ""}
	for range steps {
		r.ops = append(r.ops, g.op())
	}
	return r
}

func TestDiffPropertyLocalVsBucket(t *testing.T) {
	n := envInt("FSBOX_PROPERTY_N", 40)
	if testing.Short() && os.Getenv("FSBOX_PROPERTY_N") == "" {
		n = 10
	}
	steps := envInt("FSBOX_PROPERTY_STEPS", 25)
	seed := dfSeed()
	t.Logf("FSBOX_PROPERTY_SEED=%d, %d sequences of %d steps", seed, n, steps)
	start := time.Now()
	found := map[string]string{} // signature -> minimal repro
	outcomes := map[string]int{}
	var gaps, dirMv, leftParents, ran int
	for i := range n {
		s := seed + uint64(i)
		r := dfSequence(t, s, steps)
		d := r.run()
		gaps += r.gaps
		dirMv += r.dirMv
		leftParents += r.leftParents
		for k, v := range r.known {
			outcomes["KNOWN (steps) "+k] += v
		}
		ran += len(r.ops)
		if os.Getenv("FSBOX_PROPERTY_LOG") != "" {
			t.Logf("seed %d:\n%s", s, strings.Join(r.log, "\n"))
		}
		if d == nil {
			outcomes["agree"]++
			if r.undoAllDone {
				outcomes["agree, every change undone"]++
			}
			continue
		}
		known := d.Known
		for _, k := range dfKnown {
			if k.div != nil && k.div(d) {
				known = k.name
			}
		}
		if known != "" {
			outcomes["KNOWN (sequences) "+known]++
			continue
		}
		outcomes["diverged"]++
		if _, ok := found[d.sig()]; ok {
			continue
		}
		mr, md := r.shrink(d)
		found[d.sig()] = fmt.Sprintf("seed %d (FSBOX_PROPERTY_SEED=%d FSBOX_PROPERTY_N=1), shrunk to %d steps:\n%s", s, s, len(mr.ops), mr.repro(md))
	}
	t.Logf("%d sequences, %d steps, %v; outcomes %v; local directories the bucket cannot express removed: %d; failed local calls that left parents: %d; directory mv unsupported: %d",
		n, ran, time.Since(start).Round(time.Millisecond), outcomes, gaps, leftParents, dirMv)
	for _, k := range slices.Sorted(mapKeys(found)) {
		t.Errorf("divergence %s\n%s", k, found[k])
	}
}

// dfReplay runs one minimal case with dfKnown off and fails on its
// divergence (the TestDiffKnown* tests: skipped unless FSBOX_DIFF_KNOWN=1,
// each a divergence the lead must fix; when it is fixed, drop its skip
// and its dfKnown entry).
func dfReplay(t *testing.T, fsLike bool, init map[string]string, undoAll bool, ops ...dfOp) {
	t.Helper()
	if os.Getenv("FSBOX_DIFF_KNOWN") == "" {
		t.Skip("a known divergence (dfKnown): FSBOX_DIFF_KNOWN=1 runs it")
	}
	dfRegress(t, fsLike, init, undoAll, ops...)
}

// dfRegress runs one minimal case that once diverged (TestDiffFixed*)
// and fails if it does again.
func dfRegress(t *testing.T, fsLike bool, init map[string]string, undoAll bool, ops ...dfOp) {
	t.Helper()
	r := &dfRun{t: t, fsLike: fsLike, init: init, ops: ops, undoAll: undoAll, strict: true}
	if d := r.run(); d != nil {
		t.Fatalf("divergence:\n%s", r.repro(d))
	}
	t.Logf("no divergence:\n%s", strings.Join(r.log, "\n"))
}

func TestDiffFixedCpIntoObjectRoot(t *testing.T) {
	dfRegress(t, false, map[string]string{"a.txt": "alpha\n"}, false, dfOp{Kind: "cp", Path: "a.txt", Dst: "b.md"})
}

func TestDiffFixedDirMvCode(t *testing.T) {
	dfRegress(t, false, map[string]string{"c/b.md": "beta\n"}, false, dfOp{Kind: "mv", Path: "c", Dst: "d"})
}

func TestDiffFixedUndoRmDir(t *testing.T) {
	dfRegress(t, false, nil, false, dfOp{Kind: "mkdir", Path: "d/b.md"}, dfOp{Kind: "rm", Path: "d", Recursive: true}, dfOp{Kind: "undo", UndoAt: -1})
}

func TestDiffFixedRedoMkdir(t *testing.T) {
	dfRegress(t, false, nil, true, dfOp{Kind: "mkdir", Path: "d/b.md"}, dfOp{Kind: "undo", UndoAt: -1})
}

func TestDiffFixedRedoMvForce(t *testing.T) {
	dfRegress(t, false, map[string]string{"b.md": "", "d/a.txt": "gamma\n"}, true,
		dfOp{Kind: "mv", Path: "b.md", Dst: "d/a.txt", Force: true}, dfOp{Kind: "undo", UndoAt: -1})
}

func TestDiffFixedPatchFileAndDir(t *testing.T) {
	dfRegress(t, false, nil, false, dfOp{Kind: "patch", Acts: []dfPatchAct{
		{Action: "add", Path: "c", Content: "new\n"}, {Action: "add", Path: "c/a.txt", Content: "alpha\n"}}})
}

func TestDiffKnownPatchPlanParents(t *testing.T) {
	// The planners race (no seam reaches them): the local answer is
	// not_a_file when the add's planner made a.txt before the delete's
	// looked, from one try in ten to none in hundreds here, as the
	// machine's load goes; tried until it diverges, up to 3000 times.
	if os.Getenv("FSBOX_DIFF_KNOWN") == "" {
		t.Skip("a known divergence (dfKnown) the lead must fix: FSBOX_DIFF_KNOWN=1 runs it")
	}
	for i := range 3000 {
		r := &dfRun{t: t, fsLike: true, strict: true, ops: []dfOp{{Kind: "patch", Acts: []dfPatchAct{
			{Action: "add", Path: "a.txt/a.txt", Content: "new\n"}, {Action: "delete", Path: "a.txt"},
			{Action: "update", Path: "a.txt/y.lock", Old: "gamma", New: "x"}}}}}
		if d := r.run(); d != nil {
			t.Fatalf("divergence (try %d):\n%s", i+1, r.repro(d))
		}
	}
}

func TestDiffKnownMvOntoItself(t *testing.T) {
	dfReplay(t, false, map[string]string{"a.txt": "alpha\n"}, false, dfOp{Kind: "mv", Path: "a.txt", Dst: "a.txt", Force: true})
}

func TestDiffKnownUndoImpliedDirGotFile(t *testing.T) {
	dfReplay(t, false, nil, false, dfOp{Kind: "mkdir", Path: "c/b.md"}, dfOp{Kind: "write", Path: "c/a.txt"},
		dfOp{Kind: "undo", UndoAt: -1, UndoNth: 1})
}

func TestDiffKnownUndoBelowFile(t *testing.T) {
	dfReplay(t, false, map[string]string{"a.txt/b.md": "x\n"}, false, dfOp{Kind: "rm", Path: "a.txt", Recursive: true},
		dfOp{Kind: "write", Path: "a.txt", Content: "y\n"}, dfOp{Kind: "undo", UndoAt: -1, UndoNth: 1})
}

func TestDiffKnownUndoMkdirBelowFile(t *testing.T) {
	dfReplay(t, false, nil, false, dfOp{Kind: "mkdir", Path: "c/a.txt"}, dfOp{Kind: "undo", UndoAt: -1},
		dfOp{Kind: "write", Path: "c", Content: "x\n"}, dfOp{Kind: "undo", UndoAt: -1, UndoNth: 2})
}

func TestDiffKnownUndoImpliedDirMadeAgain(t *testing.T) {
	dfReplay(t, false, map[string]string{"d/b.md": "gamma\n"}, false, dfOp{Kind: "rm", Path: "d", Recursive: true},
		dfOp{Kind: "mkdir", Path: "d"}, dfOp{Kind: "undo", UndoAt: -1, UndoNth: 1})
}

func TestDiffFixedUndoForceRmdirMarker(t *testing.T) {
	dfRegress(t, false, nil, false, dfOp{Kind: "mkdir", Path: "c"}, dfOp{Kind: "write", Path: "c/b.md", Content: "g\n"},
		dfOp{Kind: "undo", UndoAt: -1, UndoNth: 1, Force: true}, dfOp{Kind: "rm", Path: "c/b.md"})
}
