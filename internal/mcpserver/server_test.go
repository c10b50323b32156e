package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/companion"
	"github.com/fsbox/fsbox/internal/testbin"
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func listNames(t *testing.T, cs *mcp.ClientSession) (names []string, tools map[string]*mcp.Tool) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools = map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		tools[tl.Name] = tl
	}
	sort.Strings(names)
	return names, tools
}

// expectedTools is what `fsbox tools` lists under the harness's policy.
func (h *harness) expectedTools() []string {
	doc := tool.Tools(ops.Registry, func(name string) bool { return ops.CheckCommandIn(ops.Registry, h.policy, name) == nil })
	var out []string
	for _, tl := range doc.Tools {
		out = append(out, tl.Name)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestToolsListDefault(t *testing.T) {
	h := newHarness(t, setup{})
	names, tools := listNames(t, h.cs)
	want := h.expectedTools()
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tools/list: %v\nwant (fsbox tools): %v", names, want)
	}
	for _, n := range []string{"fsbox_read", "fsbox_grep", "fsbox_find", "fsbox_stat", "fsbox_ls", "fsbox_wc", "fsbox_slice",
		"fsbox_sort", "fsbox_cut", "fsbox_write", "fsbox_edit", "fsbox_mkdir", "fsbox_mv", "fsbox_cp", "fsbox_roots", "fsbox_explain"} {
		if !contains(names, n) {
			t.Errorf("%s missing from tools/list", n)
		}
	}
	if contains(names, "fsbox_rm") {
		t.Errorf("fsbox_rm is listed, but rm is off by default")
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "fsbox_") {
			t.Errorf("tool %q is not named fsbox_COMMAND", n)
		}
	}
	for _, op := range ops.Registry.Ops() {
		tl := tools["fsbox_"+op.Name]
		if tl == nil {
			continue
		}
		ref := tool.ToolOf(op)
		tool.AddExpect(&ref, op, h.policy.Write.RequirePrecondition) // the native tools' one precondition argument, beyond fsbox tools'
		if tl.InputSchema == nil || tl.OutputSchema == nil || tl.Annotations == nil {
			t.Errorf("%s: inputSchema %v, outputSchema %v, annotations %v: want all three", tl.Name, tl.InputSchema != nil, tl.OutputSchema != nil, tl.Annotations != nil)
			continue
		}
		if tl.Description == "" {
			t.Errorf("%s: no description", tl.Name)
		}
		if got, want := jsonOf(t, tl.InputSchema), jsonOf(t, ref.InputSchema); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: inputSchema differs from fsbox tools':\n%v\n%v", tl.Name, got, want)
		}
		if got, want := jsonOf(t, tl.OutputSchema), jsonOf(t, ref.OutputSchema); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: outputSchema differs from fsbox tools'", tl.Name)
		}
		a := tl.Annotations
		if a.ReadOnlyHint != ref.ReadOnly || a.IdempotentHint != ref.Idempotent || a.DestructiveHint == nil || *a.DestructiveHint != ref.Destructive ||
			a.OpenWorldHint == nil || *a.OpenWorldHint || a.Title == "" {
			t.Errorf("%s: annotations %+v do not match fsbox tools' %+v", tl.Name, a, ref.Annotations)
		}
		if s, _ := jsonOf(t, tl.InputSchema).(map[string]any); s["type"] != "object" {
			t.Errorf("%s: inputSchema type %v, want object", tl.Name, s["type"])
		}
	}
}

func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	must(t, json.Unmarshal(b, &out))
	return out
}

func TestToolsListPolicyCommands(t *testing.T) {
	h := newHarness(t, setup{toml: "workdir = \"$WORK\"\n[commands]\nrm = true\ngrep = false\n",
		files: map[string]string{"a.txt": "hello\n", "gone.txt": "bye\n"}})
	names, _ := listNames(t, h.cs)
	if want := h.expectedTools(); !reflect.DeepEqual(names, want) {
		t.Fatalf("tools/list: %v\nwant: %v", names, want)
	}
	if !contains(names, "fsbox_rm") {
		t.Errorf("fsbox_rm missing with [commands] rm = true")
	}
	if contains(names, "fsbox_grep") {
		t.Errorf("fsbox_grep listed with [commands] grep = false")
	}
	// A disabled tool is refused: the SDK finds no such tool (a protocol
	// error) or the call is an isError result.
	res, err := h.call("fsbox_grep", map[string]any{"pattern": "hello"})
	if err == nil && !res.IsError {
		t.Fatalf("calling the disabled fsbox_grep succeeded: %s", textOf(t, res))
	}
	if err == nil && strings.Contains(textOf(t, res), "hello\\n") {
		t.Errorf("the refusal shows file content: %s", textOf(t, res))
	}
	// An unknown name is refused the same way.
	if res, err := h.call("fsbox_nosuch", nil); err == nil && !res.IsError {
		t.Fatalf("calling fsbox_nosuch succeeded")
	}
	h.ok("fsbox_rm", map[string]any{"path": "gone.txt"})
	if _, err := os.Stat(filepath.Join(h.work, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("fsbox_rm left gone.txt: %v", err)
	}
}

// TestGuardRefusesDisabled: the guard checks the switch per call, even
// for a tool the server registered (a policy can only narrow).
func TestGuardRefusesDisabled(t *testing.T) {
	h := newHarness(t, setup{noClient: true})
	op, ok := ops.Registry.Lookup("rm")
	if !ok {
		t.Fatal("no rm")
	}
	ran := false
	_, err := h.srv.guard(context.Background(), op, h.sb.ForCall(), func(_ *sandbox.Sandbox) (any, error) { ran = true; return nil, nil })
	if err == nil || ran {
		t.Fatalf("guard ran the disabled rm (err %v, ran %v)", err, ran)
	}
	if !strings.Contains(string(tool.ErrorJSON(err, nil)), `"code":"denied"`) || !strings.Contains(string(tool.ErrorJSON(err, nil)), `"rule":"command"`) {
		t.Errorf("guard's refusal: %s", tool.ErrorJSON(err, nil))
	}
	// A panic in an operation is an io error, not a dead server.
	op, _ = ops.Registry.Lookup("read")
	_, err = h.srv.guard(context.Background(), op, h.sb.ForCall(), func(_ *sandbox.Sandbox) (any, error) { panic("boom") })
	if err == nil || !strings.Contains(string(tool.ErrorJSON(err, nil)), `"code":"io"`) {
		t.Errorf("a panic gave %v", err)
	}
}

func TestEveryToolOnce(t *testing.T) {
	h := newHarness(t, setup{toml: "workdir = \"$WORK\"\n[commands]\nrm = true\n",
		files: map[string]string{
			"a.txt": "hello\nworld\n", "c.csv": "b,2\na,1\n", "sub/f.txt": "x\n",
			"w.txt": "old\n", "e.txt": "alpha beta\n", "m.txt": "move me\n", "cpsrc.txt": "copy me\n", "rm.txt": "remove\n",
		}})
	called := map[string]bool{}
	check := func(name string, args map[string]any, verify func(map[string]any)) {
		t.Helper()
		called[name] = true
		out := h.ok(name, args)
		if verify != nil {
			verify(out)
		}
	}
	eq := func(out map[string]any, key string, want any) {
		t.Helper()
		if got := out[key]; !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("%s = %v, want %v (in %v)", key, got, want, out)
		}
	}
	check("fsbox_read", map[string]any{"path": "a.txt"}, func(o map[string]any) { eq(o, "content", "hello\nworld\n") })
	check("fsbox_grep", map[string]any{"pattern": "wor", "paths": []any{"a.txt"}}, func(o map[string]any) { eq(o, "count", 1) })
	check("fsbox_find", map[string]any{"dir": "sub"}, func(o map[string]any) { eq(o, "paths", []any{"sub/f.txt"}) })
	check("fsbox_stat", map[string]any{"path": "a.txt"}, func(o map[string]any) { eq(o, "type", "file"); eq(o, "size", 12) })
	check("fsbox_ls", map[string]any{"path": "sub"}, func(o map[string]any) { eq(o, "count", 1) })
	check("fsbox_wc", map[string]any{"paths": []any{"a.txt"}}, func(o map[string]any) {
		eq(o, "total", map[string]any{"lines": 2, "words": 2, "bytes": 12, "chars": 12})
	})
	check("fsbox_slice", map[string]any{"path": "a.txt", "start": 1, "end": 2}, func(o map[string]any) { eq(o, "lines", []any{"world"}) })
	check("fsbox_sort", map[string]any{"path": "c.csv"}, func(o map[string]any) { eq(o, "lines", []any{"a,1", "b,2"}) })
	check("fsbox_cut", map[string]any{"path": "c.csv", "fields": "2", "delimiter": ","}, func(o map[string]any) {
		eq(o, "rows", []any{[]any{"2"}, []any{"1"}})
	})
	check("fsbox_write", map[string]any{"path": "w.txt", "content": "new\n"}, nil)
	check("fsbox_edit", map[string]any{"path": "e.txt", "old": "beta", "new": "gamma"}, nil)
	check("fsbox_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p.txt\n+patched\n*** End Patch\n"}, func(o map[string]any) {
		eq(o, "dry_run", false)
	})
	check("fsbox_history", nil, func(o map[string]any) { eq(o, "truncated", false) })
	check("fsbox_undo", nil, nil) // takes the patch above back
	check("fsbox_mkdir", map[string]any{"path": "newdir/deeper"}, nil)
	check("fsbox_mv", map[string]any{"src": "m.txt", "dst": "newdir/m.txt"}, nil)
	check("fsbox_cp", map[string]any{"src": "cpsrc.txt", "dst": "cpdst.txt"}, nil)
	check("fsbox_rm", map[string]any{"path": "rm.txt"}, nil)
	check("fsbox_roots", nil, func(o map[string]any) { eq(o, "workdir", h.work) })
	check("fsbox_explain", map[string]any{"command": "read", "path": "a.txt"}, func(o map[string]any) { eq(o, "allowed", true) })

	if _, err := os.Stat(filepath.Join(h.work, "p.txt")); err == nil {
		t.Error("fsbox_undo left the patched file")
	}
	for name, want := range map[string]string{"w.txt": "new\n", "e.txt": "alpha gamma\n", "newdir/m.txt": "move me\n", "cpdst.txt": "copy me\n"} {
		b, err := os.ReadFile(filepath.Join(h.work, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	for _, gone := range []string{"m.txt", "rm.txt"} {
		if _, err := os.Lstat(filepath.Join(h.work, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still exists", gone)
		}
	}
	if fi, err := os.Stat(filepath.Join(h.work, "newdir", "deeper")); err != nil || !fi.IsDir() {
		t.Errorf("mkdir newdir/deeper: %v", err)
	}
	names, _ := listNames(t, h.cs)
	for _, n := range names {
		if !called[n] {
			t.Errorf("tool %s is listed but this test does not call it", n)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	h := newHarness(t, setup{toml: "workdir = \"$WORK\"\n[limits]\nmax_read_bytes = 64\n",
		files: map[string]string{"a.txt": "hello\nworld\n", "big.txt": strings.Repeat("0123456789\n", 20), "sub/f.txt": "x\n", "dst.txt": "there\n"}})
	outsideSecret := filepath.Join(h.outside, "secret.txt")
	h.fail("fsbox_read", map[string]any{"path": outsideSecret}, "denied", "root")
	h.fail("fsbox_read", map[string]any{"path": "../outside/secret.txt"}, "denied", "root")
	h.fail("fsbox_read", map[string]any{"path": "missing.txt"}, "not_found", "")
	h.fail("fsbox_read", map[string]any{"path": "sub"}, "not_a_file", "")
	// usage: a missing required property, a negative limit, a wrong type,
	// an unknown property.
	h.fail("fsbox_read", map[string]any{}, "usage", "")
	h.fail("fsbox_read", map[string]any{"path": "a.txt", "limit": -1}, "usage", "")
	h.fail("fsbox_read", map[string]any{"path": 7}, "usage", "")
	h.fail("fsbox_read", map[string]any{"path": "a.txt", "no_such_property": true}, "usage", "")
	h.fail("fsbox_grep", map[string]any{"paths": []any{"a.txt"}}, "usage", "")
	h.fail("fsbox_grep", map[string]any{"pattern": "(", "paths": []any{"a.txt"}}, "usage", "")
	h.fail("fsbox_read", map[string]any{"path": "big.txt"}, "too_large", "")
	h.fail("fsbox_write", map[string]any{"path": "a.txt", "content": "x", "expect_sha256": strings.Repeat("0", 64)}, "conflict", "")
	h.fail("fsbox_edit", map[string]any{"path": "a.txt", "old": "nowhere", "new": "y"}, "text_not_found", "")
	h.fail("fsbox_edit", map[string]any{"path": "a.txt", "old": "o", "new": "0"}, "ambiguous", "")
	h.fail("fsbox_mv", map[string]any{"src": "a.txt", "dst": "dst.txt"}, "exists", "")
	h.fail("fsbox_cp", map[string]any{"src": "a.txt", "dst": "dst.txt"}, "exists", "")
	h.fail("fsbox_write", map[string]any{"path": "dst.txt", "content": "x", "no_clobber": true}, "exists", "")
	h.fail("fsbox_write", map[string]any{"path": "../outside/new.txt", "content": "x"}, "denied", "")
	// Nothing the failed calls touched changed.
	for name, want := range map[string]string{"a.txt": "hello\nworld\n", "dst.txt": "there\n"} {
		if b, _ := os.ReadFile(filepath.Join(h.work, name)); string(b) != want {
			t.Errorf("%s changed to %q", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(h.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write outside happened")
	}
	// mkdir of a directory that exists is no error: created false.
	out := h.ok("fsbox_mkdir", map[string]any{"path": "sub"})
	if out["created"] != false {
		t.Errorf("mkdir of an existing directory: %v", out)
	}
}

// TestGrepNoMatch: the CLI exits 1 with its result printed; over MCP
// no match is an ordinary result (no isError), with nothing in it.
func TestGrepNoMatch(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "hello\n"}})
	out := h.ok("fsbox_grep", map[string]any{"pattern": "nomatch[0-9]"})
	if out["count"] != float64(0) || !reflect.DeepEqual(out["matches"], []any{}) || out["files_searched"] != float64(1) {
		t.Errorf("grep with no match: %v", out)
	}
	recs := h.auditRecords()
	if len(recs) != 1 || recs[0].Verdict != "ok" {
		t.Errorf("audit of a grep with no match: %+v", recs)
	}
}

// cancelAtProgress makes the server cancel a tools/call's own context
// when the call sends its first progress notification: from inside the
// walk, so the grep has started and is then cancelled, whatever the
// machine's load (the client's cancellation notice races the call).
func cancelAtProgress(srv *mcp.Server) {
	var mu sync.Mutex
	var cancel context.CancelFunc
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				var c context.CancelFunc
				ctx, c = context.WithCancel(ctx)
				defer c()
				mu.Lock()
				cancel = c
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/progress" {
				mu.Lock()
				if cancel != nil {
					cancel()
				}
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
}

func TestCancelGrep(t *testing.T) {
	const nfiles, size = 3000, 8 << 10
	h := newHarness(t, setup{noClient: true})
	line := strings.Repeat("abcdefghij", 7) + "\n" // no match for the pattern
	content := strings.Repeat(line, size/len(line))
	for i := 0; i < nfiles; i++ {
		writeFile(t, filepath.Join(h.work, fmt.Sprintf("d%02d", i%30), fmt.Sprintf("f%04d.txt", i)), content)
	}
	total := int64(nfiles * len(content))

	cancelAtProgress(h.srv.Server)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(context.Background(), &idTransport{inner: st}, nil)
	must(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(context.Background(), ct, nil)
	must(t, err)
	defer func() { cs.Close(); ss.Wait() }()

	params := &mcp.CallToolParams{Name: "fsbox_grep", Arguments: map[string]any{"pattern": "zq[0-9]+x"}}
	params.SetProgressToken("grep")
	res, err := cs.CallTool(context.Background(), params)
	must(t, err)
	if !res.IsError || !strings.Contains(textOf(t, res), "cancel") {
		t.Fatalf("the cancelled grep: %.300s", textOf(t, res))
	}
	// The server finishes the call on its own and audits it: once, as an
	// error, having read less than the tree.
	eventually(t, "the cancelled grep's audit record", func() bool { return len(h.auditRecords()) > 0 })
	recs := h.auditRecords()
	if len(recs) != 1 {
		t.Fatalf("%d audit records, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Command != "grep" || r.Verdict != "error" || r.Error == nil || r.Error.Code != "io" {
		t.Errorf("audit of the cancelled grep: %+v (error %+v)", r, r.Error)
	}
	if r.BytesRead >= total {
		t.Errorf("the cancelled grep read %d bytes, the whole tree (%d)", r.BytesRead, total)
	}
	t.Logf("cancelled grep read %d of %d bytes", r.BytesRead, total)
	// The server still serves.
	h.cs = cs
	h.ok("fsbox_stat", map[string]any{"path": "d00"})
}

func TestConcurrentCalls(t *testing.T) {
	const n = 32
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("content-%02d\n", i)
	}
	h := newHarness(t, setup{files: files})
	second := h.connect(nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cs := h.cs
			if i%2 == 1 {
				cs = second
			}
			name := fmt.Sprintf("f%02d.txt", i)
			want := fmt.Sprintf("content-%02d\n", i)
			var res *mcp.CallToolResult
			var err error
			switch i % 4 {
			case 0, 1:
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_read", Arguments: map[string]any{"path": name}})
			case 2:
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_grep", Arguments: map[string]any{"pattern": fmt.Sprintf("content-%02d", i)}})
			case 3:
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_write", Arguments: map[string]any{"path": name, "content": want + want}})
				want += want
			}
			if err != nil || res.IsError {
				errs <- fmt.Errorf("call %d: %v %+v", i, err, res)
				return
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
				errs <- err
				return
			}
			switch i % 4 {
			case 0, 1:
				if out["content"] != want {
					errs <- fmt.Errorf("call %d read %q, want %q", i, out["content"], want)
				}
			case 2:
				ms, _ := out["matches"].([]any)
				if out["count"] != float64(1) || len(ms) != 1 || ms[0].(map[string]any)["path"] != name {
					errs <- fmt.Errorf("call %d grep: %v", i, out)
				}
			case 3:
				if b, _ := os.ReadFile(filepath.Join(h.work, name)); string(b) != want {
					errs <- fmt.Errorf("call %d wrote %q", i, b)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs := h.auditRecords()
	if len(recs) != n {
		t.Errorf("%d audit records for %d calls", len(recs), n)
	}
	for _, r := range recs {
		if r.Verdict != "ok" || r.RequestID == nil {
			t.Errorf("audit record %+v", r)
		}
	}
}

func rootURI(p string) string { return "file://" + filepath.ToSlash(p) }

func TestAuditRecords(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "hello\n"}})
	h.ok("fsbox_read", map[string]any{"path": "a.txt"})
	h.fail("fsbox_read", map[string]any{"path": "../outside/secret.txt"}, "denied", "root")
	h.fail("fsbox_read", map[string]any{"path": "missing.txt"}, "not_found", "")
	h.ok("fsbox_write", map[string]any{"path": "b.txt", "content": "12345"})
	h.ok("fsbox_grep", map[string]any{"pattern": "hello"})
	recs := h.auditRecords()
	want := []struct{ command, verdict string }{{"read", "ok"}, {"read", "denied"}, {"read", "error"}, {"write", "ok"}, {"grep", "ok"}}
	if len(recs) != len(want) {
		t.Fatalf("%d audit records for %d calls: %+v", len(recs), len(want), recs)
	}
	ids := map[string]bool{}
	for i, r := range recs {
		if r.Command != want[i].command || r.Verdict != want[i].verdict {
			t.Errorf("record %d: %s/%s, want %s/%s", i, r.Command, r.Verdict, want[i].command, want[i].verdict)
		}
		if r.RequestID == nil {
			t.Errorf("record %d has no request_id", i)
		}
		id := fmt.Sprint(r.RequestID)
		if ids[id] {
			t.Errorf("record %d repeats request_id %s", i, id)
		}
		ids[id] = true
		if r.PID != os.Getpid() || r.Time == "" {
			t.Errorf("record %d: pid %d time %q", i, r.PID, r.Time)
		}
	}
	if recs[0].BytesRead != 6 || len(recs[0].Paths) != 1 || recs[0].Paths[0].Arg != "a.txt" {
		t.Errorf("read's record: %+v", recs[0])
	}
	if recs[1].Error == nil || recs[1].Error.Code != "denied" || recs[1].Error.Rule != "root" {
		t.Errorf("the denied read's record: %+v", recs[1])
	}
	if recs[3].BytesWritten != 5 {
		t.Errorf("write's record: %+v", recs[3])
	}
	// Without idTransport (no stdio), a call has no request id, and is
	// still audited.
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(context.Background(), st, nil)
	must(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	must(t, err)
	defer func() { cs.Close(); ss.Wait() }()
	res, err := h.callOn(context.Background(), cs, "fsbox_stat", map[string]any{"path": "a.txt"})
	okResult(t, "fsbox_stat", nil, res, err)
	recs = h.auditRecords()
	if last := recs[len(recs)-1]; len(recs) != len(want)+1 || last.Command != "stat" || last.RequestID != nil {
		t.Errorf("the call without idTransport: %d records, last %+v", len(recs), last)
	}
}

// TestRequestIDNotForged: a client's own _meta cannot set the audited id.
func TestRequestIDNotForged(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "hello\n"}})
	_, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_stat", Arguments: map[string]any{"path": "a.txt"},
		Meta: mcp.Meta{idMetaKey: "forged"}})
	must(t, err)
	recs := h.auditRecords()
	if len(recs) != 1 || recs[0].RequestID == nil || recs[0].RequestID == "forged" {
		t.Errorf("request_id %v", recs[0].RequestID)
	}
}

// TestRootsLatestProtocol: a client on the SDK's latest protocol
// (2026-07-28, stateless) sends no initialized notification, and the SDK
// refuses a server-initiated roots/list on it, so its roots cannot
// narrow the policy's: the call outside them is served within the
// policy. This records the limitation (see the report of this commit);
// when roots come to be honoured on the new protocol (for instance
// through SEP-2322 input requests), make this test demand the denial.
func TestRootsLatestProtocol(t *testing.T) {
	h := newHarness(t, setup{noClient: true, files: map[string]string{"top.txt": "top\n", "sub/in.txt": "inside\n"}})
	cs := h.connect(nil, &mcp.Root{URI: rootURI(filepath.Join(h.work, "sub"))})
	res, err := h.callOn(context.Background(), cs, "fsbox_read", map[string]any{"path": "sub/in.txt"})
	okResult(t, "fsbox_read inside", nil, res, err)
	// Whatever happens to roots, the policy still holds.
	res, err = h.callOn(context.Background(), cs, "fsbox_read", map[string]any{"path": filepath.Join(h.outside, "secret.txt")})
	failResult(t, "fsbox_read outside", nil, res, err, "denied", "root")
	res, err = h.callOn(context.Background(), cs, "fsbox_read", map[string]any{"path": "top.txt"})
	if err == nil && res.IsError {
		return // narrowed: roots are honoured on the latest protocol
	}
	t.Skipf("roots announced on protocol %s are not applied (the server cannot ask for them): top.txt outside the client's root was served",
		cs.InitializeResult().ProtocolVersion)
}

// TestStdioProcess runs the server as the separate process a host starts:
// fsbox-mcp over stdio (named directly), and fsbox mcp, which execs the
// fsbox-mcp beside it.
func TestStdioProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin := testbin.Dir(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	work, empty, home := filepath.Join(base, "work"), filepath.Join(base, "xdg"), filepath.Join(base, "home")
	for _, d := range []string{work, empty, home} {
		must(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(work, "a.txt"), "over stdio\n")
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "FSBOX_CONFIG" && k != "XDG_CONFIG_HOME" && k != "HOME" && k != "FSBOX_FORMAT" {
			env = append(env, kv)
		}
	}
	env = append(env, "XDG_CONFIG_HOME="+empty, "HOME="+home)
	command := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.Env, c.Dir = env, base
		return c
	}
	connect := func(t *testing.T, c *exec.Cmd) *mcp.ClientSession {
		t.Helper()
		var stderr lockedBuf
		c.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			t.Fatalf("connecting to %v: %v\nstderr: %s", c.Args, err, stderr.String())
		}
		t.Cleanup(func() {
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
		})
		return cs
	}

	t.Run("fsbox-mcp", func(t *testing.T) {
		cs := connect(t, command(companion.MCP, work)) // fsbox-mcp ARGS is fsbox mcp ARGS
		if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "fsbox" {
			t.Errorf("server info %+v", info)
		}
		names, _ := listNames(t, cs)
		if !contains(names, "fsbox_read") || contains(names, "fsbox_rm") {
			t.Errorf("tools/list over stdio: %v", names)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_read", Arguments: map[string]any{"path": "a.txt"}})
		if out := okResult(t, "fsbox_read", nil, res, err); out["content"] != "over stdio\n" {
			t.Errorf("read over stdio: %v", out)
		}
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_write", Arguments: map[string]any{"path": "../escape.txt", "content": "x"}})
		failResult(t, "fsbox_write ../escape.txt", nil, res, err, "denied", "")
		if _, err := os.Stat(filepath.Join(base, "escape.txt")); !os.IsNotExist(err) {
			t.Errorf("a write outside the workdir happened")
		}
	})

	t.Run("no-policy", func(t *testing.T) {
		c := command(companion.MCP)
		var stdout, stderr strings.Builder
		c.Stdin, c.Stdout, c.Stderr = strings.NewReader(""), &stdout, &stderr
		err := c.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 8 {
			t.Fatalf("fsbox-mcp with no directories and no policy: %v, want exit 8\nstderr: %s", err, stderr.String())
		}
		var env struct {
			Error *errBody `json:"error"`
		}
		if err := json.Unmarshal([]byte(stderr.String()), &env); err != nil || env.Error == nil || env.Error.Code != "config" {
			t.Errorf("stderr is not a config error in JSON: %q (%v)", stderr.String(), err)
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout: %q", stdout.String())
		}
	})

	t.Run("fsbox-mcp-execs-mcpd", func(t *testing.T) {
		cs := connect(t, command("fsbox", "mcp", work))
		if r := cs.InitializeResult(); r == nil || r.ServerInfo == nil || r.ServerInfo.Name != "fsbox" {
			t.Fatalf("initialize through fsbox mcp: %+v", r)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_stat", Arguments: map[string]any{"path": "a.txt"}})
		okResult(t, "fsbox_stat", nil, res, err)
	})
}

// A call that carries a progress token hears a walk's progress: one
// notifications/progress per sandbox.ProgressEvery entries, counts rising,
// all before the result; a call without one hears nothing.
func TestProgress(t *testing.T) {
	files := map[string]string{}
	for i := range 3*sandbox.ProgressEvery + 10 {
		files[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = "x\n"
	}
	h := newHarness(t, setup{noClient: true, files: files})
	var mu sync.Mutex
	var got []float64
	cs := h.connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, r.Params.Progress)
		mu.Unlock()
	}})
	params := &mcp.CallToolParams{Name: "fsbox_find", Arguments: map[string]any{"glob": "**/*.txt"}}
	params.SetProgressToken("walk-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("find: %v %+v", err, res)
	}
	mu.Lock()
	n := len(got)
	ok := n >= 3
	for i := 1; i < n; i++ {
		ok = ok && got[i] > got[i-1]
	}
	mu.Unlock()
	if !ok {
		t.Errorf("progress %v: want at least 3 rising counts for %d entries", got, 3*sandbox.ProgressEvery+15)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fsbox_find", Arguments: map[string]any{"glob": "**/*.txt"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("a call without a progress token got %d notifications", len(got)-n)
	}
}

// TestCancelledWhileQueued: a call cancelled while it waits for a worker
// is audited, once, as an io error, and takes no worker. The seam holds
// the call at the queue (every worker busy) until the client cancels, the
// interleaving under which TestCancelGrep waited its full 20 s for an
// audit record in 2 of 19 race runs: before ed44ce5 such a call returned
// without one.
func TestCancelledWhileQueued(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "x\n"}})
	for range cap(h.srv.work) {
		h.srv.work <- struct{}{} // every worker busy
	}
	defer func() {
		for range cap(h.srv.work) {
			<-h.srv.work
		}
	}()
	waiting := make(chan struct{})
	queued = func() { close(waiting) }
	defer func() { queued = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "fsbox_read", Arguments: map[string]any{"path": "a.txt"}})
		errc <- err
	}()
	select {
	case <-waiting:
	case <-time.After(20 * time.Second):
		t.Fatal("the call never reached the queue")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error to its client")
	}
	eventually(t, "the queued call's audit record", func() bool { return len(h.auditRecords()) > 0 })
	recs := h.auditRecords()
	if len(recs) != 1 || recs[0].Command != "read" || recs[0].Verdict != "error" || recs[0].Error == nil || recs[0].Error.Code != "io" {
		t.Errorf("audit of the queued call: %+v", recs)
	}
	if n := len(h.srv.work); n != cap(h.srv.work) {
		t.Errorf("%d workers busy, want the %d the test holds", n, cap(h.srv.work))
	}
}
