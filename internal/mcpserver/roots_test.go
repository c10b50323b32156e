package mcpserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
)

// rootsFiles is the tree the roots tests serve: top.txt in the workdir,
// sub/in.txt below it.
var rootsFiles = map[string]string{"top.txt": "top\n", "sub/in.txt": "inside\n"}

// noRootsOpts makes a client that does not offer roots: one that offers
// them and has none reaches nothing.
var noRootsOpts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}

// rootsHook decides a client's answer to roots/list: nil answers at once;
// otherwise it runs first, and its error (if any) is the answer.
type rootsHook struct {
	mu sync.Mutex
	fn func(ctx context.Context) error
}

func (k *rootsHook) set(fn func(ctx context.Context) error) {
	k.mu.Lock()
	k.fn = fn
	k.mu.Unlock()
}

// rootsClient connects a roots-capable client on the legacy protocol (on
// which the server may ask for roots), its answers to roots/list going
// through hook, as connectVersion does otherwise.
func (h *harness) rootsClient(hook *rootsHook, roots ...*mcp.Root) (*mcp.Client, *mcp.ClientSession) {
	h.t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(ctx, &idTransport{inner: st}, nil)
	must(h.t, err)
	c := mcp.NewClient(&mcp.Implementation{Name: "fsbox-test", Version: "0"}, nil)
	c.AddRoots(roots...)
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				hook.mu.Lock()
				fn := hook.fn
				hook.mu.Unlock()
				if fn != nil {
					if err := fn(ctx); err != nil {
						return nil, err
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	must(h.t, err)
	h.t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return c, cs
}

func (h *harness) readOK(cs *mcp.ClientSession, path, want string) {
	h.t.Helper()
	res, err := h.callOn(context.Background(), cs, "fsbox_read", map[string]any{"path": path})
	if out := okResult(h.t, "fsbox_read "+path, nil, res, err); out["content"] != want {
		h.t.Errorf("fsbox_read %s: %v, want %q", path, out["content"], want)
	}
}

func (h *harness) denied(cs *mcp.ClientSession, name string, args map[string]any) errBody {
	h.t.Helper()
	res, err := h.callOn(context.Background(), cs, name, args)
	return failResult(h.t, name, args, res, err, "denied", "")
}

// nothingReachable checks that cs reaches nothing: every tool that
// touches a path is denied, saying why.
func (h *harness) nothingReachable(cs *mcp.ClientSession) {
	h.t.Helper()
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"fsbox_read", map[string]any{"path": "top.txt"}},
		{"fsbox_read", map[string]any{"path": "sub/in.txt"}},
		{"fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")}},
		{"fsbox_ls", map[string]any{"path": "."}},
		{"fsbox_grep", map[string]any{"pattern": "top"}},
		{"fsbox_write", map[string]any{"path": "new.txt", "content": "x"}},
	} {
		if e := h.denied(cs, c.name, c.args); e.Message != "" && !strings.Contains(e.Message, noRootsMsg) {
			h.t.Errorf("%s %v: message %q, want %q", c.name, c.args, e.Message, noRootsMsg)
		}
	}
}

// TestRootsNarrowSubdir: a client root inside the policy's narrows it to
// that subdirectory, from the first call on (calls wait for the first
// roots/list answer); a root outside the policy and a non-file root add
// nothing; another client is not narrowed.
func TestRootsNarrowSubdir(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	sub := filepath.Join(h.work, "sub")
	cs := h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: rootURI(sub)}, &mcp.Root{URI: rootURI(h.outside)},
		&mcp.Root{URI: "https://example.invalid/x"})
	h.readOK(cs, "sub/in.txt", "inside\n")
	h.readOK(cs, filepath.Join(sub, "in.txt"), "inside\n")
	h.denied(cs, "fsbox_read", map[string]any{"path": "top.txt"})
	h.denied(cs, "fsbox_write", map[string]any{"path": "top2.txt", "content": "x"})
	h.denied(cs, "fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")})
	log := h.stderr.String()
	if !strings.Contains(log, "ignoring the client's root "+h.outside) || !strings.Contains(log, "example.invalid") {
		t.Errorf("the roots left out were not logged:\n%s", log)
	}
	d := h.connect(nil) // latest protocol: not asked, the policy alone
	h.readOK(d, "top.txt", "top\n")
}

// TestRootsPolicyRootInside: a client root above the policy's root leaves
// the policy's root whole (and no wider).
func TestRootsPolicyRootInside(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	cs := h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: rootURI(h.base)})
	h.readOK(cs, "top.txt", "top\n")
	h.readOK(cs, "sub/in.txt", "inside\n")
	h.denied(cs, "fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")})
}

// TestRootsOutsidePolicy: roots that all lie outside the policy leave
// nothing reachable (it used to give back the whole policy).
func TestRootsOutsidePolicy(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	cs := h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: rootURI(h.outside)}, &mcp.Root{URI: rootURI(h.home)})
	h.nothingReachable(cs)
	if !strings.Contains(h.stderr.String(), noRootsMsg) {
		t.Errorf("not logged:\n%s", h.stderr.String())
	}
	// fsbox_roots touches no path: it still reports the policy.
	res, err := h.callOn(context.Background(), cs, "fsbox_roots", nil)
	okResult(t, "fsbox_roots", nil, res, err)
}

// TestRootsEmpty: a roots-capable client that answers [] reaches nothing.
func TestRootsEmpty(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	cs := h.connectVersion(legacyProtocol, nil)
	h.nothingReachable(cs)
}

// TestRootsNonFile: a root that is no file:// URI counts as empty.
func TestRootsNonFile(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	cs := h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: "https://example.invalid" + filepath.ToSlash(h.work)},
		&mcp.Root{URI: "file://remote.invalid" + filepath.ToSlash(h.work)})
	h.nothingReachable(cs)
}

// TestRootsListFailure: a failed roots/list leaves nothing reachable.
func TestRootsListFailure(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	hook := &rootsHook{fn: func(context.Context) error { return errors.New("no roots for you") }}
	_, cs := h.rootsClient(hook, &mcp.Root{URI: rootURI(h.work)})
	h.nothingReachable(cs)
	if !strings.Contains(h.stderr.String(), "no roots for you") {
		t.Errorf("the failure was not logged:\n%s", h.stderr.String())
	}
}

// TestRootsTimeout: a roots/list left unanswered past rootsTimeout
// (shortened here) leaves nothing reachable.
func TestRootsTimeout(t *testing.T) {
	defer func(d time.Duration) { rootsTimeout = d }(rootsTimeout)
	rootsTimeout = 50 * time.Millisecond
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	never := make(chan struct{})
	defer close(never)
	hook := &rootsHook{fn: func(ctx context.Context) error {
		select {
		case <-never:
		case <-ctx.Done():
		}
		return errors.New("too late")
	}}
	_, cs := h.rootsClient(hook, &mcp.Root{URI: rootURI(h.work)})
	h.nothingReachable(cs)
}

// TestRootsNoCapability: a client that does not offer roots is bounded by
// the policy alone.
func TestRootsNoCapability(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	cs := h.connectVersion(legacyProtocol, noRootsOpts)
	h.readOK(cs, "top.txt", "top\n")
	h.readOK(cs, "sub/in.txt", "inside\n")
	h.denied(cs, "fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")})
}

// TestRootsListChangedPending: after notifications/roots/list_changed, a
// call made before the new answer gets only what both the old roots and
// the new reach; once the answer is in, the new roots (within the policy)
// apply, wider or narrower. The client's answer is held on a channel, and
// the call is known to wait for it through the rootsWaiting seam.
func TestRootsListChangedPending(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	sub := filepath.Join(h.work, "sub")
	hook := &rootsHook{}
	c, cs := h.rootsClient(hook, &mcp.Root{URI: rootURI(sub)})
	h.readOK(cs, "sub/in.txt", "inside\n")
	h.denied(cs, "fsbox_read", map[string]any{"path": "top.txt"})

	waiting := make(chan struct{}, 16)
	rootsWaiting = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	defer func() { rootsWaiting = nil }()

	// change holds the client's next answer, makes the change, and
	// returns the channel that lets the answer go.
	change := func(mutate func()) chan struct{} {
		asked, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		hook.set(func(ctx context.Context) error {
			once.Do(func() { close(asked) })
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
		mutate()
		<-asked // the server has the notification, and its roots/list is pending
		return release
	}
	// during calls path while the answer is held, releases it once the
	// call waits, and returns the call's result.
	during := func(release chan struct{}, path string) (*mcp.CallToolResult, error) {
		type out struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := h.callOn(context.Background(), cs, "fsbox_read", map[string]any{"path": path})
			done <- out{res, err}
		}()
		<-waiting
		close(release)
		o := <-done
		hook.set(nil)
		return o.res, o.err
	}

	// Widening: sub → sub and the whole workdir. Pending: sub only.
	release := change(func() { c.AddRoots(&mcp.Root{URI: rootURI(h.work)}) })
	res, err := during(release, "top.txt")
	failResult(t, "fsbox_read top.txt while the widening answer is pending", nil, res, err, "denied", "")
	h.readOK(cs, "top.txt", "top\n") // the answer is in: the new roots
	h.readOK(cs, "sub/in.txt", "inside\n")
	h.denied(cs, "fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")})

	// Narrowing: back to sub. Pending: sub only, though the old roots
	// reached top.txt.
	release = change(func() { c.RemoveRoots(rootURI(h.work)) })
	res, err = during(release, "top.txt")
	failResult(t, "fsbox_read top.txt while the narrowing answer is pending", nil, res, err, "denied", "")
	h.denied(cs, "fsbox_read", map[string]any{"path": "top.txt"})
	h.readOK(cs, "sub/in.txt", "inside\n")

	// Roots outside the policy: nothing (it used to give back the whole policy).
	release = change(func() { c.RemoveRoots(rootURI(sub)) })
	close(release)
	h.nothingReachable(cs)
}

// TestRootsAllowedDirectories: the reference profile's
// list_allowed_directories lists what the client's roots leave: the
// subdirectory they narrow to, or none.
func TestRootsAllowedDirectories(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: rootsFiles})
	h.srv = New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: h.sb, Profile: "reference", Stderr: h.stderr, Version: "test"})
	list := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := h.callOn(context.Background(), cs, "list_allowed_directories", nil)
		if err != nil || res.IsError {
			t.Fatalf("list_allowed_directories: %v %+v", err, res)
		}
		return textOf(t, res)
	}
	sub := filepath.Join(h.work, "sub")
	if got := list(h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: rootURI(sub)})); got != "Allowed directories:\n"+sub {
		t.Errorf("narrowed to sub: %q", got)
	}
	none := h.connectVersion(legacyProtocol, nil, &mcp.Root{URI: rootURI(h.outside)})
	if got := list(none); got != "Allowed directories:\n" {
		t.Errorf("nothing reachable: %q", got)
	}
	res, err := h.callOn(context.Background(), none, "read_text_file", map[string]any{"path": "top.txt"})
	if e := failResult(t, "read_text_file", nil, res, err, "denied", ""); !strings.Contains(e.Message, noRootsMsg) {
		t.Errorf("read_text_file: %q", e.Message)
	}
	if got := list(h.connect(nil)); got != "Allowed directories:\n"+h.work {
		t.Errorf("not asked: %q", got)
	}
}
