//go:build unix

package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

const (
	raceInside = "inside"
	raceDenied = "DENIED-SECRET"
)

// raceSwapper flips the workdir entry name between a real directory (with
// f = "inside") and a prepared symlink, as fast as it can, until stop is
// closed. It uses RENAME_EXCHANGE where the kernel has it (the name always
// exists) and alternates with plain renames through a hold name (the name
// is sometimes missing), so both kinds of swap are exercised.
type raceSwapper struct {
	work, name string
	swaps      atomic.Int64
	err        error
}

func (sw *raceSwapper) run(stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	d := filepath.Join(sw.work, sw.name)
	alt := filepath.Join(sw.work, sw.name+".alt")
	hold := filepath.Join(sw.work, sw.name+".hold")
	useExchange := exchange(d, alt) == nil
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if useExchange && i%2 == 0 {
			if err := exchange(d, alt); err != nil {
				sw.err = err
				return
			}
		} else {
			for _, mv := range [][2]string{{d, hold}, {alt, d}, {hold, alt}} {
				if err := os.Rename(mv[0], mv[1]); err != nil {
					sw.err = err
					return
				}
			}
		}
		sw.swaps.Add(1)
	}
}

// raceSetup builds a workdir with two swapped names:
//
//	esc: dir <-> symlink ../outside (f = OUTSIDE-SECRET): a root escape
//	den: dir <-> symlink secrets (f = DENIED-SECRET, deny secrets/**): a deny bypass
func raceSetup(t *testing.T) (*Sandbox, string, []*raceSwapper) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	mustWrite(t, filepath.Join(base, "outside", "f"), outsideSecret)
	mustWrite(t, filepath.Join(base, "outside", "outside_only"), outsideSecret)
	mustWrite(t, filepath.Join(work, "secrets", "f"), raceDenied)
	mustWrite(t, filepath.Join(work, "secrets", "secret_only"), raceDenied)
	var sws []*raceSwapper
	for _, nt := range [][2]string{{"esc", "../outside"}, {"den", "secrets"}} {
		name, target := nt[0], nt[1]
		mustWrite(t, filepath.Join(work, name, "f"), raceInside)
		mustWrite(t, filepath.Join(work, name, "inside_only"), raceInside)
		mustSymlink(t, target, filepath.Join(work, name+".alt"))
		sws = append(sws, &raceSwapper{work: work, name: name})
	}
	p := policy.DefaultPolicy(work)
	p.Paths.Deny = []string{"secrets/**"}
	s, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, work, sws
}

// raceCheck is called with the swapped name; it returns whether the call
// succeeded, the error code otherwise, and a non-empty leak description
// when the sandbox let something through it must not.
type raceCheck func(s *Sandbox, work, name string) (ok bool, code fserr.Code, leak string)

func TestSymlinkSwapRace(t *testing.T) {
	dur := 3 * time.Second
	if testing.Short() {
		dur = 300 * time.Millisecond
	}
	underWork := func(work, abs string) bool {
		return strings.HasPrefix(abs, work+"/") && !strings.HasPrefix(abs, work+"/secrets")
	}
	checks := []struct {
		name string
		fn   raceCheck
	}{
		{"Open", func(s *Sandbox, work, name string) (bool, fserr.Code, string) {
			f, err := s.Open(name + "/f")
			if err != nil {
				return false, fserr.AsError(err).Code, ""
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			if err != nil {
				return false, "read-error", ""
			}
			if string(b) != raceInside || !underWork(work, f.Info.Abs) {
				return true, "", "read " + string(b) + " from " + f.Info.Abs
			}
			return true, "", ""
		}},
		{"OpenDir", func(s *Sandbox, work, name string) (bool, fserr.Code, string) {
			d, err := s.OpenDir(name)
			if err != nil {
				return false, fserr.AsError(err).Code, ""
			}
			defer d.Close()
			if !underWork(work, d.Info.Abs) {
				return true, "", "opened " + d.Info.Abs
			}
			l, err := d.ReadDir()
			if err != nil {
				return false, "readdir-" + fserr.AsError(err).Code, ""
			}
			for _, e := range l.Entries {
				if e.Name == "outside_only" || e.Name == "secret_only" || !underWork(work, e.Abs) {
					return true, "", "listed " + e.Name + " at " + e.Abs
				}
			}
			return true, "", ""
		}},
		{"Lstat", func(s *Sandbox, work, name string) (bool, fserr.Code, string) {
			info, err := s.Lstat(name + "/f")
			if err != nil {
				return false, fserr.AsError(err).Code, ""
			}
			if info.Size != int64(len(raceInside)) || !underWork(work, info.Abs) {
				return true, "", "stat size " + info.Abs
			}
			return true, "", ""
		}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s, work, sws := raceSetup(t)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, sw := range sws {
				wg.Add(1)
				go sw.run(stop, &wg)
			}
			var ok, failed, leaks int
			codes := map[fserr.Code]int{}
			deadline := time.Now().Add(dur)
			for i := 0; time.Now().Before(deadline); i++ {
				name := sws[i%len(sws)].name
				good, code, leak := c.fn(s, work, name)
				if leak != "" {
					leaks++
					if leaks <= 5 {
						t.Errorf("%s(%s): leak: %s", c.name, name, leak)
					}
				}
				if good {
					ok++
				} else {
					failed++
					codes[code]++
				}
			}
			close(stop)
			wg.Wait()
			for _, sw := range sws {
				if sw.err != nil {
					t.Fatalf("swapper %s: %v", sw.name, sw.err)
				}
				if sw.swaps.Load() == 0 {
					t.Fatalf("swapper %s never swapped", sw.name)
				}
			}
			t.Logf("%s: %d succeeded, %d failed %v, %d leaks; swaps esc=%d den=%d",
				c.name, ok, failed, codes, leaks, sws[0].swaps.Load(), sws[1].swaps.Load())
			if leaks > 0 {
				t.Fatalf("%d calls let the outside or denied content through", leaks)
			}
		})
	}
}
