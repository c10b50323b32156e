package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestSettingsInToolWords: a policy error that names how the policy was
// chosen or how a server is started (fserr.Setting) says it, in a tool
// result, as the host sets the server up: its command line, in either
// profile (internal/cli's TestSettingsInFlagWords: the command line's
// words, as its goldens have them).
func TestSettingsInToolWords(t *testing.T) {
	_, flagged := policy.Load(policy.Env{ConfigFlag: "other.toml", ConfigSet: true,
		Getenv: func(k string) (string, bool) { return "/etc/fsbox/host.toml", k == "FSBOX_CONFIG" }})
	_, serveErr := policy.ServeDirs(&policy.Policy{}, nil, nil)
	op, _ := ops.Registry.Lookup("read")
	for _, c := range []struct {
		err  error
		want string
	}{
		{flagged, "the server's --config is not allowed: FSBOX_CONFIG fixes the policy for this host"},
		{serveErr, "fsbox-mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give the server's --config, or name the directories to serve (fsbox-mcp WORKDIR [READ_ROOT...])"},
	} {
		if c.err == nil || fserr.AsError(c.err).Spelled == nil {
			t.Fatalf("%v: no settings named", c.err)
		}
		for _, profile := range []string{"native", "reference"} {
			srv := &Server{spec: &tool.ServeSpec{Profile: profile}}
			var env tool.ErrorEnvelope
			if err := json.Unmarshal(tool.ErrorJSON(c.err, srv.spelling(op)), &env); err != nil {
				t.Fatal(err)
			}
			if env.Error.Message != c.want {
				t.Errorf("%s tool: %q, want %q", profile, env.Error.Message, c.want)
			}
		}
	}
}
