package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// secretMarker is the content of every file a call must never show: the
// files outside the workdir and the denied ones inside it. Replies are
// checked for it on every call the harness makes.
const secretMarker = "OUTSIDE-SECRET-c0ffee42"

// lockedBuf is the server's Stderr: written by the server's goroutines,
// read by the test.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// harness is one server on a temporary tree:
//
//	base/work      the workdir
//	base/outside   secret.txt (secretMarker), outside every root
//	base/policy    the policy file, when the test gives one
//	base/audit     the audit log
//	base/home      the home directory
type harness struct {
	t                                *testing.T
	base, work, outside, home, audit string
	policy                           *policy.Policy
	sb                               *sandbox.Sandbox
	srv                              *Server
	stderr                           *lockedBuf
	cs                               *mcp.ClientSession // the default client (no roots)
}

// setup holds what a harness is built from.
type setup struct {
	// toml is the policy file's text; $WORK, $BASE and $AUDIT are
	// replaced. The [audit] table is appended when it names none. Empty:
	// sandbox.DefaultPolicy with the audit log set.
	toml  string
	files map[string]string // relative to the workdir; a name ending in "/" is a directory
	// noClient leaves the default client out.
	noClient bool
}

func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, base: base, work: filepath.Join(base, "work"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"), audit: filepath.Join(base, "audit", "audit.log"), stderr: &lockedBuf{}}
	for _, d := range []string{h.work, h.outside, h.home, filepath.Dir(h.audit), filepath.Join(base, "policy")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(h.outside, "secret.txt"), secretMarker+"\n")
	for name, content := range s.files {
		p := filepath.Join(h.work, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		writeFile(t, p, content)
	}
	if s.toml == "" {
		h.policy = policy.DefaultPolicy(h.work)
		h.policy.Audit.Log = h.audit
	} else {
		text := s.toml
		if !strings.Contains(text, "[audit]") {
			text += "\n[audit]\nlog = \"$AUDIT\"\n"
		}
		text = strings.NewReplacer("$WORK", h.work, "$BASE", base, "$AUDIT", h.audit).Replace(text)
		file := filepath.Join(base, "policy", "p.toml")
		writeFile(t, file, text)
		p, err := policy.Load(policy.Env{ConfigFlag: file, ConfigSet: true,
			Getenv: func(string) (string, bool) { return "", false }, Cwd: h.work, Home: h.home,
			Known: func(string) bool { return true }})
		if err != nil {
			t.Fatalf("loading the policy:\n%s\n%v", text, err)
		}
		must(t, ops.CheckPolicyIn(ops.Registry, p))
		h.policy = p
	}
	sb, err := sandbox.New(h.policy, h.home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	h.sb = sb
	alog, err := sandbox.OpenAudit(h.policy)
	if err != nil {
		t.Fatal(err)
	}
	if alog != nil {
		t.Cleanup(func() { alog.Close() })
	}
	h.srv = New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: sb, Audit: alog, Profile: "native", Stderr: h.stderr, Version: "test"})
	if !s.noClient {
		h.cs = h.connect(nil)
	}
	return h
}

// legacyProtocol is the newest protocol version with the initialize
// handshake: the only one on which the server may ask a client for its
// roots (from 2026-07-28 on, a server-initiated roots/list is refused by
// the SDK, and no initialized notification comes).
const legacyProtocol = "2025-11-25"

// connect connects a new client over in-memory transports, the server's
// side wrapped in idTransport as Serve wraps stdio. opts nil: the SDK's
// default client (which offers roots, and has none), on the SDK's
// latest protocol version.
func (h *harness) connect(opts *mcp.ClientOptions, roots ...*mcp.Root) *mcp.ClientSession {
	h.t.Helper()
	return h.connectVersion("", opts, roots...)
}

// connectVersion is connect on a given protocol version ("": the SDK's
// latest).
func (h *harness) connectVersion(version string, opts *mcp.ClientOptions, roots ...*mcp.Root) *mcp.ClientSession {
	h.t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(ctx, &idTransport{inner: st}, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "fsbox-test", Version: "0"}, opts)
	c.AddRoots(roots...)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callOn calls a tool; every reply is checked for the secret marker.
func (h *harness) callOn(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	h.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second) // a hang fails, not blocks
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if strings.Contains(err.Error(), secretMarker) {
			h.t.Errorf("%s %v: the error shows the secret: %v", name, args, err)
		}
		return nil, err
	}
	if b, _ := json.Marshal(res); bytes.Contains(b, []byte(secretMarker)) {
		h.t.Errorf("%s %v: the reply shows the secret: %s", name, args, b)
	}
	return res, nil
}

func (h *harness) call(name string, args map[string]any) (*mcp.CallToolResult, error) {
	h.t.Helper()
	return h.callOn(context.Background(), h.cs, name, args)
}

// ok calls a tool that must succeed and returns its structured content,
// checked to equal the JSON of its one text block.
func (h *harness) ok(name string, args map[string]any) map[string]any {
	h.t.Helper()
	res, err := h.call(name, args)
	return okResult(h.t, name, args, res, err)
}

func okResult(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	text := textOf(t, res)
	if res.IsError {
		t.Fatalf("%s %v: isError: %s", name, args, text)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("%s %v: the text block is not a JSON object: %v\n%s", name, args, err, text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var structured map[string]any
	if err := json.Unmarshal(b, &structured); err != nil || structured == nil {
		t.Fatalf("%s %v: structuredContent is not a JSON object: %s", name, args, b)
	}
	if !reflect.DeepEqual(structured, fromText) {
		t.Fatalf("%s %v: structuredContent differs from the text block:\n%s\n%s", name, args, b, text)
	}
	return structured
}

// errBody is a tool error's {"error":{...}}.
type errBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path"`
	Rule    string `json:"rule"`
}

// fail calls a tool that must fail with code (and rule, when not "") as
// an isError result.
func (h *harness) fail(name string, args map[string]any, code, rule string) errBody {
	h.t.Helper()
	res, err := h.call(name, args)
	return failResult(h.t, name, args, res, err, code, rule)
}

func failResult(t *testing.T, name string, args map[string]any, res *mcp.CallToolResult, err error, code, rule string) errBody {
	t.Helper()
	if err != nil {
		t.Errorf("%s %v: protocol error, want an isError result with %s: %v", name, args, code, err)
		return errBody{}
	}
	text := textOf(t, res)
	if !res.IsError {
		t.Errorf("%s %v: succeeded, want %s: %s", name, args, code, text)
		return errBody{}
	}
	var env struct {
		Error *errBody `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil || env.Error == nil {
		t.Errorf("%s %v: the error text is not {\"error\":{...}}: %s", name, args, text)
		return errBody{}
	}
	if env.Error.Code != code || (rule != "" && env.Error.Rule != rule) {
		t.Errorf("%s %v: got %s/%s, want %s/%s: %s", name, args, env.Error.Code, env.Error.Rule, code, rule, text)
	}
	if env.Error.Message == "" {
		t.Errorf("%s %v: the error has no message: %s", name, args, text)
	}
	return *env.Error
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("want one content block, got %#v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("want a text block, got %T", res.Content[0])
	}
	return tc.Text
}

// auditRecords reads the audit log.
func (h *harness) auditRecords() []sandbox.AuditRecord {
	h.t.Helper()
	f, err := os.Open(h.audit)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []sandbox.AuditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r sandbox.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			h.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// eventually polls cond (a state another goroutine reaches, never a
// timing assertion); it fails the test after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
