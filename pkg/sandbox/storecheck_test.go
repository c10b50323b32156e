//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// fakeProber is a bucket's store that probes: it writes its keys under
// the scratch it is given, through the store, and records what it was
// asked.
type fakeProber struct {
	bucketStore
	mu       *sync.Mutex
	calls    *[]string // the scratch prefixes ProbeStore was given
	outside  *[][]policy.ObjectURL
	fail     error // ProbeStore's error, after writing its keys
	noDelete bool  // Delete fails: the scratch cannot be removed
	// onOutside runs when ProbeOutside is called.
	onOutside func()
}

func (f fakeProber) ProbeKeys() []string { return []string{"k1", "d/k2"} }

func (f fakeProber) ProbeStore(ctx context.Context, scratch string) ([]ProbeResult, error) {
	f.mu.Lock()
	*f.calls = append(*f.calls, scratch)
	f.mu.Unlock()
	for _, k := range f.ProbeKeys() {
		body := []byte("probe " + k)
		if _, err := f.Put(ctx, scratch+k, bytes.NewReader(body), int64(len(body)), sha256.Sum256(body), ObjectCond{}); err != nil {
			return nil, err
		}
	}
	res := []ProbeResult{{Name: "first", OK: true, Detail: "fine"}, {Name: "second", OK: false, Detail: "ignored"}}
	if f.fail != nil {
		return res[:1], f.fail
	}
	return res, nil
}

func (f fakeProber) ProbeOutside(ctx context.Context, roots []policy.ObjectURL) Outside {
	f.mu.Lock()
	*f.outside = append(*f.outside, roots)
	f.mu.Unlock()
	if f.onOutside != nil {
		f.onOutside()
	}
	return Outside{Reaches: true, Detail: "fake", Requests: []OutsideRequest{{Request: "list_buckets", Reaches: true, Answer: "success"}}}
}

func (f fakeProber) Delete(ctx context.Context, key, ifVersion string) error {
	if f.noDelete {
		return &fs.PathError{Op: "delete", Path: key, Err: fs.ErrPermission}
	}
	return f.bucketStore.Delete(ctx, key, ifVersion)
}

// probeFixture is a sandbox whose workdir is s3://bkt/ab (writable), with
// the read root s3://bkt/shared, on a fake prober; mod changes the
// policy, and fp the prober.
type probeFixture struct {
	s       *Sandbox
	bkt     *memObjects
	calls   []string
	outside [][]policy.ObjectURL
}

func newProbeFixture(t *testing.T, mod func(*policy.Policy), fp func(*fakeProber)) *probeFixture {
	t.Helper()
	mems := useBuckets(t, map[string]map[string]string{"bkt": {
		"ab/notes.md": "tenant ab", "ab/sub/deep.txt": "deep", "shared/doc.txt": "shared doc", "top.txt": "bucket top",
	}})
	fx := &probeFixture{bkt: mems["bkt"]}
	var mu sync.Mutex
	UseObjectStores(func(_ context.Context, _ policy.Store, u policy.ObjectURL) (ObjectStore, error) {
		pre := ""
		if u.Prefix != "" {
			pre = u.Prefix + "/"
		}
		f := fakeProber{bucketStore: bucketStore{m: mems[u.Bucket], prefix: pre}, mu: &mu, calls: &fx.calls, outside: &fx.outside}
		if fp != nil {
			fp(&f)
		}
		return f, nil
	})
	p := bucketPolicy("s3://bkt/ab")
	p.ReadRoots = []string{"s3://bkt/shared"}
	p.Commands["store"] = true
	if mod != nil {
		mod(p)
	}
	s, err := New(p, "")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	fx.s = s
	return fx
}

// keys are the bucket's keys, sorted.
func (fx *probeFixture) keys() []string {
	var out []string
	for k := range fx.bkt.Files() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var scratchRe = regexp.MustCompile(`^\.fsbox-store-check-[0-9a-f]{16}/$`)

// TestStoreCheckScratch: the probes run under a fresh random prefix
// inside the root (or inside the URL given), everything under it is
// removed after, nothing else in the bucket changes, and the outside
// probe is given every object root of the policy.
func TestStoreCheckScratch(t *testing.T) {
	fx := newProbeFixture(t, nil, nil)
	before := fx.keys()
	ctx := context.Background()
	for _, c := range []struct{ given, root, under string }{
		{"", "s3://bkt/ab", ""},
		{"", "s3://bkt/ab", ""},
		{"s3://bkt/ab", "s3://bkt/ab", ""},
		{"s3://bkt/ab/", "s3://bkt/ab", ""},
		{"s3://bkt/ab/sub", "s3://bkt/ab", "sub/"},
		{"s3://bkt/ab/new/deeper", "s3://bkt/ab", "new/deeper/"},
	} {
		n := len(fx.calls)
		rep, err := fx.s.StoreCheck(ctx, c.given)
		if err != nil {
			t.Fatalf("%q: %v", c.given, err)
		}
		if len(fx.calls) != n+1 {
			t.Fatalf("%q: ProbeStore ran %d times", c.given, len(fx.calls)-n)
		}
		scratch := fx.calls[n]
		rest, ok := strings.CutPrefix(scratch, c.under)
		if !ok || !scratchRe.MatchString(rest) {
			t.Errorf("%q: scratch %q, want %s.fsbox-store-check-HEX/", c.given, scratch, c.under)
		}
		if slices.Contains(fx.calls[:n], scratch) {
			t.Errorf("%q: scratch %q used before", c.given, scratch)
		}
		if rep.Root != c.root || rep.Scratch != c.root+"/"+scratch {
			t.Errorf("%q: root %q scratch %q", c.given, rep.Root, rep.Scratch)
		}
		if !rep.Removed || len(rep.Left) != 0 || rep.Cleanup != "" {
			t.Errorf("%q: removed %v left %v cleanup %q", c.given, rep.Removed, rep.Left, rep.Cleanup)
		}
		if rep.OK || len(rep.Probes) != 2 || !rep.Outside.Reaches {
			t.Errorf("%q: ok %v (a probe failed), probes %v, outside %+v", c.given, rep.OK, rep.Probes, rep.Outside)
		}
		if got := fx.keys(); !slices.Equal(got, before) {
			t.Errorf("%q: the bucket after the check: %v, want %v", c.given, got, before)
		}
	}
	want := []policy.ObjectURL{{Bucket: "bkt", Prefix: "ab"}, {Bucket: "bkt", Prefix: "shared"}}
	got := slices.Clone(fx.outside[0])
	slices.SortFunc(got, func(a, b policy.ObjectURL) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(got, want) {
		t.Errorf("the roots given to ProbeOutside: %v, want %v", got, want)
	}
}

// TestStoreCheckDenied: anything but a writable object root is denied,
// before any request: a read-only object root, an s3:// URL outside
// every root or climbing out of one, a local path, a policy with no
// object root; and so is a scratch whose keys the rules refuse to a
// write.
func TestStoreCheckDenied(t *testing.T) {
	ctx := context.Background()
	fx := newProbeFixture(t, nil, nil)
	before := fx.keys()
	for _, given := range []string{
		"s3://bkt/shared", "s3://bkt/shared/sub", "s3://bkt/abc", "s3://bkt", "s3://bkt/ab/../abc", "s3://bkt/ab/../shared",
		"s3://other/ab", ".", "notes.md", "/tmp", "s3:/bkt/ab",
	} {
		_, err := fx.s.StoreCheck(ctx, given)
		if code(err) != fserr.CodeDenied {
			t.Errorf("%q: %v, want denied", given, err)
		}
	}
	if len(fx.calls) != 0 || len(fx.outside) != 0 {
		t.Errorf("a denied check probed: %v %v", fx.calls, fx.outside)
	}

	// The rules on the scratch and on each key the probes write.
	for name, mod := range map[string]func(*policy.Policy){
		"deny the scratch":   func(p *policy.Policy) { p.Paths.Deny = []string{"**/.fsbox-store-check-*"} },
		"deny a key":         func(p *policy.Policy) { p.Paths.Deny = []string{"**/d/k2"} },
		"write_deny a key":   func(p *policy.Policy) { p.Paths.WriteDeny = []string{"**/k1"} },
		"write_deny hidden":  func(p *policy.Policy) { p.Paths.WriteDeny = []string{"**/.*/**"} },
		"allow none of them": func(p *policy.Policy) { p.Paths.Allow = []string{"**/*.md"} },
		"deny_regex a key":   func(p *policy.Policy) { p.Paths.DenyRegex = []string{`/k1$`} },
		"no object root": func(p *policy.Policy) {
			p.Workdir, p.ReadRoots, p.Journal.Dir = t.TempDir(), []string{"s3://bkt/ab"}, ""
		},
		"no root in a bucket": func(p *policy.Policy) { p.Workdir, p.ReadRoots, p.Journal.Dir = t.TempDir(), nil, "" },
	} {
		t.Run(name, func(t *testing.T) {
			fx := newProbeFixture(t, mod, nil)
			for _, given := range []string{"", "s3://bkt/ab"} {
				_, err := fx.s.StoreCheck(ctx, given)
				if code(err) != fserr.CodeDenied {
					t.Errorf("%q: %v, want denied", given, err)
				}
			}
			if len(fx.calls) != 0 {
				t.Errorf("a denied check probed: %v", fx.calls)
			}
			if got := fx.keys(); !slices.Equal(got, before) {
				t.Errorf("the bucket changed: %v", got)
			}
		})
	}
}

// TestStoreCheckCleanup: the scratch is removed when the probes stop
// early (the call's deadline: timeout, naming the scratch); a scratch
// that cannot be removed is reported (removed false, left, why), and the
// error of a stopped check says so.
func TestStoreCheckCleanup(t *testing.T) {
	ctx := context.Background()
	fx := newProbeFixture(t, nil, func(f *fakeProber) { f.fail = context.DeadlineExceeded })
	before := fx.keys()
	_, err := fx.s.StoreCheck(ctx, "")
	if code(err) != fserr.CodeTimeout {
		t.Fatalf("probes stopped by the deadline: %v, want timeout", err)
	}
	if len(fx.calls) != 1 {
		t.Fatalf("probes: %v", fx.calls)
	}
	if got := fx.keys(); !slices.Equal(got, before) {
		t.Errorf("the scratch was left after a stopped check: %v", got)
	}

	fx = newProbeFixture(t, nil, func(f *fakeProber) { f.noDelete = true })
	rep, err := fx.s.StoreCheck(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed || rep.OK || len(rep.Left) != 2 || !strings.Contains(rep.Cleanup, "permission denied") {
		t.Errorf("a scratch that cannot be removed: removed %v ok %v left %v cleanup %q", rep.Removed, rep.OK, rep.Left, rep.Cleanup)
	}
	for _, l := range rep.Left {
		if !strings.HasPrefix(l, rep.Scratch) {
			t.Errorf("left %q, outside the scratch %s", l, rep.Scratch)
		}
	}

	fx = newProbeFixture(t, nil, func(f *fakeProber) { f.noDelete, f.fail = true, errors.New("boom") })
	_, err = fx.s.StoreCheck(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "could not be removed") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a failed check that left its scratch: %v", err)
	}
}

// TestStoreCheckNoProber: an object store that cannot probe (the
// in-memory one) is unsupported.
func TestStoreCheckNoProber(t *testing.T) {
	s := urlSandbox(t, nil)
	if _, err := s.StoreCheck(context.Background(), ""); code(err) != fserr.CodeUnsupported {
		t.Errorf("%v, want unsupported", err)
	}
}

// TestStoreCheckFreshScratch: a scratch name under which the store
// already lists a key is not used (its keys would be removed after), the
// next fresh one is; after maxScratchTries taken ones, nothing is probed.
func TestStoreCheckFreshScratch(t *testing.T) {
	ctx := context.Background()
	names := []string{StoreScratchPrefix + "taken", StoreScratchPrefix + "free"}
	prev := newScratchName
	t.Cleanup(func() { newScratchName = prev })
	i := 0
	newScratchName = func() (string, error) { n := names[min(i, len(names)-1)]; i++; return n, nil }

	fx := newProbeFixture(t, nil, nil)
	body := []byte("someone's")
	if _, err := fx.bkt.Put(ctx, "ab/"+StoreScratchPrefix+"taken/theirs", bytes.NewReader(body), int64(len(body)), sha256.Sum256(body), ObjectCond{}); err != nil {
		t.Fatal(err)
	}
	before := fx.keys()
	rep, err := fx.s.StoreCheck(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.calls) != 1 || fx.calls[0] != StoreScratchPrefix+"free/" || rep.Scratch != "s3://bkt/ab/"+StoreScratchPrefix+"free/" {
		t.Errorf("probed %v (report %q), want the free name", fx.calls, rep.Scratch)
	}
	if got := fx.keys(); !slices.Equal(got, before) {
		t.Errorf("the bucket after the check: %v, want %v (the taken prefix's key kept)", got, before)
	}

	names = names[:1] // every name taken
	i = 0
	if _, err := fx.s.StoreCheck(ctx, ""); code(err) != fserr.CodeConflict || len(fx.calls) != 1 {
		t.Errorf("every name taken: %v (probes %v), want conflict and no probe", err, fx.calls)
	}
	if got := fx.keys(); !slices.Equal(got, before) {
		t.Errorf("the bucket: %v, want %v", got, before)
	}
}

// TestStoreCheckDeadlineOutside: a call whose deadline passes while it
// asks outside the roots gives no report (the answers would be the
// deadline's): timeout, with the scratch removed.
func TestStoreCheckDeadlineOutside(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	fx := newProbeFixture(t, nil, func(f *fakeProber) { f.onOutside = func() { <-ctx.Done() } })
	before := fx.keys()
	if _, err := fx.s.StoreCheck(ctx, ""); code(err) != fserr.CodeTimeout {
		t.Errorf("deadline during the outside requests: %v, want timeout", err)
	}
	if len(fx.calls) != 1 || len(fx.outside) != 1 {
		t.Errorf("probes %v, outside %v", fx.calls, fx.outside)
	}
	if got := fx.keys(); !slices.Equal(got, before) {
		t.Errorf("the bucket: %v, want %v", got, before)
	}
}
