//go:build unix

package sandbox

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// Narrowing never widens, for the directories fsbox mcp serves: random
// policies (deny, allow, write_deny, rule sets, a write root), random
// served directories (at, under and above denied ones, native or
// reference), random paths (relative, absolute, with ".."), read and
// write, and client roots narrowing the served sandbox further. Whatever
// the served sandbox allows, the policy's own allows; what it denies by a
// rule (not by its bound), the policy's own denies too.
//
// Fails on c24bc27: the served directories were the roots, so an anchored
// deny rule (secret/**) stopped seeing the served directory's paths.
func TestNarrowNeverWidensProperty(t *testing.T) {
	seed, iters := int64(39), 150
	if v, err := strconv.ParseInt(os.Getenv("FSBOX_PROP_SEED"), 10, 64); err == nil {
		seed, iters = v, 2000
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	w, w2 := filepath.Join(base, "W"), filepath.Join(base, "W2")
	dirs := []string{"", "secret", "secret/in", "sub", "sub/secret", "sub/deep", ".git", ".git/hooks", "vendor", "vendor/lib", "tmp", "docs"}
	for _, d := range dirs {
		mustWrite(t, filepath.Join(w, d, "a.txt"), "a\n")
		mustWrite(t, filepath.Join(w, d, "b.md"), "b\n")
		mustWrite(t, filepath.Join(w, d, "k.pem"), "k\n")
	}
	mustWrite(t, filepath.Join(w2, "x.txt"), "x\n")
	denyPool := []string{"secret/**", "secret", "sub/secret/**", "**/secret/**", "**/*.pem", "**/tmp/**", "vendor/lib", "docs/*.md", "**/deep"}
	allowPool := []string{"**/*.txt", "sub/**", "*.txt", "**/*.md", "docs/**"}
	writeDenyPool := []string{"vendor/**", "**/hooks/**", "sub/*.md", "**/sub/deep/**"}
	pick := func(r *rand.Rand, pool []string, most int) []string {
		var out []string
		for i := r.Intn(most + 1); i > 0; i-- {
			out = append(out, pool[r.Intn(len(pool))])
		}
		return out
	}
	r := rand.New(rand.NewSource(seed))
	served, checked := 0, 0
	for iter := 0; iter < iters; iter++ {
		p := policy.DefaultPolicy(w)
		p.WriteRoots = []string{w2}
		p.Source, p.Link = filepath.Join(base, "p.toml"), filepath.Join(base, "p.toml")
		p.Journal.State = filepath.Join(base, "state")
		p.Paths.Deny, p.Paths.Allow = pick(r, denyPool, 2), pick(r, allowPool, 1)
		p.Paths.WriteDeny = append(p.Paths.WriteDeny, pick(r, writeDenyPool, 2)...)
		if r.Intn(3) == 0 {
			p.Preset = "agent"
			p.ApplyPreset(nil)
			p.Write.RequirePrecondition, p.PreconditionByPreset = false, false
		}
		orig, err := New(p, base)
		if err != nil {
			t.Fatalf("policy %+v: %v", p.Paths, err)
		}
		reference := r.Intn(2) == 0
		first := filepath.Join(w, dirs[r.Intn(len(dirs))])
		sdirs := []string{first}
		if r.Intn(2) == 0 {
			sdirs = append(sdirs, filepath.Join(w, dirs[r.Intn(len(dirs))]))
		}
		q, err := policy.ServeDirs(p, sdirs, func(int) bool { return reference })
		if err == nil && reference {
			q, err = policy.ForReferenceProfile(q)
		}
		var s *Sandbox
		if err == nil {
			s, err = New(q, base)
		}
		if err != nil {
			if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConfig {
				t.Errorf("serving %q (reference %v): %v, want served or config", sdirs, reference, err)
			}
			orig.Close()
			continue
		}
		served++
		// Client roots narrow the served directories further (a view).
		client, _, _ := s.Narrow([]string{filepath.Join(w, dirs[r.Intn(len(dirs))])})
		for k := 0; k < 25; k++ {
			d := dirs[r.Intn(len(dirs))]
			name := []string{"a.txt", "b.md", "k.pem", "new.txt"}[r.Intn(4)]
			abs := filepath.Join(w, d, name)
			var given string
			switch r.Intn(3) {
			case 0:
				given = abs
			case 1: // relative to the first served directory, ".." climbing where needed
				rel, _ := filepath.Rel(first, abs)
				given = rel
			default: // a detour through a sibling
				given = filepath.Join(w, d, "..", filepath.Base(filepath.Join(w, d)), name)
				if d == "" {
					given = abs
				}
			}
			for _, c := range []struct {
				write bool
				view  *Sandbox
			}{{false, s}, {true, s}, {false, client}, {true, client}} {
				write := c.write
				if !write && name == "new.txt" {
					continue
				}
				nv := verdict(c.view, write, given)
				ov := verdict(orig, write, abs)
				checked++
				switch {
				case nv == "" && ov != "":
					t.Errorf("serving %q (reference %v) under %+v: %s %s allowed, the policy says %s",
						sdirs, reference, p.Paths, map[bool]string{false: "read", true: "write"}[write], given, ov)
				case strings.HasSuffix(nv, "/deny") || strings.HasSuffix(nv, "/allow") || strings.HasSuffix(nv, "/write_deny"):
					if ov == "" {
						t.Errorf("serving %q under %+v: %s %s denied by %s, the policy allows it (a rule moved its anchor)",
							sdirs, p.Paths, map[bool]string{false: "read", true: "write"}[write], given, nv)
					}
				}
			}
		}
		s.Close()
		orig.Close()
	}
	if served < 30 || checked < 1000 {
		t.Errorf("only %d policies served, %d verdicts compared: the generator tests too little", served, checked)
	}
	os.RemoveAll(filepath.Join(base, "state"))
}
