//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// The policy loader's own tests (TestLoadRefusesWritablePlaces,
// TestLoadEmptyConfigFlag, TestReach, TestServePolicy,
// TestServePolicyWritable, TestServeDirsWrite) live in pkg/policy's
// load_test.go; what stays here needs a sandbox.

// TestServePolicyWritableOpens: every policy the reference profile serves
// (policy.ServePolicyWritable: each directory writable) opens a sandbox.
// The cases are those of pkg/policy's TestServePolicyWritable that
// serve.
func TestServePolicyWritableOpens(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	work, docs, other := filepath.Join(base, "work"), filepath.Join(base, "docs"), filepath.Join(base, "other")
	for _, d := range []string{work + "/sub", docs, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	builtin := policy.DefaultPolicy(base)
	file := policy.DefaultPolicy(work)
	file.ReadRoots, file.WriteRoots, file.Source = []string{docs}, []string{other}, filepath.Join(base, "p.toml")
	for _, c := range []struct {
		name string
		p    *policy.Policy
		dirs []string
	}{
		{"one directory", builtin, []string{work}},
		{"two directories, both writable", builtin, []string{work, docs}},
		{"three", builtin, []string{work, docs, other}},
		{"one inside the first: writable with it", builtin, []string{work, work + "/sub", docs}},
		{"a policy: both in writable roots", file, []string{work + "/sub", other}},
	} {
		q, err := policy.ServePolicyWritable(c.p, c.dirs, true)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		sb, err := New(q, "")
		if err != nil {
			t.Errorf("%s: the served policy does not open: %v", c.name, err)
			continue
		}
		sb.Close()
	}
}
