package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// loadBody loads body as the policy FSBOX_CONFIG names (host) or as the
// discovered user config (user).
func loadBody(t *testing.T, body string, user bool) (*Policy, error) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, cwd, home := filepath.Join(base, "work"), filepath.Join(base, "cwd"), filepath.Join(base, "home")
	for _, d := range []string{work, cwd, filepath.Join(home, ".config", "fsbox")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "policy.toml")
	env := map[string]string{"FSBOX_CONFIG": file}
	if user {
		file, env = filepath.Join(home, ".config", "fsbox", "config.toml"), map[string]string{}
	}
	body = strings.ReplaceAll(body, "$WORK", work)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(Env{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Cwd: cwd, Home: home})
}

func TestRuleSetsInForce(t *testing.T) {
	for _, c := range []struct {
		name, body string
		user       bool
		want       []string
	}{
		{"host", "workdir = \"$WORK\"\n", false, []string{"agent_config"}},
		{"user", "", true, []string{"agent_config"}},
		{"host agent", "workdir = \"$WORK\"\npreset = \"agent\"\n", false, []string{"agent_config", "secrets"}},
		{"user agent", "preset = \"agent\"\n", true, []string{"agent_config", "secrets"}},
		{"off agent_config", "workdir = \"$WORK\"\ndefaults_off = [\"agent_config\"]\n", false, []string{}},
		{"off secrets", "workdir = \"$WORK\"\npreset = \"agent\"\ndefaults_off = [\"secrets\"]\n", false, []string{"agent_config"}},
		{"off both", "workdir = \"$WORK\"\npreset = \"agent\"\ndefaults_off = [\"secrets\", \"agent_config\"]\n", false, []string{}},
		// Switching off a set not in force is no error.
		{"off secrets no preset", "workdir = \"$WORK\"\ndefaults_off = [\"secrets\"]\n", false, []string{"agent_config"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := loadBody(t, c.body, c.user)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.RuleSetsInForce(); !slices.Equal(got, c.want) {
				t.Fatalf("rule sets %v, want %v", got, c.want)
			}
		})
	}
	if got := DefaultPolicy("/").RuleSetsInForce(); !slices.Equal(got, []string{"agent_config"}) {
		t.Fatalf("built-in default: %v", got)
	}
	if got := AgentServed(DefaultPolicy("/")).RuleSetsInForce(); !slices.Equal(got, []string{"agent_config", "secrets"}) {
		t.Fatalf("built-in default served by fsbox-mcp: %v", got)
	}
}

func TestRuleSetsBadNames(t *testing.T) {
	for _, c := range []struct {
		name, body string
		msg        []string
	}{
		{"unknown preset", "workdir = \"$WORK\"\n\npreset = \"agnet\"\n", []string{"line 3", `preset must be "agent"`, `"agnet"`}},
		{"preset case", "workdir = \"$WORK\"\npreset = \"Agent\"\n", []string{"line 2", `"Agent"`}},
		{"unknown set", "workdir = \"$WORK\"\ndefaults_off = [\"secret\"]\n", []string{"line 2", `unknown rule set "secret"`, `"agent_config", "secrets"`}},
		{"set by pattern", "workdir = \"$WORK\"\ndefaults_off = [\"**\"]\n", []string{"line 2", `unknown rule set "**"`}},
		{"set case", "workdir = \"$WORK\"\ndefaults_off = [\"Secrets\"]\n", []string{`unknown rule set "Secrets"`}},
		{"set empty", "workdir = \"$WORK\"\ndefaults_off = [\"\"]\n", []string{`unknown rule set ""`}},
		{"set type", "workdir = \"$WORK\"\ndefaults_off = \"secrets\"\n", []string{"policy.toml"}},
		{"precondition type", "workdir = \"$WORK\"\n[write]\nrequire_precondition = 1\n", []string{"policy.toml"}},
		{"write typo", "workdir = \"$WORK\"\n[write]\nrequire_preconditions = true\n", []string{"line 3", "require_preconditions"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadBody(t, c.body, false)
			e := fserr.AsError(err)
			if err == nil || e.Code != fserr.CodeConfig {
				t.Fatalf("got %v, want config", err)
			}
			for _, m := range append(c.msg, "policy.toml") {
				if !strings.Contains(e.Msg, m) {
					t.Errorf("message %q lacks %q", e.Msg, m)
				}
			}
		})
	}
	// Validate refuses them too, for a policy built in code.
	p := DefaultPolicy("/")
	p.DefaultsOff = []string{"nope"}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "defaults_off") {
		t.Fatalf("Validate: %v", err)
	}
	p = DefaultPolicy("/")
	p.Preset = "nope"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "preset") {
		t.Fatalf("Validate: %v", err)
	}
}

func TestAgentPresetFillsWhatTheFileLeavesOut(t *testing.T) {
	type want struct {
		results, line, resultBytes, seconds int64
		precondition, byPreset              bool
	}
	for _, c := range []struct {
		name, body string
		user       bool
		want       want
	}{
		{"no preset host", "workdir = \"$WORK\"\n", false,
			want{HostMaxResults, DefaultLimits.MaxLineBytes, DefaultLimits.MaxResultBytes, DefaultLimits.MaxCallSeconds, false, false}},
		{"no preset user", "", true,
			want{0, DefaultLimits.MaxLineBytes, DefaultLimits.MaxResultBytes, DefaultLimits.MaxCallSeconds, false, false}},
		{"agent host", "workdir = \"$WORK\"\npreset = \"agent\"\n", false,
			want{2000, 2000, 65536, 30, true, true}},
		{"agent user", "preset = \"agent\"\n", true,
			want{2000, 2000, 65536, 30, true, true}},
		{"agent, file's keys win", "workdir = \"$WORK\"\npreset = \"agent\"\n[limits]\nmax_results = 5\nmax_call_seconds = 600\n[write]\nrequire_precondition = false\n", false,
			want{5, 2000, 65536, 600, false, false}},
		{"agent, file sets require_precondition", "workdir = \"$WORK\"\npreset = \"agent\"\n[write]\nrequire_precondition = true\n[limits]\nmax_line_bytes = 100\nmax_result_bytes = 1000\n", false,
			want{2000, 100, 1000, 30, true, false}},
		{"no preset, require_precondition", "workdir = \"$WORK\"\n[write]\nrequire_precondition = true\n", false,
			want{HostMaxResults, DefaultLimits.MaxLineBytes, DefaultLimits.MaxResultBytes, DefaultLimits.MaxCallSeconds, true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := loadBody(t, c.body, c.user)
			if err != nil {
				t.Fatal(err)
			}
			l := p.Limits
			got := want{l.MaxResults, l.MaxLineBytes, l.MaxResultBytes, l.MaxCallSeconds, p.Write.RequirePrecondition, p.PreconditionByPreset}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			// What the preset does not name keeps its default.
			if l.MaxReadBytes != DefaultLimits.MaxReadBytes || l.MaxSortBytes != DefaultLimits.MaxSortBytes {
				t.Fatalf("preset changed other limits: %+v", l)
			}
		})
	}
}

func TestAgentServedAndReferenceProfile(t *testing.T) {
	d := DefaultPolicy("/")
	a := AgentServed(d)
	if d.Preset != "" || d.Write.RequirePrecondition || d.Limits.MaxCallSeconds != DefaultLimits.MaxCallSeconds {
		t.Fatalf("AgentServed changed the policy it was given: %+v", d)
	}
	if a.Preset != PresetAgent || !a.Write.RequirePrecondition || !a.PreconditionByPreset ||
		a.Limits.MaxResults != 2000 || a.Limits.MaxLineBytes != 2000 || a.Limits.MaxResultBytes != 65536 || a.Limits.MaxCallSeconds != 30 {
		t.Fatalf("AgentServed = %+v", a)
	}
	// The reference profile drops the preset's requirement ...
	r, err := ForReferenceProfile(a)
	if err != nil || r.Write.RequirePrecondition || !a.Write.RequirePrecondition || r.Limits.MaxCallSeconds != 30 {
		t.Fatalf("ForReferenceProfile(agent) = %+v, %v", r, err)
	}
	// ... and refuses a policy's own.
	own := DefaultPolicy("/")
	own.Write.RequirePrecondition = true
	if _, err := ForReferenceProfile(own); err == nil || !strings.Contains(err.Error(), "require_precondition") {
		t.Fatalf("ForReferenceProfile(own) = %v", err)
	}
	if r, err := ForReferenceProfile(d); err != nil || r != d {
		t.Fatalf("ForReferenceProfile(default) = %v, %v", r, err)
	}
}
