package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
)

// The three ready policies in README.md load through the real loader
// (strict: an unknown key or a bad glob fails) and do what the README
// says of them.
func TestReadmePolicies(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "### Three ready policies")
	if start < 0 {
		t.Fatal("README.md has no \"Three ready policies\" section")
	}
	end := start + 1 + strings.Index(text[start+1:], "\n#") // the next heading
	if end <= start {
		end = len(text)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(text[start:end], -1)
	if len(blocks) != 3 {
		t.Fatalf("found %d toml blocks in the ready policies, want 3", len(blocks))
	}
	base := t.TempDir()
	cwd := t.TempDir()
	env := map[string]string{"FSBOX_TENANT": "alice"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var policies []*policy.Policy
	var bodies []string
	for i, b := range blocks {
		body := strings.ReplaceAll(b[1], `"/srv/`, `"`+base+`/srv/`)
		// Make the directories the policy names as roots.
		for _, m := range regexp.MustCompile(`(?m)^(?:workdir|read_roots)\s*=.*$`).FindAllString(body, -1) {
			for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m, -1) {
				dir := os.Expand(q[1], func(k string) string { return env[k] })
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		file := filepath.Join(base, "policy", string(rune('a'+i))+".toml")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := policy.Load(policy.Env{ConfigFlag: file, Getenv: getenv, Cwd: cwd, Home: base})
		if err != nil {
			t.Fatalf("README policy %d does not load: %v\n%s", i+1, err, body)
		}
		policies = append(policies, p)
		bodies = append(bodies, body)
	}
	reviewer, agent, ci := policies[0], policies[1], policies[2]
	for _, c := range []string{"write", "edit", "mkdir", "mv", "cp", "rm", "links"} {
		if ops.Enabled(reviewer, c) {
			t.Errorf("the reviewer policy enables %s", c)
		}
	}
	if !ops.Enabled(reviewer, "read") || !ops.Enabled(reviewer, "grep") {
		t.Error("the reviewer policy cannot read")
	}
	if !strings.HasSuffix(agent.Workdir, "/srv/agents/alice/work") || agent.Audit.Log != base+"/srv/agents/audit/alice.jsonl" {
		t.Errorf("the agent policy: workdir %s, audit log %s", agent.Workdir, agent.Audit.Log)
	}
	if !agent.Paths.DenyHardlinks || len(agent.Paths.Deny) == 0 || ops.Enabled(agent, "rm") {
		t.Errorf("the agent policy: deny_hardlinks %v, deny %v, rm %v", agent.Paths.DenyHardlinks, agent.Paths.Deny, ops.Enabled(agent, "rm"))
	}
	if !ops.Enabled(ci, "rm") || ops.Enabled(ci, "mv") || ci.Sandbox.Landlock != "required" || len(ci.ReadRoots) != 1 {
		t.Errorf("the CI policy: rm %v, mv %v, landlock %q, read roots %v", ops.Enabled(ci, "rm"), ops.Enabled(ci, "mv"), ci.Sandbox.Landlock, ci.ReadRoots)
	}
	// A typo in a README policy would be caught: the same loader refuses it.
	bad := filepath.Join(base, "policy", "typo.toml")
	typo := strings.Replace(bodies[0], "[paths]\ndeny", "[paths]\ndenny", 1)
	if typo == bodies[0] {
		t.Fatal("the reviewer policy has no [paths] deny to misspell")
	}
	os.WriteFile(bad, []byte(typo), 0o644)
	if _, err := policy.Load(policy.Env{ConfigFlag: bad, Getenv: getenv, Cwd: cwd, Home: base}); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("a policy with an unknown key: %v", err)
	}
}
