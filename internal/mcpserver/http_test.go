package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

const testToken = "0123456789abcdef-test-token"

// fakeClock is the refusal log's clock: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type testServer struct {
	url      string // http://127.0.0.1:PORT/mcp
	hostport string
	work     string
	auditLog string
	stderr   *lockedBuf
	clock    *fakeClock
	stop     func() error // cancels the server's context and waits for it to return
}

// startHTTP serves a native-profile server on 127.0.0.1:0 (no Landlock),
// with an audit log outside the workdir, until the test ends.
func startHTTP(t *testing.T) *testServer {
	t.Helper()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte("hello, world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	p := policy.DefaultPolicy(work)
	p.Audit.Log = filepath.Join(logDir, "audit.jsonl")
	home, _ := os.UserHomeDir()
	sb, err := sandbox.New(p, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	audit, err := sandbox.OpenAudit(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	stderr := &lockedBuf{}
	s := &tool.ServeSpec{Reg: ops.Registry, Sandbox: sb, Audit: audit, Version: "test", Profile: "native",
		HTTP: "127.0.0.1:0", Token: testToken, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: stderr}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveListener(ctx, ln, New(s), s, clock.now) }()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serveListener: %v", err)
		}
	})
	hp := ln.Addr().String()
	return &testServer{url: "http://" + hp + mcpPath, hostport: hp, work: work, auditLog: p.Audit.Log, stderr: stderr, clock: clock, stop: stop}
}

// refusals are the audit log's mcp-http records.
func (ts *testServer) refusals(t *testing.T) []sandbox.AuditRecord {
	t.Helper()
	return ts.records(t, "mcp-http")
}

// records are the audit log's records of one command.
func (ts *testServer) records(t *testing.T, command string) []sandbox.AuditRecord {
	t.Helper()
	f, err := os.Open(ts.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []sandbox.AuditRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r sandbox.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Command == command {
			recs = append(recs, r)
		}
	}
	return recs
}

func do(t *testing.T, method, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestHTTPRefusals(t *testing.T) {
	ts := startHTTP(t)
	_, port, _ := net.SplitHostPort(ts.hostport)
	bearer := "Bearer " + testToken
	for _, c := range []struct {
		name   string
		path   string
		hdr    map[string]string
		status int
		rule   fserr.Rule
	}{
		{"no token", mcpPath, nil, 401, ruleToken},
		{"wrong token", mcpPath, map[string]string{"Authorization": "Bearer " + testToken + "x"}, 401, ruleToken},
		{"short token", mcpPath, map[string]string{"Authorization": "Bearer x"}, 401, ruleToken},
		{"other scheme", mcpPath, map[string]string{"Authorization": "Basic " + testToken}, 401, ruleToken},
		{"no token elsewhere", "/", nil, 401, ruleToken},
		{"evil host", mcpPath, map[string]string{"Authorization": bearer, "Host": "evil.example"}, 403, ruleHost},
		{"evil host, our port", mcpPath, map[string]string{"Authorization": bearer, "Host": "evil.example:" + port}, 403, ruleHost},
		{"loopback, other port", mcpPath, map[string]string{"Authorization": bearer, "Host": "127.0.0.1:1"}, 403, ruleHost},
		{"evil origin", mcpPath, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, 403, ruleOrigin},
		{"null origin", mcpPath, map[string]string{"Authorization": bearer, "Origin": "null"}, 403, ruleOrigin},
		{"origin, other port", mcpPath, map[string]string{"Authorization": bearer, "Origin": "http://localhost:1"}, 403, ruleOrigin},
		{"https origin", mcpPath, map[string]string{"Authorization": bearer, "Origin": "https://localhost:" + port}, 403, ruleOrigin},
		{"other path", "/other", map[string]string{"Authorization": bearer}, 404, ""},
		{"localhost host and origin", "/other", map[string]string{"Authorization": "bearer " + testToken, "Host": "localhost:" + port, "Origin": "http://localhost:" + port}, 404, ""},
		{"::1 host and origin", "/other", map[string]string{"Authorization": bearer, "Host": "[::1]:" + port, "Origin": "http://[::1]:" + port}, 404, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts.clock.advance(time.Second) // a token in the bucket
			before := len(ts.refusals(t))
			resp := do(t, "POST", "http://"+ts.hostport+c.path, c.hdr)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
			}
			recs := ts.refusals(t)
			if c.rule == "" {
				if len(recs) != before {
					t.Errorf("an accepted request left a refusal record")
				}
				return
			}
			if len(recs) != before+1 {
				t.Fatalf("%d refusal records, want %d", len(recs), before+1)
			}
			r := recs[len(recs)-1]
			if r.Verdict != "denied" || r.Error == nil || r.Error.Code != fserr.CodeDenied || r.Error.Rule != c.rule || r.Paths == nil || r.PID != os.Getpid() {
				t.Errorf("record %+v (error %+v), want denied by %s", r, r.Error, c.rule)
			}
		})
	}
	if !strings.Contains(ts.stderr.String(), "fsbox mcp: serving streamable HTTP on http://"+ts.hostport+"/ (and /mcp)\n") {
		t.Errorf("stderr lacks the listening line:\n%s", ts.stderr)
	}
	if strings.Contains(ts.stderr.String(), testToken) {
		t.Errorf("stderr shows the token:\n%s", ts.stderr)
	}
}

// bearerTransport adds the token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPClient(t *testing.T) {
	ts := startHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, noRootsOpts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, HTTPClient: &http.Client{Transport: bearerTransport{testToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range tools.Tools {
		found = found || tl.Name == "fsbox_stat"
	}
	if !found {
		t.Fatalf("no fsbox_stat among %d tools", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fsbox_stat", Arguments: map[string]any{"path": "hello.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("fsbox_stat failed: %+v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st ops.StatResult
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Exists || st.Type != "file" || st.Size != int64(len("hello, world\n")) {
		t.Errorf("structuredContent %s", b)
	}
	// Its audit record carries the JSON-RPC id, as on stdio.
	if recs := ts.records(t, "stat"); len(recs) != 1 || recs[0].RequestID == nil || recs[0].Verdict != "ok" {
		t.Errorf("audit records of the stat call over HTTP: %+v; want one, ok, with its request id", recs)
	}

	// The session is bound to the token: the same id with another token
	// is refused (at the token check: the server knows one token).
	sid := cs.ID()
	if sid == "" {
		t.Fatal("no session id")
	}
	resp := do(t, "POST", ts.url, map[string]string{"Authorization": "Bearer another-token-0123456789", sessionHeader: sid})
	if resp.StatusCode != 401 {
		t.Errorf("another token on the session: status %d, want 401", resp.StatusCode)
	}
	if got := len(ts.refusals(t)); got != 1 {
		t.Errorf("%d refusal records, want 1", got)
	}
}

// TestHTTPAtRoot: the endpoint answers at / as at /mcp (a host given
// http://127.0.0.1:PORT), with the same token check; a session opened at
// one path goes on at the other; any other path is 404.
func TestHTTPAtRoot(t *testing.T) {
	ts := startHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, noRootsOpts)
	root := "http://" + ts.hostport + "/"
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: root, HTTPClient: &http.Client{Transport: bearerTransport{testToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fsbox_stat", Arguments: map[string]any{"path": "hello.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("fsbox_stat at /: %v %+v", err, res)
	}
	if resp := do(t, "POST", root, nil); resp.StatusCode != 401 {
		t.Errorf("no token at /: status %d, want 401", resp.StatusCode)
	}
	if resp := do(t, "POST", "http://"+ts.hostport+"/mcp/x", map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != 404 {
		t.Errorf("/mcp/x: status %d, want 404", resp.StatusCode)
	}
}

// TestFrontSessionBinding serves the front with a second token in turn:
// a session opened with one token is refused with the other.
func TestFrontSessionBinding(t *testing.T) {
	var n int
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(sessionHeader) == "" {
			n++
			w.Header().Set(sessionHeader, "session-"+string(rune('0'+n)))
		}
		w.WriteHeader(http.StatusOK)
	})
	s := &tool.ServeSpec{Token: "token-a-0123456789", Stderr: &lockedBuf{}}
	f := newFront(next, s, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}, "127.0.0.1", nil)
	serve := func(token, sid string) int {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8000/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			r.Header.Set(sessionHeader, sid)
		}
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w.Code
	}
	if c := serve("token-a-0123456789", ""); c != 200 {
		t.Fatalf("opening session-1: %d", c)
	}
	if c := serve("token-a-0123456789", "session-1"); c != 200 {
		t.Fatalf("session-1 with its token: %d", c)
	}
	f.token = sha256.Sum256([]byte("token-b-0123456789")) // now the server takes token b
	if c := serve("token-b-0123456789", "session-1"); c != 403 {
		t.Errorf("session-1 with token b: %d, want 403", c)
	}
	if c := serve("token-b-0123456789", ""); c != 200 {
		t.Fatalf("opening session-2: %d", c)
	}
	if c := serve("token-b-0123456789", "session-2"); c != 200 {
		t.Errorf("session-2 with its token: %d", c)
	}
	if !strings.Contains(s.Stderr.(*lockedBuf).String(), "another token") {
		t.Errorf("the refusal is not logged: %q", s.Stderr.(*lockedBuf).String())
	}
}

// TestHTTPRefusalFlood: 200 bad requests at one instant leave at most the
// bucket's records; the next record written says how many were left out.
func TestHTTPRefusalFlood(t *testing.T) {
	ts := startHTTP(t)
	ts.clock.advance(time.Hour) // a full bucket
	const flood = 200
	for range flood {
		if resp := do(t, "POST", ts.url, nil); resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	recs := ts.refusals(t)
	if len(recs) != refusalBurst {
		t.Fatalf("%d records after a flood of %d, want %d", len(recs), flood, refusalBurst)
	}
	ts.clock.advance(time.Second / refusalRate)
	do(t, "POST", ts.url, nil)
	recs = ts.refusals(t)
	if len(recs) != refusalBurst+1 {
		t.Fatalf("%d records, want %d", len(recs), refusalBurst+1)
	}
	if got := recs[len(recs)-1].Dropped; got != flood-refusalBurst {
		t.Errorf("dropped %d, want %d", got, flood-refusalBurst)
	}
	lines := strings.Count(ts.stderr.String(), "fsbox mcp: refused ")
	if lines != refusalBurst+1 {
		t.Errorf("%d refusal lines on stderr, want %d", lines, refusalBurst+1)
	}
	if !strings.Contains(ts.stderr.String(), "(190 more refusals before this one not logged)") {
		t.Errorf("stderr does not count the dropped refusals:\n%s", ts.stderr)
	}
}

// TestHTTPShutdown: the server returns when its context is done, with a
// client's session (and its standalone stream) still open.
func TestHTTPShutdown(t *testing.T) {
	ts := startHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, HTTPClient: &http.Client{Transport: bearerTransport{testToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := ts.stop(); err != nil {
		t.Fatalf("serveListener: %v", err)
	}
	if err := cs.Ping(ctx, nil); err == nil {
		t.Errorf("a ping after shutdown succeeded")
	}
}

func TestListenLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:0", "[::]:0", "127.0.0.1"} {
		if ln, err := listenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("listenLoopback(%q) listened on %s", addr, ln.Addr())
		}
	}
	ln, err := listenLoopback("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if !isLoopbackAddr(ln.Addr()) {
		t.Errorf("localhost:0 listens on %s", ln.Addr())
	}
}
