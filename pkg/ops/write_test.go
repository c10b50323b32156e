//go:build unix

package ops

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func TestEditRoundTripsBytes(t *testing.T) {
	sb, dir := testSandbox(t)
	cases := []struct {
		name, in, old, new, want string
	}{
		{"crlf", "a\r\nb\r\nc\r\n", "a\nb", "x\ny", "x\r\ny\r\nc\r\n"},
		{"bom", "\xef\xbb\xbfhello\nworld", "hello", "HI", "\xef\xbb\xbfHI\nworld"},
		{"latin1", "caf\xe9 au lait\nna\xefve\n", "au", "OU", "caf\xe9 OU lait\nna\xefve\n"},
		{"no final newline", "one\ntwo", "two", "2", "one\n2"},
		{"mixed stays exact", "a\nb\r\n", "a\nb", "z", "z\r\n"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte(c.in), 0o640)
		if _, err := Edit(context.Background(), sb, EditOptions{Path: "f", Edits: []EditSpec{{Old: c.old, New: c.new}}}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != c.want {
			t.Errorf("%s: got %q want %q", c.name, got, c.want)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v changed", c.name, fi.Mode())
		}
	}
}

func TestEditErrors(t *testing.T) {
	sb, dir := testSandbox(t)
	os.WriteFile(filepath.Join(dir, "f"), []byte("alpha beta\ngamma\nalpha beta\n"), 0o644)
	cases := []struct {
		e    []EditSpec
		code fserr.Code
		msg  string
	}{
		{[]EditSpec{{Old: "alpha beta", New: "x"}}, fserr.CodeAmbiguous, "at 1:1, 3:1"},
		{[]EditSpec{{Old: "alpha betx", New: "x"}}, fserr.CodeTextNotFound, "line 1"},
		{[]EditSpec{{Old: "", New: "x"}}, fserr.CodeUsage, "empty"},
		{[]EditSpec{{Old: "gamma", New: "G"}, {Old: "nope", New: "x"}}, fserr.CodeTextNotFound, "edit 2"},
	}
	for _, c := range cases {
		_, err := Edit(context.Background(), sb, EditOptions{Path: "f", Edits: c.e})
		e := fserr.AsError(err)
		if e == nil || e.Code != c.code || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%+v: got %v, want %s mentioning %q", c.e, err, c.code, c.msg)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != "alpha beta\ngamma\nalpha beta\n" {
		t.Errorf("a failed multi-edit changed the file: %q", got)
	}
}

func TestWriteModesAndLimits(t *testing.T) {
	sb, dir := testSandbox(t)
	p := filepath.Join(dir, "x")
	os.WriteFile(p, []byte("old"), 0o600)
	os.Link(p, filepath.Join(dir, "hardlink"))
	if _, err := Write(context.Background(), sb, WriteOptions{Path: "x", Content: strings.NewReader("new")}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hardlink")); string(b) != "old" {
		t.Errorf("writing through a name must not change the shared inode: %q", b)
	}
	big := strings.NewReader(strings.Repeat("x", int(sb.Limits().MaxWriteBytes)+1))
	if _, err := Write(context.Background(), sb, WriteOptions{Path: "big", Content: big}); fserr.AsError(err).Code != fserr.CodeTooLarge {
		t.Errorf("over max_write_bytes: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Error("a refused write left a file")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".fsbox-tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "out"))
	if _, err := Write(context.Background(), sb, WriteOptions{Path: "out/f", Content: strings.NewReader("x")}); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("write through a symlink out of the workdir: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Write(context.Background(), sb, WriteOptions{Path: "fifo", Content: strings.NewReader("x"), Append: true})
		done <- err
	}()
	select {
	case err := <-done:
		if fserr.AsError(err).Code != fserr.CodeDenied {
			t.Errorf("append to a FIFO: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("write to a FIFO blocked")
	}
}

// TestParallelEditsLoseNothing runs 8 goroutines that each add their own
// line with --expect-sha256 and retry on conflict: every line must land.
func TestParallelEditsLoseNothing(t *testing.T) {
	sb, dir := testSandbox(t)
	p := filepath.Join(dir, "shared")
	os.WriteFile(p, []byte("start\n"), 0o644)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := 0; n < 5; n++ {
				for {
					cur, _ := os.ReadFile(p)
					next := string(cur) + fmt.Sprintf("w%d-%d\n", i, n)
					_, err := Write(context.Background(), sb, WriteOptions{Path: "shared", Content: strings.NewReader(next), ExpectSHA256: sha256Hex(cur)})
					if err == nil {
						break
					}
					if fserr.AsError(err).Code != fserr.CodeConflict {
						t.Error(err)
						return
					}
				}
			}
		}(i)
	}
	wg.Wait()
	got, _ := os.ReadFile(p)
	for i := 0; i < 8; i++ {
		for n := 0; n < 5; n++ {
			if !bytes.Contains(got, []byte(fmt.Sprintf("w%d-%d\n", i, n))) {
				t.Errorf("lost update w%d-%d", i, n)
			}
		}
	}
}

func TestParallelAppendsDoNotInterleave(t *testing.T) {
	sb, dir := testSandbox(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			line := strings.Repeat(fmt.Sprint(i), 5000) + "\n"
			for n := 0; n < 10; n++ {
				if _, err := Write(context.Background(), sb, WriteOptions{Path: "log", Content: strings.NewReader(line), Append: true}); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	got, _ := os.ReadFile(filepath.Join(dir, "log"))
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 80 {
		t.Fatalf("%d lines, want 80", len(lines))
	}
	for _, l := range lines {
		if l != strings.Repeat(l[:1], 5000) {
			t.Fatalf("interleaved line: %.40q…", l)
		}
	}
}

// TestCrashLeavesOldOrNew kills a child process at random moments while it
// replaces a 64 MB file; the file is always entirely old or entirely new.
func TestCrashLeavesOldOrNew(t *testing.T) {
	if os.Getenv("FSBOX_CRASH_CHILD") != "" {
		dir := os.Getenv("FSBOX_CRASH_CHILD")
		p := policy.DefaultPolicy(dir)
		p.Limits.MaxWriteBytes = 128 << 20
		sb, err := sandbox.New(p, "")
		if err != nil {
			os.Exit(3)
		}
		for {
			Write(context.Background(), sb, WriteOptions{Path: "target", Content: bytes.NewReader(bytes.Repeat([]byte("N"), 64<<20))})
		}
	}
	dir := t.TempDir()
	old := bytes.Repeat([]byte("O"), 64<<20)
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for r := 0; r < rounds; r++ {
		os.WriteFile(filepath.Join(dir, "target"), old, 0o644)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLeavesOldOrNew$")
		cmd.Env = append(os.Environ(), "FSBOX_CRASH_CHILD="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.Intn(400)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		got, err := os.ReadFile(filepath.Join(dir, "target"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 64<<20 || (got[0] != 'O' && got[0] != 'N') || bytes.Count(got, got[:1]) != len(got) {
			t.Fatalf("round %d: torn file: %d bytes, starts %q", r, len(got), got[:1])
		}
	}
}

// TestSymlinkSwapUnderWrite swaps a directory in the write path between a
// real directory and a symlink to outside: no byte may land outside.
func TestSymlinkSwapUnderWrite(t *testing.T) {
	sb, dir := testSandbox(t)
	outside := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	swap := filepath.Join(dir, "d")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(swap)
			os.Symlink(outside, swap)
			os.Remove(swap)
			os.Symlink("real", swap)
		}
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	if testing.Short() {
		deadline = time.Now().Add(300 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		Write(context.Background(), sb, WriteOptions{Path: "d/f", Content: strings.NewReader("x")})
	}
	close(stop)
	wg.Wait()
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 {
		t.Fatalf("a write landed outside the workdir: %v", ents)
	}
}

// TestWriteModeIsPermissionBitsOnly: a mode with setuid, setgid, sticky
// (or any type bit) is usage for every write, new file or existing,
// replace or append, and nothing changes; 0777 and below go through.
func TestWriteModeIsPermissionBitsOnly(t *testing.T) {
	sb, dir := testSandbox(t)
	existing := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []fs.FileMode{fs.ModeSetuid | 0o755, fs.ModeSetgid | 0o755, fs.ModeSetuid | fs.ModeSetgid | 0o755,
		fs.ModeSticky | 0o777, fs.ModeSetuid | 0o777, fs.ModeSetuid, fs.ModeDir | 0o755} {
		for _, name := range []string{"run.sh", "new.sh"} {
			for _, app := range []bool{false, true} {
				mode := m
				_, err := Write(context.Background(), sb, WriteOptions{Path: name, Content: strings.NewReader("pwn"), Append: app, Mode: &mode})
				if e := fserr.AsError(err); e.Code != fserr.CodeUsage || !strings.Contains(e.Msg, "permission bits only") {
					t.Errorf("mode %v on %s (append %v): %v, want usage", m, name, app, err)
				}
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.sh")); err == nil {
		t.Error("a refused write created its file")
	}
	fi, _ := os.Stat(existing)
	if b, _ := os.ReadFile(existing); string(b) != "old" || fi.Mode() != 0o644 {
		t.Errorf("a refused write changed the file: %q %v", b, fi.Mode())
	}
	for _, m := range []fs.FileMode{0o777, 0o700, 0o644, 0} {
		mode := m
		if _, err := Write(context.Background(), sb, WriteOptions{Path: "ok.sh", Content: strings.NewReader("x"), Mode: &mode}); err != nil {
			t.Fatalf("mode %v: %v", m, err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, "ok.sh")); fi.Mode() != m {
			t.Errorf("mode %v: the file has %v", m, fi.Mode())
		}
	}
}
