package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckRequire(t *testing.T) {
	all := Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true, NoReplaceRename: true}
	for _, c := range []struct {
		name    string
		require []string
		have    Guarantees
		want    string // a part of the error; "" for none
	}{
		{"all held", guaranteeNames, all, ""},
		{"none held, all required", guaranteeNames, Guarantees{}, "does not give descriptor_path_check, dir_lock, no_follow, no_replace_rename"},
		{"none held, none required", []string{}, Guarantees{}, ""},
		{"one missing", guaranteeNames, Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true}, "does not give no_replace_rename,"},
		{"the missing one not required", []string{"dir_lock", "no_follow"}, Guarantees{DirLock: true, NoFollow: true}, ""},
		{"named twice", []string{"dir_lock", "dir_lock"}, Guarantees{}, "does not give dir_lock,"},
		{"unknown", []string{"landlock"}, all, `unknown guarantee "landlock"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkRequire(c.require, c.have)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestPlatformGuarantees: what roots reports for this platform, and that
// the default policy requires all four, so a platform without them
// refuses the default policy and takes one that lowers require.
func TestPlatformGuarantees(t *testing.T) {
	g := PlatformGuarantees()
	all := Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true, NoReplaceRename: true}
	switch runtime.GOOS {
	case "linux":
		if _, err := os.Readlink("/proc/self/exe"); err != nil {
			all.DescriptorPathCheck = false
		}
		if g != all {
			t.Errorf("linux: %+v, want %+v", g, all)
		}
	case "darwin":
		if g != all {
			t.Errorf("darwin: %+v, want %+v", g, all)
		}
	default:
		if g != (Guarantees{}) {
			t.Errorf("%s: %+v, want none", runtime.GOOS, g)
		}
	}
	dir := t.TempDir()
	p := DefaultPolicy(dir)
	if strings.Join(p.Sandbox.Require, ",") != strings.Join(guaranteeNames, ",") {
		t.Errorf("the default policy requires %v, want all four", p.Sandbox.Require)
	}
	_, err := New(p, "")
	if held := g == all; held != (err == nil) {
		t.Errorf("guarantees %+v, default policy: %v", g, err)
	}
	pol := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(pol, []byte("workdir = \""+dir+"\"\n[sandbox]\nrequire = []\n"), 0o644)
	lp, err := Load(Env{ConfigFlag: pol, ConfigSet: true, Home: dir, Cwd: dir, Getenv: os.LookupEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Sandbox.Require) != 0 {
		t.Errorf("require = [] loaded as %v", lp.Sandbox.Require)
	}
	if _, err := New(lp, ""); err != nil {
		t.Errorf("a policy that requires nothing is refused: %v", err)
	}
	os.WriteFile(pol, []byte("workdir = \""+dir+"\"\n[sandbox]\nrequire = [\"no_follow\", \"bogus\"]\n"), 0o644)
	lp, err = Load(Env{ConfigFlag: pol, ConfigSet: true, Home: dir, Cwd: dir, Getenv: os.LookupEnv})
	if err == nil {
		_, err = New(lp, "")
	}
	if err == nil || AsError(err).Code != CodeConfig || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("an unknown guarantee: %v, want a config error naming it", err)
	}
}
