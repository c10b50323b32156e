package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestPlatformGuarantees: what roots reports for this platform, and that
// the default policy requires all four, so a platform without them
// refuses the default policy and takes one that lowers require.
func TestPlatformGuarantees(t *testing.T) {
	g := policy.PlatformGuarantees()
	all := policy.Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true, NoReplaceRename: true}
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
		if g != (policy.Guarantees{}) {
			t.Errorf("%s: %+v, want none", runtime.GOOS, g)
		}
	}
	dir := t.TempDir()
	p := policy.DefaultPolicy(dir)
	if strings.Join(p.Sandbox.Require, ",") != strings.Join(policy.GuaranteeNames(), ",") {
		t.Errorf("the default policy requires %v, want all four", p.Sandbox.Require)
	}
	_, err := New(p, "")
	if held := g == all; held != (err == nil) {
		t.Errorf("guarantees %+v, default policy: %v", g, err)
	}
	pol := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(pol, []byte("workdir = \""+dir+"\"\n[sandbox]\nrequire = []\n"), 0o644)
	lp, err := policy.Load(policy.Env{ConfigFlag: pol, ConfigSet: true, Home: dir, Cwd: dir, Getenv: os.LookupEnv})
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
	lp, err = policy.Load(policy.Env{ConfigFlag: pol, ConfigSet: true, Home: dir, Cwd: dir, Getenv: os.LookupEnv})
	if err == nil {
		_, err = New(lp, "")
	}
	if err == nil || fserr.AsError(err).Code != fserr.CodeConfig || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("an unknown guarantee: %v, want a config error naming it", err)
	}
}
