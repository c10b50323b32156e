//go:build unix

package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestFreshnessDeniedNoOracle: read --if-none-match and stat --check
// answer a denied path that exists and a denied path that does not with
// byte-identical answers (the path aside), whatever hash is offered, even
// the file's true one: neither is an oracle on a denied file's existence
// or content. The denied paths are reached directly, by a pattern on the
// name, below a denied directory, and through a symlink.
func TestFreshnessDeniedNoOracle(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"ok.txt": "hello\n", "secret/real": "key\n", "sub/a.pem": "cert\n",
		"keys": "-> secret", "alias": "-> secret/real", "dangling": "-> secret/gone",
	})
	p := policy.DefaultPolicy(dir)
	p.Paths.Deny = []string{"secret", "**/*.pem"}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	hashOf := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	trueKey, trueCert, okHash := hashOf("key\n"), hashOf("cert\n"), hashOf("hello\n")
	// Each pair: a denied path that exists, and one that does not; the
	// answers compare once the path is replaced.
	pairs := []struct{ exists, missing, sum string }{
		{"secret/real", "secret/none", trueKey},
		{"sub/a.pem", "sub/b.pem", trueCert},
		{"keys/real", "keys/none", trueKey},
		{"alias", "dangling", trueKey}, // a symlink into the denied directory, and one whose target is missing
	}
	run := func(op *spec.Op, args map[string]any) string {
		t.Helper()
		raw, _ := json.Marshal(args)
		in, err := spec.FromJSON(op, raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		v, err := op.Run(context.Background(), sb.ForCall(), in)
		if err != nil {
			e := fserr.AsError(err)
			return fmt.Sprintf("error %s %s %s %q", e.Code, e.Rule, e.Path, e.Message(nil))
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, pr := range pairs {
		missing := pr.missing
		for _, sum := range []string{pr.sum, okHash, "absent"} {
			calls := []struct {
				name string
				op   *spec.Op
				args func(p string) map[string]any
			}{
				{"read --if-none-match", readOp, func(p string) map[string]any {
					if sum == "absent" {
						return map[string]any{"path": p}
					}
					return map[string]any{"path": p, "if_none_match": sum}
				}},
				{"stat --check (alone)", statOp, func(p string) map[string]any {
					return map[string]any{"path": p + "=" + sum, "check": true}
				}},
				{"stat --check (with a readable path)", statOp, func(p string) map[string]any {
					return map[string]any{"path": "ok.txt=" + okHash, "more_paths": []string{p + "=" + sum}, "check": true}
				}},
			}
			for _, c := range calls {
				a := strings.ReplaceAll(run(c.op, c.args(pr.exists)), pr.exists, "PATH")
				b := strings.ReplaceAll(run(c.op, c.args(missing)), missing, "PATH")
				if a != b {
					t.Errorf("%s %s vs %s (%s):\n exists:  %s\n missing: %s", c.name, pr.exists, missing, sum, a, b)
				}
				if !strings.Contains(a, "denied") {
					t.Errorf("%s %s (%s): not denied: %s", c.name, pr.exists, sum, a)
				}
				if strings.Contains(a, pr.sum) {
					t.Errorf("%s %s: the answer holds the denied file's hash: %s", c.name, pr.exists, a)
				}
			}
		}
	}
}

// TestStatCheckDeadline: stat --check gives the paths answered before the
// deadline (limit "timeout"), in entry order, and none after; a file the
// deadline caught while it was hashed is left out, not reported changed.
func TestStatCheckDeadline(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one worker: the entries in order
	sb, dir := testSandbox(t)
	tree(t, dir, map[string]string{"a.txt": "hello\n", "b.txt": "hello\n", "link": "-> a.txt", "c.txt": "hello\n"})
	ctx := newDeadlineCtx()
	sandbox.Seam = func(point string) {
		if point == "open.checked" { // the symlink, opened the long way
			ctx.fire()
		}
	}
	defer func() { sandbox.Seam = nil }()
	h := sha256.Sum256([]byte("hello\n"))
	sum := hex.EncodeToString(h[:])
	r, err := StatCheck(ctx, sb, CheckOptions{Entries: []string{"a.txt=" + sum, "b.txt=" + sum, "link=" + sum, "c.txt=" + sum}})
	if err != nil {
		t.Fatalf("stat --check past its deadline: %v, want the part before the cut", err)
	}
	if fmt.Sprint(r.Unchanged) != "[a.txt b.txt]" || len(r.Changed) != 0 || r.Count != 2 || !r.Truncated || r.Limit != "timeout" {
		t.Errorf("stat --check at the deadline: %+v; want a.txt and b.txt unchanged, cut by timeout", r)
	}
}
