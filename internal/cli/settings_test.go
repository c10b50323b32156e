package cli

import (
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// TestSettingsInFlagWords: a policy error that names how the policy was
// chosen or how a server is started (fserr.Setting) says it as the
// command line has it done, in the words its goldens hold: --config,
// fsbox mcp, fsbox mcp WORKDIR [READ_ROOT...] (JSON and text forms).
func TestSettingsInFlagWords(t *testing.T) {
	_, flagged := policy.Load(policy.Env{ConfigFlag: "", ConfigSet: true})
	_, serveErr := policy.ServeDirs(&policy.Policy{}, nil, nil)
	for _, c := range []struct {
		err  error
		want string
	}{
		{flagged, "--config needs a policy file name, got an empty one (leave the flag out for the default discovery)"},
		{serveErr, "fsbox mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give --config, or name the directories to serve (fsbox mcp WORKDIR [READ_ROOT...])"},
	} {
		e := fserr.AsError(c.err)
		if e == nil || e.Spelled == nil {
			t.Fatalf("%v: no settings named", c.err)
		}
		if got := e.Message(FlagSpelling); got != c.want {
			t.Errorf("JSON message %q, want %q", got, c.want)
		}
		if msg, hint := e.Parts(FlagSpelling); msg != c.want || hint != "" {
			t.Errorf("text form %q / %q, want one line %q", msg, hint, c.want)
		}
	}
}
