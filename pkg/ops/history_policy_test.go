package ops

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestHistoryAnswersThroughThePolicy: two policies on one workdir share
// its journal (a loose one for a person, a strict one for an agent). Under
// the strict one, history neither names .env nor shows its hashes or
// sizes; it counts the hidden pairs; history .env is denied. Fails on
// 6a21fbf: the strict policy's history printed .env with the sha256 and
// size of every version (issue 26 finding 2).
func TestHistoryAnswersThroughThePolicy(t *testing.T) {
	ctx := context.Background()
	loose, dir := journaled(t, map[string]string{"a.txt": "a\n"}, nil)
	state := loose.Policy().Journal.State
	for _, w := range []WriteOptions{
		{Path: ".env", Content: strings.NewReader("TOKEN=hunter2\n")},
		{Path: ".env", Content: strings.NewReader("TOKEN=hunter3\n")},
		{Path: "a.txt", Content: strings.NewReader("b\n")},
	} {
		if _, err := Write(ctx, loose, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Move(ctx, loose, ".env", "env.bak", false); err != nil {
		t.Fatal(err)
	}
	p := policy.DefaultPolicy(dir)
	p.Journal.State = state
	p.Paths.Deny = []string{"**/.env"}
	strict, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	h, err := History(ctx, strict, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(h)
	secret := []string{".env", "hunter"}
	full, _ := History(ctx, loose, "", 0)
	for _, c := range full.Changes {
		for _, pc := range c.Paths {
			if pc.Path == ".env" && pc.After != nil {
				secret = append(secret, pc.After.SHA256)
			}
		}
	}
	for _, s := range secret {
		if strings.Contains(string(b), s) {
			t.Errorf("the strict policy's history shows %q: %s", s, b)
		}
	}
	if h.Hidden != 3 { // two writes of .env, and the move's hidden end
		t.Errorf("hidden = %d, want 3 (%s)", h.Hidden, b)
	}
	if h.Count != 2 { // a.txt's write, and the move shown as env.bak added
		t.Errorf("count = %d, want 2 (%s)", h.Count, b)
	}
	if _, err := History(ctx, strict, ".env", 0); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("history .env under the strict policy: %v, want denied", err)
	}
	if h, err := History(ctx, loose, "", 0); err != nil || h.Hidden != 0 || h.Count != 4 {
		t.Errorf("the loose policy's history: %d changes, %d hidden, %v; want all 4", h.Count, h.Hidden, err)
	}
}
