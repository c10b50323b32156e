package sandbox

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Object roots on a real store. The sandbox holds no S3 client: the
// binary that serves object roots (fsbox-s3) registers an opener with
// UseObjectStores before it runs a call, so the client's libraries (and
// their package initialisation, tens of milliseconds) are never linked
// into fsbox itself, whose every local call would pay for them.

// ObjectOpener opens the store of the object root at u, under [store]
// cfg: an ObjectStore whose keys are relative to u's prefix (it adds
// "PREFIX/" to every request and strips it from every answer). It is
// called before Landlock, once per root; it loads the AWS configuration
// and credentials then.
type ObjectOpener func(ctx context.Context, cfg policy.Store, u policy.ObjectURL) (ObjectStore, error)

// ObjectFiler is what an ObjectStore may also say: the files it must read
// after Landlock (a web identity token, name resolution's files). The
// sandbox adds them to Landlock's read set and denies them through the
// door.
type ObjectFiler interface {
	Files() []string
}

var objectOpener atomic.Pointer[ObjectOpener]

// UseObjectStores makes open the opener of every object root this process
// opens from now on.
func UseObjectStores(open ObjectOpener) { objectOpener.Store(&open) }

// ObjectStoresLinked reports whether this binary can open object roots
// (UseObjectStores was called).
func ObjectStoresLinked() bool { return objectOpener.Load() != nil }

// openObjectStore opens the store of the object root url through the
// registered opener.
func openObjectStore(cfg policy.Store, url string) (ObjectStore, error) {
	u, err := policy.ParseObjectURL(url)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, url, "%v", err)
	}
	open := objectOpener.Load()
	if open == nil {
		return nil, fserr.Errorf(fserr.CodeConfig, url,
			"%s is an object root, and this binary has no object-store client: run the call with fsbox-s3 (fsbox hands such a policy over to the fsbox-s3 beside it)", url)
	}
	return (*open)(context.Background(), cfg, u)
}

// The request cap ([store] max_requests). Every request an object root
// makes counts against the call whose context it carries; the request
// past the cap is not made, and the call's context is done from then on,
// as if its deadline had passed: walks and searches give what they found
// (limit "max_requests", MaxRequestsCut), a command that cannot give a
// part fails. Its error is ErrMaxRequests, which is also
// context.DeadlineExceeded, so every deadline path takes it.

// ErrMaxRequests is a call's context error once it reached the cap.
var ErrMaxRequests error = maxRequestsErr{}

type maxRequestsErr struct{}

func (maxRequestsErr) Error() string {
	return "the call reached [store] max_requests, the most requests one call may make to an object store"
}
func (maxRequestsErr) Is(target error) bool { return target == context.DeadlineExceeded }
func (maxRequestsErr) MaxRequests() bool    { return true } // fserr.Timeout says so
func (maxRequestsErr) Timeout() bool        { return true }
func (maxRequestsErr) Temporary() bool      { return true }

// capCtx is a call's context under a request cap: done when its parent
// is, or when the cap is reached.
type capCtx struct {
	context.Context
	max  int64
	n    atomic.Int64
	once sync.Once
	done chan struct{}
	hit  atomic.Bool
	stop func() bool // the parent's AfterFunc

	// The functions of AfterFunc: a context derived from this one
	// (WithCancel, WithTimeout) registers its cancel here, so it is done
	// as soon as the cap is reached, not a moment later (without it the
	// context package watches Done from a goroutine of its own, and a
	// walk could end in between, its cut directories taken for errors).
	mu     sync.Mutex
	after  map[*int]func()
	closed bool
}

type capKey struct{}

// WithRequestCap returns ctx under a cap of max requests to object
// stores (0: ctx itself, no cap).
func WithRequestCap(ctx context.Context, max int64) context.Context {
	if max <= 0 {
		return ctx
	}
	c := &capCtx{Context: ctx, max: max, done: make(chan struct{})}
	c.stop = context.AfterFunc(ctx, c.close)
	return c
}

// close makes c done (once), then runs every function AfterFunc holds.
func (c *capCtx) close() {
	c.once.Do(func() {
		close(c.done)
		c.mu.Lock()
		fs := c.after
		c.after, c.closed = nil, true
		c.mu.Unlock()
		for _, f := range fs {
			f()
		}
	})
}

// AfterFunc runs f (in its own goroutine) once c is done, as
// context.AfterFunc does; the context package calls it to tie a derived
// context's cancel to c, and then runs f at once when c is done, so
// the derived context's Err is set before the request refused returns.
func (c *capCtx) AfterFunc(f func()) (stop func() bool) {
	k := new(int)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = map[*int]func(){}
	}
	c.after[k] = f
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.after[k]
		delete(c.after, k)
		return ok
	}
}

func (c *capCtx) Done() <-chan struct{} { return c.done }

func (c *capCtx) Err() error {
	if c.hit.Load() {
		return ErrMaxRequests
	}
	return c.Context.Err()
}

func (c *capCtx) Value(key any) any {
	if key == (capKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// take counts one request; past the cap it is refused, and the context
// is done.
func (c *capCtx) take() error {
	if c.n.Add(1) > c.max {
		if !c.hit.Swap(true) {
			c.close()
		}
		return ErrMaxRequests
	}
	return nil
}

// MaxRequestsCut reports whether ctx's call was stopped by its request
// cap (not by its deadline or its caller).
func MaxRequestsCut(ctx context.Context) bool {
	c, _ := ctx.Value(capKey{}).(*capCtx)
	return c != nil && c.hit.Load()
}

// Requests is how many requests ctx's call made to object stores (under
// a cap; 0 without one).
func Requests(ctx context.Context) int64 {
	if c, _ := ctx.Value(capKey{}).(*capCtx); c != nil {
		return min(c.n.Load(), c.max)
	}
	return 0
}

// TakeRequest counts one more request of ctx's call against its cap
// ([store] max_requests), if it has one: an ObjectStore calls it for each
// request past the first that one of its methods makes (a listing's next
// page). Past the cap it is ErrMaxRequests and the request must not be
// made.
func TakeRequest(ctx context.Context) error { return takeRequest(ctx) }

// takeRequest counts a request against ctx's cap, if it has one.
func takeRequest(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c, _ := ctx.Value(capKey{}).(*capCtx); c != nil {
		return c.take()
	}
	return nil
}

// uncapped is a context that carries ctx's values but not its cap, its
// deadline or its cancellation: what a batch's rollback runs in (a
// rollback cut by the cap or the deadline that stopped the commit would
// leave the batch half made), bounded by a time of its own.
func uncapped(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(noCap{context.WithoutCancel(ctx)}, rollbackTime)
}

// rollbackTime bounds a rollback's requests.
const rollbackTime = 60 * time.Second

type noCap struct{ context.Context }

func (n noCap) Value(key any) any {
	if key == (capKey{}) {
		return nil
	}
	return n.Context.Value(key)
}

// countedStore is an object store whose every request counts against the
// call's cap.
type countedStore struct{ ObjectStore }

func counted(s ObjectStore) ObjectStore {
	if _, ok := s.(countedStore); ok {
		return s
	}
	return countedStore{s}
}

func (c countedStore) Head(ctx context.Context, key string) (Object, error) {
	if err := takeRequest(ctx); err != nil {
		return Object{}, err
	}
	return c.ObjectStore.Head(ctx, key)
}

func (c countedStore) List(ctx context.Context, prefix, delim, after string, max int) ([]Object, []string, error) {
	if err := takeRequest(ctx); err != nil {
		return nil, nil, err
	}
	return c.ObjectStore.List(ctx, prefix, delim, after, max)
}

func (c countedStore) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, Object, error) {
	if err := takeRequest(ctx); err != nil {
		return nil, Object{}, err
	}
	return c.ObjectStore.Get(ctx, key, off, n, ifVersion)
}

func (c countedStore) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, cond ObjectCond) (Object, error) {
	if err := takeRequest(ctx); err != nil {
		return Object{}, err
	}
	return c.ObjectStore.Put(ctx, key, body, size, sum, cond)
}

func (c countedStore) Delete(ctx context.Context, key, ifVersion string) error {
	if err := takeRequest(ctx); err != nil {
		return err
	}
	return c.ObjectStore.Delete(ctx, key, ifVersion)
}

// Files passes the store's files on (ObjectFiler).
func (c countedStore) Files() []string {
	if f, ok := c.ObjectStore.(ObjectFiler); ok {
		return f.Files()
	}
	return nil
}

// RootKind describes one root in force, for roots: what it is made of and
// what guards it.
type RootKind struct {
	Root     string `json:"root"` // the canonical path, or the s3:// URL
	Kind     string `json:"kind"` // "posix" or "s3"
	Writable bool   `json:"writable"`
	// SecondWall is what holds the root if fsbox's own checks failed:
	// "landlock" where the kernel wall is up, else "none" (an object
	// root has none: the host scopes fsbox's credentials to its prefix).
	SecondWall string `json:"second_wall"`
	// Guarantees are what the root gives a call: on an object root,
	// every request under the root's prefix with its slash
	// (prefix_scoped), each file read as one version (versioned_reads),
	// the request cap (request_cap); on a writable one besides, every
	// change a conditional request on what was checked (conditional_changes),
	// kept in the journal in the store (journal_in_store), and a change
	// of several keys all or none once it returns or is recovered
	// (batches_all_or_none, not isolated).
	Guarantees []string `json:"guarantees"`
}

// RootKinds describes the roots in force: the workdir first, then the
// write roots and the read roots, in configuration order.
func (s *Sandbox) RootKinds() []RootKind {
	var out []RootKind
	add := func(dir string) {
		for _, r := range s.roots {
			if r.dir != dir {
				continue
			}
			k := RootKind{Root: r.dir, Kind: "posix", Writable: r.writable, SecondWall: "none", Guarantees: []string{}}
			switch {
			case r.url:
				k.Kind = "s3"
				k.Guarantees = []string{"prefix_scoped", "versioned_reads", "request_cap"}
				if r.writable {
					k.Guarantees = append(k.Guarantees, "conditional_changes", "batches_all_or_none")
					if r.jn != nil || s.jn.objBase != "" {
						k.Guarantees = append(k.Guarantees, "journal_in_store")
					}
				}
			case s.landlock.Enforced:
				k.SecondWall = "landlock"
			}
			out = append(out, k)
			return
		}
	}
	for _, d := range s.WritableRoots() {
		add(d)
	}
	for _, d := range s.ReadRoots() {
		add(d)
	}
	return out
}

// objectFiles are the files the object roots' clients read (ObjectFiler),
// each once.
func (s *Sandbox) objectFiles() []string {
	var out []string
	for _, r := range s.roots {
		o, ok := r.st.(*objectRoot)
		if !ok || !r.url {
			continue
		}
		if f, ok := o.obj.(ObjectFiler); ok {
			for _, p := range f.Files() {
				if p != "" && !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// Parallelism is how many reads a walk or search of the paths should have
// in flight: on an object root each read is a request that mostly waits
// on the network, so [store] concurrency of them; elsewhere one per core.
// No paths: the workdir.
func (s *Sandbox) Parallelism(paths ...string) int {
	n := runtime.GOMAXPROCS(0)
	if !s.hasURLRoot() {
		return n
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if t, err := s.resolveLexical(p); err == nil && t.rt.url {
			n = max(n, s.policy.Store.Concurrency)
		}
	}
	return n
}

func (s *Sandbox) hasURLRoot() bool {
	for _, r := range s.roots {
		if r.url {
			return true
		}
	}
	return false
}

// cleanRoot is a configured root as a root's alias spells it: a path
// cleaned, an s3:// URL as it is (ExpandRoot made it canonical; cleaning
// it as a path would fold its "//").
func cleanRoot(d string) string {
	if policy.IsObjectURL(d) {
		return d
	}
	return filepath.Clean(d)
}

// maxKeyBytes is the longest key an object store takes, the root's
// prefix included.
const maxKeyBytes = 1024

// checkKey refuses, before any request, a path on an object root (s3://)
// whose key S3 would not take as the path checked: invalid UTF-8, or
// longer than 1,024 bytes with the root's prefix (SPEC §4: usage). A
// path that climbs out of its root is left to the door, which denies
// it. nil for every other root.
func (rt *root) checkKey(t *target) error {
	if !rt.url || t.rel == "." || t.rel == ".." || strings.HasPrefix(t.rel, "../") {
		return nil
	}
	key := strings.TrimPrefix(rt.abs(t.rel), policy.S3Scheme)
	_, key, _ = strings.Cut(key, "/") // the bucket is not part of the key
	switch {
	case !utf8.ValidString(t.rel):
		return fserr.Errorf(fserr.CodeUsage, t.given, "%s is not valid UTF-8, which no key of an object store may hold", t.given)
	case len(key) > maxKeyBytes:
		return fserr.Errorf(fserr.CodeUsage, t.given, "%s makes a key of %d bytes (with the root's prefix), over the %d an object store takes", t.given, len(key), maxKeyBytes)
	}
	return nil
}
