package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestLibraryCallersObeyTheSwitches: a Go program using pkg/sandbox and
// pkg/ops is held to the policy's [commands] as the command line is.
// With the built-in policy rm is off; with every command off, every
// operation refuses (denied, rule command) before touching a file.
func TestLibraryCallersObeyTheSwitches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "victim.txt"), []byte("keep me\n"), 0o644)
	sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	_, err = Remove(ctx, sb, "victim.txt", false)
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeDenied || e.Rule != fserr.RuleCommand {
		t.Fatalf("Remove with rm off: %v, want denied (command)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "victim.txt")); err != nil {
		t.Fatalf("the file went: %v", err)
	}
	d, err := Explain(ctx, sb, "rm", "victim.txt")
	if err != nil || d.Allowed || d.Rule != string(fserr.RuleCommand) {
		t.Errorf("explain rm: %+v, %v; want denied by the same rule", d, err)
	}

	off := policy.DefaultPolicy(dir)
	for _, name := range Registry.Names() {
		off.Commands[name] = false
	}
	sbOff, err := sandbox.New(off, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sbOff.Close()
	for _, op := range Registry.Ops() {
		if op.Run == nil {
			continue
		}
		in := argsOn(op, "victim.txt")
		setDeclared(in, map[string]any{"content": "x", "fields": "1", "old": "keep", "new": "k"})
		_, err := op.Run(ctx, sbOff, in)
		if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeDenied || e.Rule != fserr.RuleCommand {
			t.Errorf("%s with every command off: %v, want denied (command)", op.Name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "victim.txt")); string(b) != "keep me\n" {
		t.Errorf("victim.txt = %q", b)
	}
	// A policy naming an operation that does not exist is refused at
	// every entry point, not just by the command line's loader.
	bad := policy.DefaultPolicy(dir)
	bad.Commands["frobnicate"] = true
	sbBad, err := sandbox.New(bad, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sbBad.Close()
	if _, err := Read(ctx, sbBad, ReadOptions{Path: "victim.txt"}); fserr.AsError(err) == nil || fserr.AsError(err).Code != fserr.CodeConfig {
		t.Errorf("read under a policy naming frobnicate: %v, want config", err)
	}
}

// TestNeedsAreEnforced: links runs only while mkdir and write are on too.
func TestNeedsAreEnforced(t *testing.T) {
	dir := t.TempDir()
	p := policy.DefaultPolicy(dir)
	p.Commands["write"] = false
	if err := CheckCommand(p, "links"); fserr.AsError(err) == nil || fserr.AsError(err).Rule != fserr.RuleCommand {
		t.Errorf("links with write off: %v", err)
	}
	if err := CheckCommand(p, "mkdir"); err != nil {
		t.Errorf("mkdir: %v", err)
	}
}

// openFDs counts this process's open descriptors (Linux).
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestCancelStopsGrep: a tree grep whose context is cancelled after the
// first file comes back returns the context's error, opens far fewer
// files than the tree holds (only those already handed to a worker), and
// leaves no descriptor open. A context cancelled before the call opens
// nothing at all.
func TestCancelStopsGrep(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	sb, dir := testSandbox(t)
	const files = 3000
	for i := 0; i < files; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%30))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.txt", i)), []byte("needle\nhay\n"), 0o644)
	}
	before := openFDs(t)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grep(ctx, sb, GrepOptions{Pattern: "needle"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("grep with a cancelled context: %v", err)
	}
	if paths, read, _ := sb.Usage(); len(paths) != 0 || read != 0 {
		t.Errorf("a cancelled grep touched %d paths, read %d bytes", len(paths), read)
	}

	ctx, cancel = context.WithCancel(context.Background())
	seen := 0
	_, err := Grep(ctx, sb, GrepOptions{Pattern: "needle", Sink: func(fr *FileResult) error {
		seen++
		cancel()
		return nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("grep cancelled mid-way: %v, want context.Canceled", err)
	}
	_, read, _ := sb.Usage()
	if opened := read / int64(len("needle\nhay\n")); opened >= files/2 {
		t.Errorf("read %d of %d files after the cancel", opened, files)
	}
	if seen != 1 {
		t.Errorf("the sink saw %d files after the cancel, want 1", seen)
	}
	// A cancel returns at once, as the deadline does: a worker still in
	// a read closes its file when the read returns. Every descriptor must
	// come back; the bound is on a leak, not a timing.
	after := openFDs(t)
	for end := time.Now().Add(10 * time.Second); after > before && time.Now().Before(end); after = openFDs(t) {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d descriptors open 10 s after the call, %d before", after, before)
	}
}

// TestCancelStopsSort: a sort whose context is cancelled while its lines
// go out stops with the context's error and closes its file.
func TestCancelStopsSort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	sb, dir := testSandbox(t)
	var data []byte
	for i := 0; i < 100000; i++ {
		data = fmt.Appendf(data, "%08d\n", (i*7919)%100000)
	}
	os.WriteFile(filepath.Join(dir, "n.txt"), data, 0o644)
	before := openFDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	lines := 0
	_, err := Sort(ctx, sb, SortOptions{Path: "n.txt", Sink: func([]byte) error {
		lines++
		if lines == 10 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("sort cancelled mid-way: %v", err)
	}
	if lines > 1024+10 {
		t.Errorf("%d lines went out after the cancel", lines-10)
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after the call, %d before", after, before)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := Sort(ctx, sb, SortOptions{Path: "n.txt"}); !errors.Is(err, context.Canceled) {
		t.Errorf("sort with a cancelled context: %v", err)
	}
}

// TestStdinWithoutOne: a Go caller (or a tool call) that gives no stdin
// gets not_found for "-", never a read of the process's own stdin.
func TestStdinWithoutOne(t *testing.T) {
	sb, _ := testSandbox(t)
	_, err := Sort(context.Background(), sb, SortOptions{Path: "-"})
	if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeNotFound {
		t.Errorf("sort - without a stdin: %v", err)
	}
	sb.SetStdin(strings.NewReader("b\na\n"))
	var got []string
	if _, err := Sort(context.Background(), sb, SortOptions{Path: "-", Sink: func(l []byte) error { got = append(got, string(l)); return nil }}); err != nil || strings.Join(got, "") != "a\nb\n" {
		t.Errorf("sort - with a stdin: %q %v", got, err)
	}
	if _, err := Wc(context.Background(), sb, WcOptions{Paths: []string{"-"}}); fserr.AsError(err) == nil || fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("stdin read twice: %v", err)
	}
}

// argsOn is an input for op with each argument given: path arguments
// name path, a command argument "read", a shell "bash", a number 0.
func argsOn(op *spec.Op, path string) *spec.Input {
	in := spec.NewInput(op)
	for _, a := range op.Args {
		switch {
		case a.Many:
			in.Set(a.Name, []string{path})
		case a.Type == spec.Int:
			in.Set(a.Name, int64(0))
		case a.Name == "command":
			in.Set(a.Name, "read")
		case a.Name == "shell":
			in.Set(a.Name, "bash")
		default:
			in.Set(a.Name, path)
		}
	}
	return in
}

// setDeclared sets the values whose names op declares.
func setDeclared(in *spec.Input, vals map[string]any) {
	for name, v := range vals {
		if in.Op().Option(name) != nil || in.Op().Arg(name) != nil {
			in.Set(name, v)
		}
	}
}

// TestEveryBindingReadsDeclaredOptions runs every descriptor's binding
// (its Run, as every face calls it) under a policy with every command on:
// an option name its code reads but its descriptor does not declare (a
// misspelling read as "never given") panics in spec.Input, and fails here.
func TestEveryBindingReadsDeclaredOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, content := range map[string]string{"victim.txt": "keep me\n", "d/x.txt": "x\n", "p.patch": "*** Begin Patch\n*** Add File: new.txt\n+n\n*** End Patch\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.DefaultPolicy(dir)
	p.Journal.State = filepath.Join(t.TempDir(), "state")
	for _, op := range Registry.Ops() {
		p.Commands[op.Name] = true
	}
	sb, err := sandbox.New(p, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for _, op := range Registry.Ops() {
		if op.Run == nil || op.Name == "mcp" {
			continue
		}
		t.Run(op.Name, func(t *testing.T) {
			for _, values := range []map[string]any{
				nil, // every option left out: the defaults
				{"content": "x", "fields": "1", "old": "keep", "new": "k", "dry-run": true, "limit": int64(1), "patch-file": "p.patch"},
			} {
				in := argsOn(op, "victim.txt")
				setDeclared(in, values)
				op.Run(ctx, sb.ForCall(), in) // its result does not matter: reading an undeclared name panics
			}
		})
	}
}
