//go:build unix

package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestOpenerMatchesOpen: an Opener answers every path exactly as Open
// does, the same file or the same error, over the attack fixture (deny
// patterns and regexes, symlinks in and out of the root, absolute and
// dangling links, loops, '..', a FIFO, a hard link to a file outside,
// a read root), under the base policy, with deny_hardlinks, and with an
// allow list; from several goroutines at once, twice each (a directory
// held from the first time).
func TestOpenerMatchesOpen(t *testing.T) {
	tr := newTree(t, t.TempDir())
	paths := []string{
		"file.txt", "a/inner.txt", "a/readme.md", "a/cert.PEM", "a/b/deep.txt", "secrets/key", ".env", "upper/.ENV",
		"x.lock", ".git/config", "..test", "../work_evil/evil.txt", "../outside/secret.txt", "link_secrets/key", "notes",
		"notes_up", "out_file", "out_dir/secret.txt", "abs_out", "abs_in", "abs_in_dir/inner.txt", "dangling", "dangling_out",
		"chain_a", "chain_in_a", "in_link", "in_dir/inner.txt", "in_dir/b/deep.txt", "a/up_link", "a/esc_link", "evil_link/evil.txt",
		"loop1", "lock_link", "hard_secret", "fifo", "a", "a/b", "missing.txt", "a/missing.txt", "nodir/x.txt", "a/../file.txt",
		"a/b/../inner.txt", "./file.txt", "", "a\x00b", filepath.Join(tr.ro, "doc.txt"), filepath.Join(tr.ro, "ro_out"),
		filepath.Join(tr.ro, "ro_to_work"), filepath.Join(tr.work, "a/inner.txt"), "a/inner.txt/x", "/proc/self/status",
	}
	policies := map[string]func(*policy.Policy){
		"base":           nil,
		"deny_hardlinks": func(p *policy.Policy) { p.Paths.DenyHardlinks = true },
		"allow":          func(p *policy.Policy) { p.Paths.Allow = []string{"**/*.txt"} },
	}
	for name, mod := range policies {
		t.Run(name, func(t *testing.T) {
			s := newSandbox(t, tr, mod)
			o := s.NewOpener()
			defer o.Close()
			describe := func(f *File, err error) string {
				if err != nil {
					e := fserr.AsError(err)
					return fmt.Sprintf("error %s %s %s %q", e.Code, e.Rule, e.Path, e.Message(nil))
				}
				defer f.Close()
				data, err := io.ReadAll(f)
				i := f.Info
				return fmt.Sprintf("file %q %q %s %d %v %d %q %v", i.Path, i.Name, i.Type, i.Size, i.ModTime, i.key, data, err)
			}
			var wg sync.WaitGroup
			for round := range 2 {
				for _, p := range paths {
					wg.Add(1)
					go func() {
						defer wg.Done()
						want := describe(s.Open(p))
						got := describe(o.Open(p))
						if got != want {
							t.Errorf("round %d, %q:\n Opener: %s\n Open:   %s", round, p, got, want)
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}

// TestSettled: a file that grew, shrank or was rewritten at its size
// since it was opened is not settled (conflict); an untouched one is.
func TestSettled(t *testing.T) {
	tr := newTree(t, t.TempDir())
	s := newSandbox(t, tr, nil)
	o := s.NewOpener()
	defer o.Close()
	p := filepath.Join(tr.work, "a/inner.txt")
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"untouched", func() {}},
		{"grew", func() { mustWrite(t, p, "inner and more") }},
		{"shrank", func() { mustWrite(t, p, "in") }},
		{"rewritten", func() { mustWrite(t, p, "INNER"); os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)) }},
	} {
		mustWrite(t, p, "inner")
		os.Chtimes(p, time.Now(), time.Now().Add(-time.Hour))
		f, err := o.Open("a/inner.txt")
		if err != nil {
			t.Fatal(err)
		}
		c.change()
		err = f.Settled()
		f.Close()
		if (c.name == "untouched") != (err == nil) || (err != nil && fserr.AsError(err).Code != fserr.CodeConflict) {
			t.Errorf("%s: Settled = %v", c.name, err)
		}
	}
}
