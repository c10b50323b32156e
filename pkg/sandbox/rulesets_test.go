//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// ruleSetTree is a workdir holding a file for every pattern of the named
// rule sets, the names they except, and agents' instruction files.
func ruleSetTree(t *testing.T) string {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{
		".env", "sub/.env", ".ENV", ".env.local", "sub/.env.production", ".Env.Local",
		".env.example", ".env.sample", ".env.template", ".env.local.example", "sub/.ENV.EXAMPLE",
		".env.prod/inner.example", ".env.dev.template/inner.txt", ".env.dev.template/.env",
		"cert.pem", "sub/CERT.PEM", "tls.key", "home/.ssh/id_rsa", "id_rsa", "id_rsa.pub", "id_ed25519",
		"id_ecdsa_sk", "home/.ssh/config", "home/.aws/credentials", "home/.aws/config",
		"home/.config/gcloud/adc.json", "home/.azure/token", "home/.docker/config.json",
		".npmrc", ".pypirc", ".netrc", ".git-credentials", "key.txt", "env", "pem.txt",
		".git/config", ".claude/settings.json", "proj/.claude/agents/a.md", ".codex/config.toml",
		".cursor/rules", ".gemini/settings.json", ".agents/x", ".windsurf/rules", ".CLAUDE/x",
		"AGENTS.md", "CLAUDE.md", "proj/CLAUDE.md", "proj/.claude.md", "claude/x",
	} {
		mustWrite(t, filepath.Join(work, rel), "x")
	}
	mustSymlink(t, ".env", filepath.Join(work, "env_link"))
	mustSymlink(t, ".claude", filepath.Join(work, "claude_link"))
	mustSymlink(t, "home/.ssh", filepath.Join(work, "ssh_link"))
	return work
}

func ruleSetSandbox(t *testing.T, work string, mod func(*policy.Policy)) *Sandbox {
	t.Helper()
	p := policy.DefaultPolicy(work)
	p.Paths.WriteDeny = nil // the sets alone, as a host config without write_deny has them
	if mod != nil {
		mod(p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(p, work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkSet asserts err is a denial by rule from the named set ("" : allowed).
func checkSet(t *testing.T, what string, err error, rule fserr.Rule, set string) {
	t.Helper()
	if set == "" {
		if err != nil {
			t.Errorf("%s: %v (rule %s, set %q), want allowed", what, err, fserr.AsError(err).Rule, fserr.AsError(err).Set)
		}
		return
	}
	e := fserr.AsError(err)
	if err == nil || e.Code != fserr.CodeDenied || e.Rule != rule || e.Set != set {
		t.Errorf("%s: got %v (rule %q, set %q), want denied by %s of %s", what, err, e.Rule, e.Set, rule, set)
	}
}

func TestRuleSetSecrets(t *testing.T) {
	work := ruleSetTree(t)
	agent := ruleSetSandbox(t, work, func(p *policy.Policy) { p.Preset = policy.PresetAgent })
	plain := ruleSetSandbox(t, work, nil)
	off := ruleSetSandbox(t, work, func(p *policy.Policy) { p.Preset, p.DefaultsOff = policy.PresetAgent, []string{"secrets"} })
	for _, c := range []struct {
		path   string
		denied bool
	}{
		{".env", true}, {"sub/.env", true}, {".ENV", true}, {".env.local", true},
		{"sub/.env.production", true}, {".Env.Local", true},
		{".env.example", false}, {".env.sample", false}, {".env.template", false},
		{".env.local.example", false}, {"sub/.ENV.EXAMPLE", false},
		// An excepted name is excepted only where the glob matched it: a
		// denied directory protects all below it, whatever the names.
		{".env.prod/inner.example", true}, {".env.dev.template/inner.txt", false}, {".env.dev.template/.env", true},
		{"cert.pem", true}, {"sub/CERT.PEM", true}, {"tls.key", true}, {"id_rsa", true}, {"id_rsa.pub", true},
		{"id_ed25519", true}, {"id_ecdsa_sk", true}, {"home/.ssh/id_rsa", true}, {"home/.ssh/config", true},
		{"home/.aws/credentials", true}, {"home/.aws/config", false}, {"home/.config/gcloud/adc.json", true},
		{"home/.azure/token", true}, {"home/.docker/config.json", true}, {".npmrc", true}, {".pypirc", true},
		{".netrc", true}, {".git-credentials", true}, {"key.txt", false}, {"env", false}, {"pem.txt", false},
		// Through a symlink the rules see the path it leads to.
		{"env_link", true}, {"ssh_link/config", true},
		{"AGENTS.md", false}, {"CLAUDE.md", false},
	} {
		_, err := agent.Probe(NeedReadFile, c.path, 0, "")
		set := ""
		if c.denied {
			set = "secrets"
		}
		checkSet(t, "agent read "+c.path, err, fserr.RuleDeny, set)
		_, err = plain.Probe(NeedReadFile, c.path, 0, "")
		checkSet(t, "no preset read "+c.path, err, "", "")
		_, err = off.Probe(NeedReadFile, c.path, 0, "")
		checkSet(t, "defaults_off secrets read "+c.path, err, "", "")
	}
	// A denied directory is not listed into, nor are its entries shown.
	_, err := agent.Probe(NeedReadDir, "home/.ssh", 0, "")
	checkSet(t, "agent ls home/.ssh", err, fserr.RuleDeny, "secrets")
	// Writing a new secret is refused too (deny covers writes).
	_, err = agent.CheckWrite("new/.env")
	checkSet(t, "agent write new/.env", err, fserr.RuleDeny, "secrets")
	// Renaming the directory that holds a secret cannot carry it out
	// from under the rule, nor can a secret be renamed to a plain name.
	checkSet(t, "agent mv home away", agent.ProbeRename("home", "away"), fserr.RuleDeny, "secrets")
	checkSet(t, "agent mv .env env.txt", agent.ProbeRename(".env", "env.txt"), fserr.RuleDeny, "secrets")
	checkSet(t, "agent mv pem.txt x.pem", agent.ProbeRename("pem.txt", "x.pem"), fserr.RuleDeny, "secrets")
}

func TestRuleSetAgentConfig(t *testing.T) {
	work := ruleSetTree(t)
	s := ruleSetSandbox(t, work, nil)
	off := ruleSetSandbox(t, work, func(p *policy.Policy) { p.DefaultsOff = []string{"agent_config"} })
	for _, c := range []struct {
		path      string
		protected bool
	}{
		{".git/config", true}, {".claude/settings.json", true}, {"proj/.claude/agents/a.md", true},
		{".codex/config.toml", true}, {".cursor/rules", true}, {".gemini/settings.json", true},
		{".agents/x", true}, {".windsurf/rules", true}, {".CLAUDE/x", true}, {".claude/new.json", true},
		{"claude_link/settings.json", true},
		{"AGENTS.md", false}, {"CLAUDE.md", false}, {"proj/CLAUDE.md", false}, {"proj/.claude.md", false},
		{"claude/x", false},
	} {
		set := ""
		if c.protected {
			set = "agent_config"
		}
		_, err := s.CheckWrite(c.path)
		checkSet(t, "write "+c.path, err, fserr.RuleWriteDeny, set)
		_, err = off.CheckWrite(c.path)
		checkSet(t, "defaults_off write "+c.path, err, "", "")
		if _, err := os.Lstat(filepath.Join(work, c.path)); err == nil {
			_, err = s.Probe(NeedReadFile, c.path, 0, "")
			checkSet(t, "read "+c.path, err, "", "") // readable, never written
		}
	}
	// The directories themselves: neither made, removed nor renamed,
	// nor the directory holding one renamed (the files move with it).
	_, err := s.Probe(NeedMake, ".claude", 0, "")
	checkSet(t, "mkdir .claude", err, fserr.RuleWriteDeny, "agent_config")
	_, err = s.Probe(NeedEntry, ".git", 0, "")
	checkSet(t, "rm .git", err, fserr.RuleWriteDeny, "agent_config")
	checkSet(t, "mv proj elsewhere", s.ProbeRename("proj", "elsewhere"), fserr.RuleWriteDeny, "agent_config")
	checkSet(t, "mv claude x", s.ProbeRename("claude", ".claude/x"), fserr.RuleWriteDeny, "agent_config")
	checkSet(t, "mv AGENTS.md", s.ProbeRename("AGENTS.md", "AGENTS2.md"), "", "")
}

// A [paths] rule matching the same path is reported as the policy's own.
func TestRuleSetPathsFirst(t *testing.T) {
	work := ruleSetTree(t)
	s := ruleSetSandbox(t, work, func(p *policy.Policy) { p.Paths.WriteDeny = []string{"**/.git/**"} })
	_, err := s.CheckWrite(".git/config")
	if e := fserr.AsError(err); err == nil || e.Rule != fserr.RuleWriteDeny || e.Set != "" {
		t.Fatalf("write .git/config: got %v (set %q), want write_deny of [paths]", err, e.Set)
	}
	_, err = s.CheckWrite(".claude/x")
	checkSet(t, "write .claude/x", err, fserr.RuleWriteDeny, "agent_config")
}

// rm -r of a directory holding a protected one removes nothing; a
// secret below a read root that holds the workdir is denied relative to
// either root.
func TestRuleSetTreesAndRoots(t *testing.T) {
	work := ruleSetTree(t)
	s := ruleSetSandbox(t, work, nil)
	w, err := s.OpenEntry("proj")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Remove(w, true)
	w.Close()
	checkSet(t, "rm -r proj", err, fserr.RuleWriteDeny, "agent_config")
	if _, err := os.Stat(filepath.Join(work, "proj", ".claude", "agents", "a.md")); err != nil {
		t.Fatalf("rm -r proj removed something: %v", err)
	}

	outer := filepath.Dir(work)
	inner := filepath.Join(work, "proj")
	mustWrite(t, filepath.Join(outer, ".env"), "x")
	p := policy.DefaultPolicy(inner)
	p.Paths.WriteDeny = nil
	p.Preset = policy.PresetAgent
	p.ReadRoots = []string{outer}
	n, err := New(p, work)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, f := range []string{filepath.Join(outer, ".env"), filepath.Join(work, ".env"), filepath.Join(work, "home", ".ssh", "config")} {
		_, err := n.Probe(NeedReadFile, f, 0, "")
		checkSet(t, "read "+f, err, fserr.RuleDeny, "secrets")
	}
	// Within the workdir nested in the read root, .claude is protected
	// relative to the workdir and to the read root.
	_, err = n.CheckWrite(".claude/agents/b.md")
	checkSet(t, "write .claude below nested workdir", err, fserr.RuleWriteDeny, "agent_config")
}
