package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// MCP client roots only narrow. A client that declares the roots
// capability, on a revision on which the server may ask for them (up to
// 2025-11-25; from 2026-07-28 the SDK refuses a server-initiated
// roots/list), reaches the intersection of the policy's roots with its
// own: a client root inside a policy root narrows it, a policy root inside
// a client root stays whole. A failed roots/list, one unanswered within
// rootsTimeout, an empty answer, roots that are not file:// URIs or that
// lie outside the policy all leave nothing reachable. A client without the
// capability is bounded by the policy alone.

// rootsTimeout bounds a roots/list, and a call's wait for its answer:
// past it, nothing is reachable. A variable so tests can shorten it.
var rootsTimeout = 10 * time.Second

// rootsWaiting, set by tests only, runs as a call starts to wait for a
// pending roots/list answer: the seam that lets a test release the
// answer once the call is known to be waiting.
var rootsWaiting func()

// noRootsMsg is the denial of every call that touches a path when the
// client's roots leave nothing of the policy's.
const noRootsMsg = "the client's roots exclude every policy root"

// protocolNoRoots is the first protocol revision on which the server may
// not ask the client for its roots.
const protocolNoRoots = "2026-07-28"

// reach is the set of directories a session may reach (canonical, each
// within a policy root): nil is the whole policy, empty (not nil) is
// nothing.
type reach []string

// intersect is what both a and b reach.
func intersect(a, b reach) reach {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := reach{}
	add := func(d string) {
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	for _, x := range a {
		for _, y := range b {
			switch {
			case policy.Within(x, y):
				add(x)
			case policy.Within(y, x):
				add(y)
			}
		}
	}
	return out
}

// rootsFetch is one roots/list: the first, or one a list_changed
// notification asked for.
type rootsFetch struct {
	// old bounds the calls made while the answer is pending: what was
	// reachable (or, with another answer pending, could be) when it was
	// asked for.
	old  reach
	done chan struct{} // closed once got is set
	got  reach         // the answer meet the policy's roots; nothing on a failure
}

// clientRoots is one roots-capable session's state.
type clientRoots struct {
	latest  *rootsFetch // the last roots/list asked for (or to be asked for)
	started bool        // the first roots/list has been sent
}

// rootSet is what each client's roots leave of the policy's roots.
type rootSet struct {
	base   *sandbox.Sandbox
	policy reach     // the policy's roots: the writable ones, then the read roots
	logw   io.Writer // the server's stderr
	mu     sync.Mutex
	cur    map[*mcp.ServerSession]*clientRoots // the roots-capable sessions
}

func newRootSet(base *sandbox.Sandbox, logw io.Writer) *rootSet {
	return &rootSet{base: base, policy: append(reach(base.WritableRoots()), base.ReadRoots()...), logw: logw,
		cur: map[*mcp.ServerSession]*clientRoots{}}
}

func (r *rootSet) logf(format string, a ...any) {
	w := r.logw
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "fsbox mcp: "+format+"\n", a...)
}

// asksRoots reports whether fsbox asks ss's client for its roots: it
// declared the capability, on a revision before protocolNoRoots.
func asksRoots(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil && p.ProtocolVersion < protocolNoRoots
}

// sessionLocked is ss's state, made on first sight with its first
// roots/list to come (bounded by the whole policy); nil for a session
// fsbox does not ask. r.mu is held.
func (r *rootSet) sessionLocked(ss *mcp.ServerSession) *clientRoots {
	if c := r.cur[ss]; c != nil {
		return c
	}
	if !asksRoots(ss) {
		return nil
	}
	c := &clientRoots{latest: &rootsFetch{done: make(chan struct{})}}
	r.cur[ss] = c
	return c
}

// initialized sends a roots-capable client's first roots/list.
func (r *rootSet) initialized(ss *mcp.ServerSession) {
	r.mu.Lock()
	c := r.sessionLocked(ss)
	if c == nil || c.started {
		r.mu.Unlock()
		return
	}
	c.started = true
	f := c.latest
	r.mu.Unlock()
	go r.ask(ss, f)
}

// changed asks again after notifications/roots/list_changed; until the
// answer comes, calls get no more than both the old roots and the new.
func (r *rootSet) changed(ss *mcp.ServerSession) {
	r.mu.Lock()
	c := r.sessionLocked(ss)
	if c == nil {
		r.mu.Unlock()
		return
	}
	old := c.latest.old // still pending: no call gets more than its bound
	select {
	case <-c.latest.done:
		old = c.latest.got
	default:
	}
	f := &rootsFetch{old: old, done: make(chan struct{})}
	c.latest, c.started = f, true
	r.mu.Unlock()
	go r.ask(ss, f)
}

// ask sends a roots/list and records its answer in f.
func (r *rootSet) ask(ss *mcp.ServerSession, f *rootsFetch) {
	ctx, cancel := context.WithTimeout(context.Background(), rootsTimeout)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		r.logf("roots/list: %v: %s", err, noRootsMsg)
		f.got = reach{}
	} else {
		f.got = r.narrow(res.Roots)
	}
	close(f.done)
}

// narrow is what the client's roots leave of the policy's: file:// URIs of
// local directories only; every other root counts as empty.
func (r *rootSet) narrow(roots []*mcp.Root) reach {
	client := reach{}
	for _, root := range roots {
		if root == nil {
			continue
		}
		u, err := url.Parse(root.URI)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			r.logf("ignoring the client's root %q: not a file:// URI of a local directory", root.URI)
			continue
		}
		d := filepath.Clean(filepath.FromSlash(u.Path))
		// Outside the sandbox on purpose: a client root is configuration,
		// resolved as Load resolves a policy's roots (canonical, so a
		// /tmp root meets a /private/tmp policy root). Nothing is opened
		// or answered about it: the result only narrows, intersected with
		// the policy's roots below, and a root outside them gives nothing
		// whether or not it exists, so the client learns nothing it could
		// not stat through the tools.
		real, err := filepath.EvalSymlinks(d) // a client root: configuration, see just above
		if err != nil || !filepath.IsAbs(real) {
			r.logf("ignoring the client's root %s: %v", d, err)
			continue
		}
		if len(intersect(r.policy, reach{real})) == 0 {
			r.logf("ignoring the client's root %s: it lies outside the policy's roots (roots narrow, never widen)", d)
			continue
		}
		client = append(client, filepath.Clean(real))
	}
	got := intersect(r.policy, client)
	if len(got) == 0 {
		r.logf("%s: nothing is reachable", noRootsMsg)
	}
	return got
}

// view is a call's view of the sandbox, and what it may reach (nil: the
// whole policy). A call of a roots-capable client waits for the roots/list
// answer pending when it came (up to rootsTimeout, or its cancellation:
// then nothing is reachable), and gets no more than the roots in force
// when that list was asked for and the answer.
func (r *rootSet) view(ctx context.Context, ss *mcp.ServerSession) (*sandbox.Sandbox, reach) {
	r.mu.Lock()
	var f *rootsFetch
	if c := r.sessionLocked(ss); c != nil {
		f = c.latest
	}
	r.mu.Unlock()
	if f == nil {
		return r.base.ForCall(), nil
	}
	var got reach
	select {
	case <-f.done:
		got = f.got
	default:
		if rootsWaiting != nil {
			rootsWaiting()
		}
		t := time.NewTimer(rootsTimeout)
		defer t.Stop()
		select {
		case <-f.done:
			got = intersect(f.old, f.got)
		case <-t.C:
			r.logf("no roots/list answer within %v: %s", rootsTimeout, noRootsMsg)
			got = reach{}
		case <-ctx.Done():
			got = reach{}
		}
	}
	if len(got) == 0 {
		return r.base.ForCall(), reach{}
	}
	v, _, _ := r.base.Narrow(got)
	return v, got
}

// forget drops a closed session's roots.
func (r *rootSet) forget(ss *mcp.ServerSession) {
	r.mu.Lock()
	delete(r.cur, ss)
	r.mu.Unlock()
}

// reachKey carries a call's reach on its context (see reachableOf).
type reachKey struct{}

// confine bounds fn by what the call may reach: with nothing reachable,
// every operation but roots (the policy's own report, which touches no
// path) is denied; the set rides on fn's context for reachableOf.
func (g reach) confine(op *spec.Op, fn func(context.Context, *sandbox.Sandbox) (any, error)) func(context.Context, *sandbox.Sandbox) (any, error) {
	if g == nil {
		return fn
	}
	return func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
		if len(g) == 0 && op.Name != "roots" {
			return nil, &fserr.Error{Code: fserr.CodeDenied, Rule: fserr.RuleRoot, Msg: noRootsMsg}
		}
		return fn(context.WithValue(ctx, reachKey{}, g), sb)
	}
}

// reachableOf is what of dirs (policy roots) the call whose context ctx is
// may reach: all of them for a client not narrowed by its roots, none when
// its roots exclude every policy root.
func reachableOf(ctx context.Context, dirs []string) []string {
	g, _ := ctx.Value(reachKey{}).(reach)
	return intersect(dirs, g)
}
