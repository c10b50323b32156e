//go:build unix

package sandbox

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// dotdotOutcome is what every door of the sandbox answers for p, as one
// string per door: the answer's path and kind, or the error's code, rule
// and message. Nothing is changed.
func dotdotOutcome(s *Sandbox, p string) []string {
	var out []string
	add := func(door string, what string, err error) {
		if err != nil {
			e := fserr.AsError(err)
			what = fmt.Sprintf("%s %s %s", e.Code, e.Rule, e.Msg)
		}
		out = append(out, door+": "+what)
	}
	if f, err := s.Open(p); err == nil {
		b, _ := io.ReadAll(f)
		add("open", f.Info.Path+" "+strings.TrimSpace(string(b)), nil)
		f.Close()
	} else {
		add("open", "", err)
	}
	if d, err := s.OpenDir(p); err == nil {
		add("opendir", d.Info.Path, nil)
		d.Close()
	} else {
		add("opendir", "", err)
	}
	info, err := s.Lstat(p)
	add("lstat", info.Path+" "+info.Type, err)
	for _, need := range []Need{NeedReadAny, NeedLook, NeedWrite, NeedEntry, NeedMake} {
		info, err := s.Probe(need, p, 0, "")
		add("probe "+string(need), info.Path, err)
	}
	if w, err := s.OpenEntry(p); err == nil {
		add("entry", fmt.Sprintf("%s exists=%v", w.Path, w.Exists), nil)
		w.Close()
	} else {
		add("entry", "", err)
	}
	if w, err := s.OpenWriteTarget(p, false); err == nil {
		add("write", fmt.Sprintf("%s exists=%v", w.Path, w.Exists), nil)
		w.Close()
	} else {
		add("write", "", err)
	}
	paths, _, err := walkPaths(s, p, WalkOptions{MaxDepth: -1, Hidden: true})
	add("walk", strings.Join(paths, ","), err)
	rel, err := s.WorkdirRel(p)
	add("workdirrel", rel, err)
	return out
}

// TestDotDotThroughDeniedIsNoOracle: '..' is resolved lexically before
// any rule or open, so a path that passes through a denied directory
// gets the same answer whatever lies there — a directory, a file, a
// symlink, nothing. Fails on c24bc27: the rules were checked on the
// cleaned path while os.Root walked every raw component, so
// secret/x/../../a.txt was a.txt when secret/x was a directory,
// not_found when it was missing and "a parent is not a directory" when
// it was a file: an existence and type oracle for a denied directory.
func TestDotDotThroughDeniedIsNoOracle(t *testing.T) {
	worlds := []struct {
		name string
		make func(t *testing.T, secret string)
	}{
		{"absent", func(t *testing.T, secret string) {}},
		{"dir", func(t *testing.T, secret string) { must(t, os.MkdirAll(secret+"/x/y", 0o755)) }},
		{"file", func(t *testing.T, secret string) { must(t, os.WriteFile(secret+"/x", []byte("k"), 0o644)) }},
		{"symlink to a dir", func(t *testing.T, secret string) { must(t, os.Symlink("../d/deep", secret+"/x")) }},
		{"symlink out", func(t *testing.T, secret string) { must(t, os.Symlink("/", secret+"/x")) }},
		{"dangling symlink", func(t *testing.T, secret string) { must(t, os.Symlink("nowhere/at/all", secret+"/x")) }},
		{"symlink loop", func(t *testing.T, secret string) { must(t, os.Symlink("x", secret+"/x")) }},
	}
	paths := []string{
		"secret/x/../../a.txt",
		"secret/x/y/../../../a.txt",
		"secret/x/../../d",
		"secret/x/../../nope.txt",
		"secret/x/../../new/deeper.txt",
		"secret/x/../y",
		"secret/x/..",
		"secret/x/../../../out",
		"d/../secret/x/../../a.txt",
		"./secret//x/./../../a.txt",
	}
	answers := func(s *Sandbox, work string) map[string][]string {
		got := map[string][]string{}
		for _, q := range append(paths, work+"/secret/x/../../a.txt") {
			var outs []string
			for _, o := range dotdotOutcome(s, q) {
				outs = append(outs, strings.ReplaceAll(o, work, "$W"))
			}
			got[strings.TrimPrefix(q, work)] = outs
		}
		return got
	}
	same := func(first, got map[string][]string, world string) {
		t.Helper()
		for q, want := range first {
			if g := got[q]; strings.Join(g, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s with secret/x %s answers otherwise than with it absent:\n%s\nabsent:\n%s", q, world, strings.Join(g, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	var first map[string][]string
	for _, wd := range worlds {
		dir := t.TempDir()
		work := dir + "/w"
		must(t, os.MkdirAll(work+"/secret", 0o755))
		must(t, os.MkdirAll(work+"/d/deep", 0o755))
		must(t, os.WriteFile(work+"/a.txt", []byte("top"), 0o644))
		must(t, os.WriteFile(work+"/d/a.txt", []byte("in d"), 0o644))
		wd.make(t, work+"/secret")
		p := policy.DefaultPolicy(work)
		p.Paths.Deny = []string{"secret", "secret/**"}
		s, err := New(p, "")
		if err != nil {
			t.Fatal(err)
		}
		got := answers(s, work)
		s.Close()
		if first == nil {
			first = got
			continue
		}
		same(first, got, wd.name)
	}
	// An object root answers the same, in the worlds it can hold (it has
	// no symlinks), with the same files as keys.
	for _, wd := range []struct {
		name  string
		files map[string]string
	}{
		{"absent", nil},
		{"dir (object root)", map[string]string{"secret/x/y/": ""}},
		{"file (object root)", map[string]string{"secret/x": "k"}},
	} {
		work := t.TempDir() + "/w" // nothing on disk there
		files := map[string]string{"secret/": "", "d/deep/": "", "a.txt": "top", "d/a.txt": "in d"}
		for k, v := range wd.files {
			files[k] = v
		}
		p := policy.DefaultPolicy(work)
		p.Paths.Deny = []string{"secret", "secret/**"}
		s, err := newSandboxOver(p, "", map[string]ObjectStore{work: newMemObjects(bytesOf(files))})
		if err != nil {
			t.Fatal(err)
		}
		got := answers(s, work)
		s.Close()
		same(first, got, wd.name+" (object root)")
	}
	// The answers themselves: the cleaned path, as if secret/x were not
	// spelled at all.
	for q, want := range map[string][]string{
		"secret/x/../../a.txt":  {"open: a.txt top", "lstat: a.txt file", "probe write: a.txt", "workdirrel: a.txt"},
		"/secret/x/../../a.txt": {"open: a.txt top", "lstat: a.txt file"},
		"secret/x/../../d":      {"opendir: d", "walk: d/a.txt,d/deep"},
		"secret/x/../../nope.txt": {"open: not_found  secret/x/../../nope.txt does not exist",
			"probe write: nope.txt", "entry: nope.txt exists=false"},
		"secret/x/../../new/deeper.txt": {"probe write: new/deeper.txt"},
		"secret/x/../y": {`open: denied deny secret/x/../y matches the deny pattern "secret"`,
			`probe write: denied deny secret/x/../y matches the deny pattern "secret"`},
		"secret/x/..":               {`lstat: denied deny secret/x/.. matches the deny pattern "secret"`},
		"secret/x/../../../out":     {"open: denied root secret/x/../../../out climbs out of its root with '..'"},
		"./secret//x/./../../a.txt": {"open: a.txt top"},
	} {
		outs := strings.Join(first[q], "\n")
		for _, w := range want {
			if !strings.Contains("\n"+outs, "\n"+w) {
				t.Errorf("%s: want %q among\n%s", q, w, outs)
			}
		}
	}
}

// TestDotDotAfterSymlinkIsLexical: link/../x means x, as the reference
// MCP server (and unlike POSIX) has it: the path checked is the path
// opened. Fails on c24bc27: link/../a.txt opened d/a.txt, the file beside
// the symlink's target.
func TestDotDotAfterSymlinkIsLexical(t *testing.T) {
	work := t.TempDir()
	must(t, os.MkdirAll(work+"/d/sub", 0o755))
	must(t, os.WriteFile(work+"/a.txt", []byte("top"), 0o644))
	must(t, os.WriteFile(work+"/d/a.txt", []byte("in d"), 0o644))
	must(t, os.Symlink("d/sub", work+"/link"))
	s, err := New(policy.DefaultPolicy(work), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ path, want string }{
		{"link/../a.txt", "a.txt top"},
		{"link/../d/a.txt", "d/a.txt in d"},
		{"link/../link/../a.txt", "a.txt top"},
	} {
		f, err := s.Open(tc.path)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if got := f.Info.Path + " " + string(b); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
		}
	}
	w, err := s.OpenWriteTarget("link/../b.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	if w.rootRel() != "b.txt" {
		t.Errorf("link/../b.txt would be written at %s, want b.txt", w.rootRel())
	}
	w.Close()
}

// TestDotDotAgentKeysNoOracle: under the agent preset,
// .ssh/id_rsa/../../a.txt tells nothing about which keys exist. Fails on
// c24bc27: not_found "does not exist" when .ssh/id_rsa was missing, "does
// not exist (a parent is not a directory)" when it was there.
func TestDotDotAgentKeysNoOracle(t *testing.T) {
	var answers []string
	for _, present := range []bool{false, true} {
		home := t.TempDir()
		must(t, os.MkdirAll(home+"/.ssh", 0o700))
		must(t, os.WriteFile(home+"/a.txt", []byte("top"), 0o644))
		if present {
			must(t, os.WriteFile(home+"/.ssh/id_rsa", []byte("KEY"), 0o600))
		}
		p := policy.DefaultPolicy(home)
		p.Preset = policy.PresetAgent
		s, err := New(p, home)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, q := range []string{".ssh/id_rsa/../../a.txt", "~/.ssh/id_rsa/../../a.txt", ".ssh/id_rsa/..", ".ssh/id_rsa/../id_ed25519"} {
			got = append(got, q+" => "+strings.Join(dotdotOutcome(s, q), "; "))
		}
		s.Close()
		answers = append(answers, strings.Join(got, "\n"))
	}
	if answers[0] != answers[1] {
		t.Errorf("the answers tell whether .ssh/id_rsa exists:\nabsent:\n%s\npresent:\n%s", answers[0], answers[1])
	}
	if !strings.Contains(answers[0], ".ssh/id_rsa/../../a.txt => open: a.txt top;") {
		t.Errorf(".ssh/id_rsa/../../a.txt is not a.txt:\n%s", answers[0])
	}
}
