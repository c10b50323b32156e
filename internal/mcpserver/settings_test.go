package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestSettingsInEachFacesWords: a policy error that names how the policy
// was chosen or how a server is started (fserr.Setting) says it as each
// face would have it done: the command line's flag and command (its
// goldens keep their text), and in a tool result the server's command
// line as the host sets it up, in either profile.
func TestSettingsInEachFacesWords(t *testing.T) {
	flagged, err := policy.Load(policy.Env{ConfigFlag: "other.toml", ConfigSet: true,
		Getenv: func(k string) (string, bool) { return "/etc/fsbox/host.toml", k == "FSBOX_CONFIG" }})
	if err == nil {
		t.Fatalf("loaded %v", flagged)
	}
	_, serveErr := policy.ServeDirs(&policy.Policy{}, nil, nil)
	op, _ := ops.Registry.Lookup("read")
	message := func(b []byte) string {
		var env struct{ Error struct{ Message string } }
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		return env.Error.Message
	}
	for _, c := range []struct {
		err                error
		cli, native, refer string
	}{
		{err,
			"--config is not allowed: FSBOX_CONFIG fixes the policy for this host",
			"the server's --config is not allowed: FSBOX_CONFIG fixes the policy for this host",
			"the server's --config is not allowed: FSBOX_CONFIG fixes the policy for this host"},
		{serveErr,
			"fsbox mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give --config, or name the directories to serve (fsbox mcp WORKDIR [READ_ROOT...])",
			"fsbox-mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give the server's --config, or name the directories to serve (fsbox-mcp WORKDIR [READ_ROOT...])",
			"fsbox-mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give the server's --config, or name the directories to serve (fsbox-mcp WORKDIR [READ_ROOT...])"},
	} {
		if fserr.AsError(c.err).Spelled == nil {
			t.Errorf("%v: no settings named", c.err)
		}
		if got := message(cli.ErrorJSON(c.err)); got != c.cli {
			t.Errorf("CLI: %q, want %q", got, c.cli)
		}
		for profile, want := range map[string]string{"native": c.native, "reference": c.refer} {
			srv := &Server{spec: &cli.ServeSpec{Profile: profile}}
			if got := message(cli.ErrorJSONSpelled(c.err, srv.spelling(op))); got != want {
				t.Errorf("%s tool: %q, want %q", profile, got, want)
			}
		}
	}
}
