//go:build unix

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// The audit log path is expanded like a root and must stay out of the
// workdir, however it is spelled: through '..', through a symlinked
// directory, or with a tenant variable.
func TestAuditPath(t *testing.T) {
	ls := newLoadSetup(t)
	mustSymlink(t, ls.work, filepath.Join(ls.base, "worklink"))
	cfg := filepath.Join(ls.cfgDir, "policy.toml")
	for _, c := range []struct {
		log, want string // want: "" = refused
		env       fakeEnv
	}{
		{log: ls.base + "/logs/audit.jsonl", want: ls.base + "/logs/audit.jsonl"},
		{log: "~/audit.jsonl", want: ls.home + "/audit.jsonl"},
		{log: ls.base + "/logs/${TENANT}.jsonl", want: ls.base + "/logs/alice.jsonl", env: fakeEnv{"TENANT": "alice"}},
		{log: ls.work + "/audit.jsonl"},
		{log: ls.work + "/sub/../audit.jsonl"},
		{log: ls.base + "/cwd/../work/audit.jsonl"},
		{log: ls.base + "/worklink/audit.jsonl"},
		{log: "relative.jsonl"},
		{log: ls.base + "/logs/${TENANT}.jsonl", env: fakeEnv{"TENANT": "../work/x"}},
		{log: ls.base + "/logs/${UNSET}.jsonl"},
	} {
		body := fmt.Sprintf("workdir = %q\n[audit]\nlog = %q\n", ls.work, c.log)
		mustWrite(t, cfg, body)
		env := policy.Env{ConfigFlag: cfg, Getenv: c.env.get, Cwd: ls.cwd, Home: ls.home}
		p, err := policy.Load(env)
		if c.want == "" {
			if err == nil || fserr.AsError(err).Code != fserr.CodeConfig || !strings.Contains(err.Error(), "[audit] log") {
				t.Errorf("log = %q: want a config error naming [audit] log, got %v", c.log, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("log = %q: %v", c.log, err)
			continue
		}
		if p.Audit.Log != c.want {
			t.Errorf("log = %q: expanded to %q, want %q", c.log, p.Audit.Log, c.want)
		}
	}
}

// Records appended by many writers at once (separate descriptors, as
// separate processes have) never interleave: every line is one whole
// JSON object and none is lost.
func TestAuditConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	p := &policy.Policy{Audit: policy.Audit{Log: filepath.Join(dir, "audit.jsonl")}}
	const writers, each = 8, 200
	long := strings.Repeat("x", 8000) // longer than PIPE_BUF: still one write(2)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := OpenAudit(p)
			if err != nil {
				t.Error(err)
				return
			}
			defer a.Close()
			for i := 0; i < each; i++ {
				rec := &AuditRecord{Command: "read", PID: w, Exit: i, Paths: []AuditPath{{Arg: long}}}
				if err := a.Append(rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	f, err := os.Open(p.Audit.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
	seen := map[[2]int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d is not one JSON object: %v", len(seen)+1, err)
		}
		seen[[2]int{rec.PID, rec.Exit}] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

// A record that cannot be written is an io error, never a silent loss.
func TestAuditAppendFails(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	mustWrite(t, log, "")
	f, err := os.Open(log) // read-only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	a := &AuditLog{f: f, path: log}
	defer a.Close()
	err = a.Append(&AuditRecord{Command: "read"})
	if e := fserr.AsError(err); err == nil || e.Code != fserr.CodeIO || !strings.Contains(e.Msg, "audit log") {
		t.Fatalf("Append on a read-only descriptor: %v, want an io error naming the audit log", err)
	}
}

// The trail names each path argument once, with where it really led, and
// counts the bytes read through every kind of open and those written.
func TestAuditTrail(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	f, err := s.Open("in_link")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, f)
	f.Close()
	if _, err := s.Open("/etc/passwd"); err == nil {
		t.Fatal("opened /etc/passwd")
	}
	var walked int
	if _, err := s.Walk(context.Background(), "a", WalkOptions{MaxDepth: -1}, func(e *Entry) error {
		defer e.Release()
		if e.Type == "file" {
			f, err := e.Open()
			if err == nil {
				readAll(t, f)
				f.Close()
				walked++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenWriteTarget("new.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Replace(strings.NewReader("12345"), 100, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	paths, read, written := s.Usage()
	want := []AuditPath{
		{Arg: "in_link", Path: filepath.Join(tr.work, "a/inner.txt")},
		{Arg: "/etc/passwd"},
		{Arg: "a", Path: filepath.Join(tr.work, "a")},
		{Arg: "new.txt", Path: filepath.Join(tr.work, "new.txt")},
	}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
	// inner.txt twice (5 bytes each: once by name, once walked), readme.md
	// (2), b/deep.txt (4); cert.PEM is denied.
	if walked != 3 || read != 5+5+2+4 || written != 5 {
		t.Errorf("walked %d files, read %d bytes, wrote %d; want 3, 16, 5", walked, read, written)
	}
}

// A ForCall view shares the sandbox's rules and roots but keeps its own
// trail: a long-lived host's audit record names one call's paths and
// bytes. Closing a view leaves the roots open; the view denies what the
// sandbox denies. Every field of the view but the per-call ones is the
// sandbox's own, so a field added later cannot be forgotten by ForCall.
func TestForCallView(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	a, b := s.ForCall(), s.ForCall()
	if f, err := a.Open("a/readme.md"); err != nil {
		t.Fatal(err)
	} else {
		readAll(t, f)
		f.Close()
	}
	if _, err := b.Open("/etc/passwd"); err == nil || fserr.AsError(err).Code != fserr.CodeDenied {
		t.Fatalf("view opened /etc/passwd: %v", err)
	}
	if _, err := b.Open("a/cert.PEM"); err == nil {
		t.Fatal("view opened a denied file")
	}
	pa, ra, _ := a.Usage()
	pb, rb, _ := b.Usage()
	if fmt.Sprint(pa) != fmt.Sprint([]AuditPath{{Arg: "a/readme.md", Path: filepath.Join(tr.work, "a/readme.md")}}) || ra != 2 {
		t.Errorf("view a: paths %v, read %d", pa, ra)
	}
	if len(pb) != 2 || rb != 0 {
		t.Errorf("view b: paths %v, read %d", pb, rb)
	}
	if ps, rs, _ := s.Usage(); len(ps) != 0 || rs != 0 {
		t.Errorf("the sandbox's own trail took the views' calls: %v, %d", ps, rs)
	}
	a.Close()
	if _, err := s.Lstat("a/readme.md"); err != nil {
		t.Errorf("closing a view closed the roots: %v", err)
	}
	if a.HasStdin() {
		t.Error("a view has a standard input")
	}
	sv, av := reflect.ValueOf(s).Elem(), reflect.ValueOf(a).Elem()
	for i := 0; i < sv.NumField(); i++ {
		name := sv.Type().Field(i).Name
		switch name {
		case "trail", "stdin", "stdinUsed", "view", "progress", "cmd", "quiet":
			continue
		}
		if fmt.Sprintf("%#v", sv.Field(i)) != fmt.Sprintf("%#v", av.Field(i)) {
			t.Errorf("ForCall does not carry field %s", name)
		}
	}
}

// Narrow keeps a view inside the announced directories for reads, writes
// and walks; a directory outside every root is ignored, and with none
// left the view is the sandbox's own.
func TestNarrow(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	v, kept, ignored := s.Narrow([]string{filepath.Join(tr.work, "a/b"), "/etc", filepath.Join(tr.work, "missing")})
	if len(kept) != 1 || len(ignored) != 2 {
		t.Fatalf("kept %v, ignored %v", kept, ignored)
	}
	if f, err := v.Open("a/b/deep.txt"); err != nil {
		t.Errorf("inside the announced root: %v", err)
	} else {
		f.Close()
	}
	for _, p := range []string{"file.txt", "a/inner.txt", "a", ".", "/etc/passwd", "in_link"} {
		if f, err := v.Open(p); err == nil {
			f.Close()
			t.Errorf("%s opened outside the announced root", p)
		} else if fserr.AsError(err).Code != fserr.CodeDenied && fserr.AsError(err).Code != fserr.CodeNotAFile {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := v.OpenWriteTarget("new.txt", false); err == nil || fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("write outside the announced root: %v", err)
	}
	if w, err := v.OpenWriteTarget("a/b/new.txt", false); err != nil {
		t.Errorf("write inside the announced root: %v", err)
	} else {
		w.Close()
	}
	var seen []string
	if _, err := v.Walk(context.Background(), "a/b", WalkOptions{MaxDepth: -1}, func(e *Entry) error {
		seen = append(seen, e.Rel)
		e.Release()
		return nil
	}); err != nil {
		t.Errorf("walk inside: %v", err)
	}
	if _, err := v.Walk(context.Background(), "a", WalkOptions{MaxDepth: -1}, func(e *Entry) error { e.Release(); return nil }); err == nil {
		t.Error("walked a, above the announced root")
	}
	if none, kept, _ := s.Narrow([]string{"/etc"}); len(kept) != 0 || none.within != nil {
		t.Errorf("nothing kept, yet the view is narrowed: %v", none.within)
	}
	// Narrowing a narrowed view never widens it.
	w, _, _ := v.Narrow([]string{tr.work})
	if f, err := w.Open("file.txt"); err == nil {
		f.Close()
		t.Error("a second announcement widened the view")
	}
}

// A view's progress function hears a walk's running count of entries.
func TestWalkProgress(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 * ProgressEvery {
		mustWrite(t, filepath.Join(dir, fmt.Sprintf("d%d/f%d.txt", i%7, i)), "x")
	}
	s, err := New(policy.DefaultPolicy(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := s.ForCall()
	var got []int64
	v.SetProgress(func(n int64) { got = append(got, n) })
	if _, err := v.Walk(context.Background(), ".", WalkOptions{MaxDepth: -1}, func(e *Entry) error { e.Release(); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []int64{ProgressEvery, 2 * ProgressEvery, 3 * ProgressEvery}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("progress %v, want %v (3·%d files and 7 directories)", got, want, ProgressEvery)
	}
	if _, err := s.Walk(context.Background(), ".", WalkOptions{MaxDepth: -1}, func(e *Entry) error { e.Release(); return nil }); err != nil || len(got) != 3 {
		t.Errorf("the sandbox's own walk called the view's progress: %v", got)
	}
}
