package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// store check (SPEC §4, Object roots, [bucket-write]): the conformance
// probes of an object store, run under a fresh random prefix (the
// scratch) inside a writable object root of the policy in force, and a
// few harmless requests outside every root of the policy, which say
// whether the credentials reach beyond them.
//
// The probes measure the server, so they are the store's own raw
// requests (StoreProber, which the S3 client implements), not the
// door's change path: the door only chooses the root, checks the
// scratch keys against the policy's rules as a write of them would be
// checked, and removes whatever lies under the scratch afterwards.

// StoreProber is what an ObjectStore may also do: probe the server it
// talks to. Every key it writes lies under the scratch prefix it is
// given (root-relative, ending in '/'), and is one of ProbeKeys.
type StoreProber interface {
	// ProbeKeys are the names, relative to the scratch prefix, of every
	// key ProbeStore may write: the door checks each before any request.
	ProbeKeys() []string
	// ProbeStore runs the conformance probes under scratch and says
	// what the server gives. An error only when the probes could not
	// run to their end (the call's deadline, its request cap).
	ProbeStore(ctx context.Context, scratch string) ([]ProbeResult, error)
	// ProbeOutside makes harmless requests (reads, never writes)
	// outside every root in roots (the policy's object roots) and says
	// whether the credentials reach there.
	ProbeOutside(ctx context.Context, roots []policy.ObjectURL) Outside
}

// ProbeResult is one conformance probe's answer.
type ProbeResult struct {
	Name   string `json:"name"`   // stable, snake_case (cond_get, suffix_range, ...)
	OK     bool   `json:"ok"`     // the server gives what the probe asks for
	Detail string `json:"detail"` // what the server answered, briefly
}

// Outside says whether the credentials reach outside the policy's roots.
type Outside struct {
	// Reaches: some request outside every root was answered with
	// anything but a refusal (403): a 404 means the store was asked.
	Reaches  bool             `json:"reaches"`
	Detail   string           `json:"detail"`
	Requests []OutsideRequest `json:"requests"`
}

// OutsideRequest is one request made outside every root.
type OutsideRequest struct {
	Request string `json:"request"` // "list_buckets", "list_bucket", "head_outside"
	Target  string `json:"target"`  // what it asked about (an s3:// URL, or "" for the account)
	Reaches bool   `json:"reaches"`
	Answer  string `json:"answer"` // the server's answer: a status, an error code
}

// StoreReport is what store check found.
type StoreReport struct {
	Root    string `json:"root"`    // the writable object root probed
	Scratch string `json:"scratch"` // the prefix the probes wrote under, as an s3:// URL
	// Removed: nothing is left under the scratch prefix (listed after
	// the removal); Left names what is, when not.
	Removed bool          `json:"removed"`
	Left    []string      `json:"left,omitempty"`
	Cleanup string        `json:"cleanup,omitempty"` // why the removal failed
	Outside Outside       `json:"outside"`
	Probes  []ProbeResult `json:"probes"`
	// OK: every probe passed and the scratch prefix was removed.
	OK bool `json:"ok"`
}

// StoreScratchPrefix starts the name of every scratch prefix.
const StoreScratchPrefix = ".fsbox-store-check-"

// cleanupTimeout bounds the scratch's removal, which runs on a context
// of its own: a call out of time (or requests) still removes it.
const cleanupTimeout = 30 * time.Second

// errNoProber is StoreCheck's error for an object store that cannot
// probe (the in-memory store of the door's tests).
var errNoProber = errors.New("this object store cannot be probed")

// StoreCheck runs the conformance probes of the object store behind
// given (an s3:// URL inside, or of, a writable object root of the
// policy; "" is the first writable object root) under a fresh random
// prefix, removes that prefix, and asks outside every root whether the
// credentials reach there. Anything else than a writable object root is
// denied, as is a scratch prefix a write could not make (deny,
// write_deny, allow rules on its keys).
func (s *Sandbox) StoreCheck(ctx context.Context, given string) (StoreReport, error) {
	rt, rel, err := s.storeCheckRoot(given)
	if err != nil {
		return StoreReport{}, err
	}
	o, ok := rt.st.(*objectRoot)
	if !ok {
		return StoreReport{}, fserr.Errorf(fserr.CodeUnsupported, given, "%s is no object root", rt.dir)
	}
	prober, ok := proberOf(o.obj)
	if !ok {
		return StoreReport{}, fserr.Errorf(fserr.CodeUnsupported, given, "%s: %v", rt.dir, errNoProber)
	}
	scratch, err := s.freshScratch(ctx, rt, o.obj, rel, prober.ProbeKeys())
	if err != nil {
		return StoreReport{}, err
	}
	url := rt.abs(scratch) + "/"
	rep := StoreReport{Root: rt.dir, Scratch: url, Probes: []ProbeResult{}}
	probes, perr := prober.ProbeStore(ctx, scratch+"/")
	rep.Probes = append(rep.Probes, probes...)
	rep.Removed, rep.Left, rep.Cleanup = removeScratch(o.obj, scratch+"/")
	for i, k := range rep.Left {
		rep.Left[i] = rt.abs(k)
	}
	if perr != nil {
		e := storeErr(perr, url)
		if !rep.Removed {
			e = &fserr.Error{Code: e.Code, Rule: e.Rule, Path: e.Path, Err: e.Err,
				Msg: fmt.Sprintf("%s; and the scratch prefix %s could not be removed (%s): remove it by hand", e.Message(nil), url, rep.Cleanup)}
		}
		return StoreReport{}, e
	}
	var roots []policy.ObjectURL
	for _, r := range s.roots {
		if !r.url {
			continue
		}
		if u, err := policy.ParseObjectURL(r.dir); err == nil {
			roots = append(roots, u)
		}
	}
	rep.Outside = prober.ProbeOutside(ctx, roots)
	if err := ctx.Err(); err != nil {
		// The outside requests' answers are the deadline's, not the
		// store's: no report (the scratch is removed already).
		return StoreReport{}, storeErr(err, url)
	}
	if rep.Outside.Requests == nil {
		rep.Outside.Requests = []OutsideRequest{}
	}
	rep.OK = rep.Removed
	for _, p := range rep.Probes {
		rep.OK = rep.OK && p.OK
	}
	return rep, nil
}

// storeCheckRoot is the root store check probes and the path inside it
// (root-relative, "." for the root itself): given's, which must be an
// s3:// URL in a writable object root, or with given "" the first
// writable object root of the policy.
func (s *Sandbox) storeCheckRoot(given string) (*root, string, error) {
	if given == "" {
		for _, dir := range s.WritableRoots() {
			for _, r := range s.roots {
				if r.dir == dir && r.url && r.writable {
					return r, ".", nil
				}
			}
		}
		return nil, "", fserr.Deny(fserr.RuleRoot, "",
			"store check probes only inside a writable object root (s3://) of the policy in force, and this policy has none (its writable roots: %s)",
			strings.Join(s.WritableRoots(), ", "))
	}
	if !policy.IsObjectURL(given) {
		if err := ValidatePath(given); err != nil {
			return nil, "", err
		}
		return nil, "", fserr.Deny(fserr.RuleRoot, given,
			"%s is no s3:// URL: store check probes only inside a writable object root of the policy in force", given)
	}
	t, err := s.resolve(given) // noted for the audit record, as every path argument is
	if err != nil {
		return nil, "", err
	}
	if err := s.lexicalChecks(t); err != nil {
		return nil, "", err
	}
	if !t.rt.url || !t.rt.writable {
		return nil, "", fserr.Deny(fserr.RuleReadOnly, given,
			"%s lies in the read-only root %s: store check probes only inside a writable object root of the policy in force (%s)",
			given, t.rt.dir, strings.Join(s.WritableRoots(), ", "))
	}
	return t.rt, path.Clean(t.rel), nil
}

// scratchDenied is a rule's refusal of the scratch prefix: store check
// writes nothing then.
func scratchDenied(e *fserr.Error, url string) error {
	c := *e
	c.Path = url
	c.Msg = fmt.Sprintf("store check would write under %s, and the policy denies it: %s", url, e.Message(nil))
	return &c
}

// storeErr is err as store check gives it: the call's deadline or
// request cap as timeout naming where it stopped.
func storeErr(err error, where string) *fserr.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fserr.Timeout(where, err)
	}
	return fserr.AsError(err)
}

// maxScratchTries bounds the names tried for a fresh scratch prefix.
const maxScratchTries = 3

// freshScratch is the scratch prefix below rel (root-relative, "." for
// the root): a random name that the door's rules let a write make, with
// every key the probes write (keys, relative to it), as they would meet
// a write of it (denied otherwise, before any request); and under which
// the store lists nothing, so that the removal after the probes removes
// nothing but what they wrote.
func (s *Sandbox) freshScratch(ctx context.Context, rt *root, obj ObjectStore, rel string, keys []string) (string, error) {
	for range maxScratchTries {
		name, err := newScratchName()
		if err != nil {
			return "", fserr.Errorf(fserr.CodeIO, rt.dir, "no random scratch name: %v", err)
		}
		scratch := name
		if rel != "." {
			scratch = rel + "/" + name
		}
		url := rt.abs(scratch) + "/"
		for _, k := range append([]string{""}, keys...) {
			p, isDir := scratch, true
			if k != "" {
				p, isDir = scratch+"/"+k, false
			}
			shown := rt.abs(p)
			if isDir {
				shown += "/"
			}
			if e := s.checkPatterns(rt, p, isDir, AccessWrite, shown); e != nil {
				return "", scratchDenied(e, url)
			}
			if e := s.checkWrite(rt, p, shown); e != nil {
				return "", scratchDenied(e, url)
			}
		}
		objs, prefixes, err := obj.List(ctx, scratch+"/", "/", "", 1)
		if err != nil {
			return "", storeErr(err, url)
		}
		if len(objs) == 0 && len(prefixes) == 0 {
			return scratch, nil
		}
	}
	return "", fserr.Errorf(fserr.CodeConflict, rt.dir, "%d random scratch prefixes in a row already hold keys in %s: nothing was probed", maxScratchTries, rt.dir)
}

// newScratchName makes a scratch prefix's name (a test's seam).
var newScratchName = scratchName

// scratchName is a fresh random scratch prefix's name.
func scratchName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return StoreScratchPrefix + hex.EncodeToString(b[:]), nil
}

// proberOf is the StoreProber behind an object root's store.
func proberOf(o ObjectStore) (StoreProber, bool) {
	if c, ok := o.(countedStore); ok {
		o = c.ObjectStore
	}
	p, ok := o.(StoreProber)
	return p, ok
}

// maxScratchKeys bounds the removal's listing: the probes write a few
// dozen keys.
const maxScratchKeys = 10000

// removeScratch removes every key under scratch, on a context of its own
// (the call may be out of time or requests), then lists it again:
// removed when nothing is left; else the keys left (the first few) and
// why.
func removeScratch(obj ObjectStore, scratch string) (removed bool, left []string, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var errs []string
	for round := 0; round < 3; round++ { // a key a racing probe wrote late is caught by the next round
		objs, _, err := obj.List(ctx, scratch, "", "", maxScratchKeys)
		if err != nil {
			errs = append(errs, fmt.Sprintf("listing: %v", err))
			break
		}
		if len(objs) == 0 {
			return true, nil, ""
		}
		for _, ob := range objs {
			if !strings.HasPrefix(ob.Key, scratch) {
				continue // never believed outside the scratch
			}
			if err := obj.Delete(ctx, ob.Key, ""); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Sprintf("%s: %v", ob.Key, err))
			}
		}
	}
	objs, _, err := obj.List(ctx, scratch, "", "", 20)
	switch {
	case err != nil:
		errs = append(errs, fmt.Sprintf("listing: %v", err))
	case len(objs) == 0:
		return true, nil, ""
	}
	for _, ob := range objs {
		left = append(left, ob.Key)
	}
	if len(errs) == 0 {
		errs = append(errs, "keys are still listed after their removal")
	}
	return false, left, strings.Join(errs[:min(len(errs), 3)], "; ")
}
