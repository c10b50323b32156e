package policy_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/pkg/policy"
)

// TestTrustBindMounts: a bind mount gives a writable root a second name
// that no path comparison shows; Load compares identities (the
// directories above the file against each place) and the mount table
// (a bind mount of a directory inside a root). It runs in a mount
// namespace of its own (unshare -rm) and says so when it cannot make
// one. Fails on c24bc27: every candidate loaded.
func TestTrustBindMounts(t *testing.T) {
	if os.Getenv("FSBOX_TRUST_MOUNTNS") == "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("unshare", "-rm", self, "-test.run=^TestTrustBindMounts$", "-test.v")
		cmd.Env = append(os.Environ(), "FSBOX_TRUST_MOUNTNS=1")
		out, err := cmd.CombinedOutput()
		if err != nil && strings.Contains(string(out), "unshare") && !strings.Contains(string(out), "=== RUN") {
			t.Skipf("skipped: cannot make a mount namespace here (unshare -rm: %v: %s)", err, strings.TrimSpace(string(out)))
		}
		t.Logf("in a mount namespace of its own:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestTrustBindMounts") {
			t.Fatalf("the test in the mount namespace failed: %v", err)
		}
		return
	}
	bind := func(t *testing.T, src, dst string) {
		t.Helper()
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("mount --bind %s %s: %v", src, dst, err)
		}
		t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
	}
	user := "workdir = \"BASE/w\"\nwrite_roots = [\"BASE/w2\"]\n"
	for _, c := range []struct {
		name        string
		src, at     string // bind src at at (relative to the base)
		plant       string // where the candidate really lies
		flag        string // the name --config gives it
		noMountInfo bool   // the mount table left out: identity alone
		want        string
	}{
		{name: "write root bound elsewhere", src: "w2", at: "mnt/b", plant: "w2/evil.toml", flag: "mnt/b/evil.toml",
			want: "lies inside BASE/w2 (a write root of"},
		{name: "write root bound elsewhere, identity alone", src: "w2", at: "mnt/b", plant: "w2/evil.toml", flag: "mnt/b/evil.toml", noMountInfo: true,
			want: "lies inside BASE/w2 (a write root of BASE/home/.config/fsbox/config.toml, the policy that applies without --config) under another name: BASE/mnt/b is the same directory"},
		{name: "deeper in the bound write root, identity alone", src: "w2", at: "mnt/b", plant: "w2/sub/evil.toml", flag: "mnt/b/sub/evil.toml", noMountInfo: true,
			want: "under another name: BASE/mnt/b is the same directory"},
		{name: "the write root's parent bound elsewhere, identity alone", src: ".", at: "mnt/all", plant: "w2/evil.toml", flag: "mnt/all/w2/evil.toml", noMountInfo: true,
			want: "lies inside BASE/w2 (a write root of BASE/home/.config/fsbox/config.toml, the policy that applies without --config) under another name: BASE/mnt/all/w2 is the same directory"},
		{name: "a directory inside the write root bound elsewhere", src: "w2/sub", at: "mnt/s", plant: "w2/sub/evil.toml", flag: "mnt/s/evil.toml",
			want: "lies inside BASE/w2 (a write root of"},
		{name: "the current directory bound elsewhere", src: "cwd", at: "mnt/c", plant: "cwd/evil.toml", flag: "mnt/c/evil.toml",
			want: "(the current directory)"},
		{name: "its own workdir bound elsewhere, identity alone", src: "evilwork", at: "mnt/e", plant: "evilwork/evil.toml", flag: "mnt/e/evil.toml", noMountInfo: true,
			want: "lies inside its own workdir BASE/evilwork under another name: BASE/mnt/e is the same directory"},
		// A bind mount of a directory outside every such place: loaded.
		{name: "outside bound elsewhere", src: "etc", at: "mnt/o", plant: "etc/evil.toml", flag: "mnt/o/evil.toml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTrustBase(t)
			b.plant("home/.config/fsbox/config.toml", user)
			b.plant(c.plant, evil)
			bind(t, b.path(c.src), b.path(c.at))
			if c.noMountInfo {
				defer policy.SetMountAliases(func(string) []string { return nil })()
			}
			p, err := b.load(b.path(c.flag))
			if c.want == "" {
				if err != nil || p.Workdir != b.path("evilwork") {
					t.Fatalf("err %v, want the candidate loaded", err)
				}
				return
			}
			b.wantRefused(p, err, c.want)
		})
	}
}
