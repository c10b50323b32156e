package s3test_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/s3store"
	"github.com/fsbox/fsbox/pkg/ops"
)

// scratchURL is a scratch prefix as store check reports it.
var scratchURL = regexp.MustCompile(`^s3://bkt/ab/(?:sub/)?\.fsbox-store-check-[0-9a-f]{16}/$`)

// TestS3CLIStoreCheck: fsbox store check, through fsbox (handed over to
// fsbox-s3), on versitygw: every probe in order, what versitygw v1.8.0
// gives (the conditional PUT races) and does not (a copy's destination
// conditions); the root credentials reach outside the policy's roots;
// every write lies under the scratch prefix, and nothing is left after;
// exit 0 with a failed probe. Off, outside a writable object root, or
// on a prefix the rules deny: denied, with no request.
func TestS3CLIStoreCheck(t *testing.T) {
	f := newFixture(t)
	on := f.policy(t, "[commands]\nstore = true", "")
	before := keysOf(t, f.s)

	mark := f.mark(t)
	m := f.run(t, on, "ab", "store", "check").ok(t)
	eq(t, "root", m["root"], "s3://bkt/ab")
	scratch, _ := m["scratch"].(string)
	if !scratchURL.MatchString(scratch) {
		t.Errorf("scratch %q", scratch)
	}
	eq(t, "removed", m["removed"], true)
	eq(t, "ok (copy_dest_conditions fails on versitygw)", m["ok"], false)
	var names []string
	got := map[string]map[string]any{}
	for _, p := range objs(t, m["probes"]) {
		name, _ := p["name"].(string)
		names = append(names, name)
		got[name] = p
		if d, _ := p["detail"].(string); d == "" {
			t.Errorf("%s: no detail", name)
		}
	}
	eq(t, "probes", names, s3store.ProbeNames)
	for _, n := range []string{s3store.ProbeCondPutIfNoneMatchRace, s3store.ProbeCondPutIfMatchRace} {
		eq(t, n, got[n]["ok"], true)
	}
	eq(t, s3store.ProbeCopyDestConditions, got[s3store.ProbeCopyDestConditions]["ok"], false)
	out, _ := m["outside"].(map[string]any)
	eq(t, "outside.reaches", out["reaches"], true)
	if reqs := objs(t, out["requests"]); len(reqs) != 3 {
		t.Errorf("outside requests: %v", reqs)
	}

	// Every write is under the scratch; nothing is left.
	prefix := "/" + bkt + strings.TrimPrefix(scratch, "s3://"+bkt)
	writes := 0
	for _, q := range f.requestsSince(t, mark) {
		if q.method == "GET" || q.method == "HEAD" {
			continue
		}
		writes++
		if !strings.HasPrefix(q.path, prefix) {
			t.Errorf("a write outside the scratch %s: %s", prefix, q)
		}
	}
	if writes < 50 {
		t.Errorf("%d writes seen in the server's log: the probes write more", writes)
	}
	eq(t, "the bucket after the check", keysOf(t, f.s), before)

	// The text form: a line per probe, then outside and scratch; exit 0.
	r := f.run(t, on, "ab", "store", "check", "s3://bkt/ab/sub", "--format", "text")
	if r.code != 0 {
		t.Fatalf("text: %s", r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(s3store.ProbeNames)+2 {
		t.Fatalf("text: %d lines: %s", len(lines), r)
	}
	for i, n := range s3store.ProbeNames {
		verdict := "ok"
		if n == s3store.ProbeCopyDestConditions {
			verdict = "FAIL"
		}
		if !strings.HasPrefix(lines[i], verdict+"\t"+n+"\t") {
			t.Errorf("text line %d: %q, want %s %s", i, lines[i], verdict, n)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-2], "outside\treaches\t") {
		t.Errorf("text: %q", lines[len(lines)-2])
	}
	last := strings.Split(lines[len(lines)-1], "\t")
	if len(last) != 3 || last[0] != "scratch" || last[1] != "removed" || !scratchURL.MatchString(last[2]) || !strings.Contains(last[2], "/ab/sub/") {
		t.Errorf("text: %q", lines[len(lines)-1])
	}
	if !strings.Contains(r.stderr, "copy_dest_conditions") {
		t.Errorf("text: stderr does not name the failed probe: %s", r)
	}
	eq(t, "the bucket after the check", keysOf(t, f.s), before)

	// The audit record names the URL and the command.
	logFile := filepath.Join(f.dir, "audit.jsonl")
	audited := f.policy(t, "[commands]\nstore = true\n[audit]\nlog = "+strconv.Quote(logFile), "")
	f.run(t, audited, "ab", "store", "check", "s3://bkt/ab/sub").ok(t)
	rec, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec), `"command":"store"`) || !strings.Contains(string(rec), `"arg":"s3://bkt/ab/sub"`) {
		t.Errorf("the audit record: %s", rec)
	}

	// The help's examples that need a bucket run here.
	for _, op := range ops.Registry.Ops() {
		for _, ex := range op.Examples {
			if ex.Bucket {
				if r := f.run(t, on, "ab", strings.Fields(ex.Cmd)...); r.code != 0 {
					t.Errorf("the example fsbox %s: %s", ex.Cmd, r)
				}
			}
		}
	}

	// The MCP tool (fsbox-mcp, handed over to fsbox-s3 mcp).
	t.Run("mcp", func(t *testing.T) {
		c := exec.Command(filepath.Join(f.bin, "fsbox-mcp"))
		c.Env, c.Dir = f.env(on, ptr("ab")), f.home
		var stderr bytes.Buffer
		c.Stderr = &stderr
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fsbox_store", Arguments: map[string]any{"action": "check"}})
		if err != nil {
			t.Fatalf("fsbox_store: %v\nstderr: %s", err, stderr.String())
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		if res.IsError || m["removed"] != true || len(objs(t, m["probes"])) != len(s3store.ProbeNames) {
			t.Errorf("fsbox_store check: isError %v: %s", res.IsError, b)
		}
	})
	eq(t, "the bucket after the MCP check", keysOf(t, f.s), before)

	// Refusals: no request, nothing written.
	off := f.policy(t, "", "")
	denyScratch := f.policy(t, "[commands]\nstore = true\n[paths]\nwrite_deny = [\"**/.fsbox-*/**\"]", "")
	for _, c := range []struct {
		cfg  string
		args []string
		rule string
	}{
		{off, []string{"store", "check"}, "command"},
		{on, []string{"store", "check", "s3://bkt/shared"}, "read_only"},
		{on, []string{"store", "check", "s3://bkt/abc"}, "root"},
		{on, []string{"store", "check", "s3://bkt"}, "root"},
		{on, []string{"store", "check", "s3://bkt/ab/../abc"}, "root"},
		{on, []string{"store", "check", "."}, "root"},
		{denyScratch, []string{"store", "check"}, "write_deny"},
	} {
		mark := f.mark(t)
		e := f.run(t, c.cfg, "ab", c.args...).fail(t, 3, "denied")
		if e.Rule != c.rule {
			t.Errorf("%v: rule %q, want %q", c.args, e.Rule, c.rule)
		}
		if qs := f.requestsSince(t, mark); len(qs) != 0 {
			t.Errorf("%v: requests %v", c.args, qs)
		}
	}
	eq(t, "the bucket after the refusals", keysOf(t, f.s), before)
}
