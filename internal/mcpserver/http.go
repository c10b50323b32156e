package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// mcpPath is where the streamable HTTP endpoint lives, and "/" too (a
// host given http://127.0.0.1:PORT posts there); every other path is 404
// (once the request passed the front's checks).
const mcpPath = "/mcp"

// The HTTP server's limits. There is no ReadTimeout or WriteTimeout:
// a response is an SSE stream that lasts as long as its tool call (or,
// for the standalone GET stream, as long as the session), and net/http's
// ReadTimeout would cancel a long request's context. Only a request that
// passed the token check gets to send a body, and the SDK caps its size.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	shutdownGrace     = 5 * time.Second // for tool calls in flight when ctx is done
	sessionTimeout    = 30 * time.Minute
	maxBody           = 4 << 20 // the SDK's own cap on a request body
)

// The refusal log's rate: at most refusalBurst records at once, refilled
// at refusalRate a second.
const (
	refusalRate  = 10
	refusalBurst = 10
)

// The rules an HTTP refusal names in its audit record.
const (
	ruleToken   fserr.Rule = "http_token"   // no bearer token, or the wrong one
	ruleHost    fserr.Rule = "http_host"    // a Host header other than the listener's (DNS rebinding)
	ruleOrigin  fserr.Rule = "http_origin"  // an Origin other than the listener's loopback origins
	ruleSession fserr.Rule = "http_session" // a session opened with another token
)

const sessionHeader = "Mcp-Session-Id"

// serveHTTP serves streamable HTTP on s.HTTP, a loopback host:port, until
// ctx is done.
func serveHTTP(ctx context.Context, srv *Server, s *tool.ServeSpec) error {
	ln, err := listenLoopback(s.HTTP)
	if err != nil {
		return err
	}
	return serveListener(ctx, ln, srv, s, nil)
}

// listenLoopback listens on exactly addr: an IP literal in 127.0.0.0/8
// or ::1, or localhost, which is 127.0.0.1 (or ::1 where there is no
// IPv4 loopback) and never what a resolver says it is. Anything the
// listener ends up on that is not loopback is refused.
func listenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeUsage, "", "--http takes HOST:PORT, got %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fserr.Errorf(fserr.CodeUsage, "", "--http: bad port %q", port)
	}
	var cands []string
	if strings.EqualFold(host, "localhost") {
		cands = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port)}
	} else {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" || !a.Unmap().IsLoopback() {
			return nil, fserr.Errorf(fserr.CodeUsage, "", "--http serves loopback addresses only (127.0.0.1, ::1, localhost), got %q", host)
		}
		cands = []string{net.JoinHostPort(a.Unmap().String(), port)}
	}
	var ln net.Listener
	for _, c := range cands {
		network := "tcp4"
		if strings.Contains(c, "[") {
			network = "tcp6"
		}
		if ln, err = net.Listen(network, c); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, "", "fsbox mcp: listening on %s: %v", addr, err)
	}
	if !isLoopbackAddr(ln.Addr()) {
		ln.Close()
		return nil, fserr.Errorf(fserr.CodeUsage, "", "fsbox mcp: %s listens on %s, which is not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	return ok && ta.Zone == "" && ip.Unmap().IsLoopback()
}

// serveListener serves streamable HTTP on ln (which must be loopback)
// until ctx is done; then it stops taking connections, gives the tool
// calls in flight shutdownGrace to end and closes the rest. clock is the
// refusal log's (time.Now when nil).
func serveListener(ctx context.Context, ln net.Listener, srv *Server, s *tool.ServeSpec, clock func() time.Time) error {
	if !isLoopbackAddr(ln.Addr()) {
		ln.Close()
		return fserr.Errorf(fserr.CodeUsage, "", "fsbox mcp: %s is not a loopback address", ln.Addr())
	}
	// The SDK's own DNS-rebinding check (on by default: a loopback
	// listener refuses a Host that is not loopback) stays on beneath the
	// front's stricter one (the same port too). Its CrossOriginProtection
	// option is deprecated; the front checks Origin itself.
	// An idle session ends after SessionTimeout, and what it held (its
	// token binding, its roots) with it.
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, &mcp.StreamableHTTPOptions{SessionTimeout: sessionTimeout})
	mux := http.NewServeMux()
	mux.Handle(mcpPath, mcpHandler)
	mux.Handle("/{$}", mcpHandler) // the root itself, not below it
	mux.Handle("/", http.NotFoundHandler())

	stop := make(chan struct{}) // closed when ctx is done: ends the standalone SSE streams
	f := newFront(mux, s, ln.Addr(), hostOf(s.HTTP), clock)
	f.stop = stop
	srv.sessionEnded = f.forget
	hs := &http.Server{
		Handler:           f,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.logf("serving streamable HTTP on http://%s/ (and %s)", ln.Addr(), mcpPath)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fserr.Errorf(fserr.CodeIO, "", "fsbox mcp: serving HTTP: %v", err)
	case <-ctx.Done():
	}
	close(stop)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fserr.Errorf(fserr.CodeIO, "", "fsbox mcp: serving HTTP: %v", err)
	}
	return nil
}

// hostOf is the host of a host:port ("" when it is none).
func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

// front checks every request before the MCP handler sees it: the bearer
// token, the Host header (DNS rebinding), the Origin header (a browser
// page), and that a session is used with the token that opened it.
type front struct {
	next     http.Handler
	spec     *tool.ServeSpec
	token    [32]byte        // SHA-256 of the token
	hosts    map[string]bool // Host headers accepted, lower case
	origins  map[string]bool // Origin headers accepted, lower case
	refusals *refusalLog
	stop     <-chan struct{} // closed at shutdown (nil: never)

	mu       sync.Mutex
	sessions map[string][32]byte // Mcp-Session-Id → SHA-256 of the token that opened it
}

func newFront(next http.Handler, s *tool.ServeSpec, addr net.Addr, listenHost string, clock func() time.Time) *front {
	f := &front{
		next: next, spec: s, token: sha256.Sum256([]byte(s.Token)),
		hosts: map[string]bool{}, origins: map[string]bool{},
		refusals: newRefusalLog(s, clock),
		sessions: map[string][32]byte{},
	}
	_, port, _ := net.SplitHostPort(addr.String())
	names := []string{"localhost", "127.0.0.1", "::1", hostOf(addr.String())}
	if listenHost != "" {
		names = append(names, listenHost)
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		hp := strings.ToLower(net.JoinHostPort(n, port))
		f.hosts[hp] = true
		f.origins["http://"+hp] = true
		if port == "80" {
			bare := strings.ToLower(n)
			if strings.Contains(n, ":") {
				bare = "[" + bare + "]"
			}
			f.hosts[bare] = true
			f.origins["http://"+bare] = true
		}
	}
	return f
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sum, ok := bearerSum(r.Header.Get("Authorization"))
	if !ok || subtle.ConstantTimeCompare(sum[:], f.token[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fsbox"`)
		f.refuse(w, r, http.StatusUnauthorized, ruleToken, "no bearer token, or the wrong one")
		return
	}
	if !f.hosts[strings.ToLower(r.Host)] {
		f.refuse(w, r, http.StatusForbidden, ruleHost, fmt.Sprintf("Host %q is not this server's loopback address", r.Host))
		return
	}
	if origins, present := r.Header["Origin"]; present && (len(origins) != 1 || !f.origins[strings.ToLower(origins[0])]) {
		f.refuse(w, r, http.StatusForbidden, ruleOrigin, fmt.Sprintf("Origin %q is not this server's loopback origin", strings.Join(origins, ", ")))
		return
	}
	sid := r.Header.Get(sessionHeader)
	if sid != "" {
		f.mu.Lock()
		owner, known := f.sessions[sid]
		f.mu.Unlock()
		if known && subtle.ConstantTimeCompare(owner[:], sum[:]) != 1 {
			f.refuse(w, r, http.StatusForbidden, ruleSession, "the session was opened with another token")
			return
		}
	}
	if r.Method == http.MethodGet && f.stop != nil {
		// The standalone SSE stream lasts as long as its session: end it
		// when the server shuts down, not after the grace period.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-f.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		r = r.WithContext(ctx)
	}
	if sid == "" {
		// A request without a session may open one: bind the id the
		// response carries to the token.
		w = &sessionRecorder{ResponseWriter: w, f: f, sum: sum}
	}
	if r.Method == http.MethodPost {
		if err := stampRequestIDs(r); err != nil {
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	rec := &statusRecorder{ResponseWriter: w}
	f.next.ServeHTTP(rec, r)
	if sid != "" && r.Method == http.MethodDelete && rec.status >= 200 && rec.status < 300 {
		f.mu.Lock()
		delete(f.sessions, sid)
		f.mu.Unlock()
	}
}

// forget drops an ended session's token binding.
func (f *front) forget(id string) {
	f.mu.Lock()
	delete(f.sessions, id)
	f.mu.Unlock()
}

// stampRequestIDs copies the JSON-RPC id of a tools/call in the body into
// its params' _meta, as idConn does on stdio: the SDK does not hand a
// tool handler its request's id, which the audit record carries. A body
// over maxBody is left to the SDK, which refuses it.
func stampRequestIDs(r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		return err
	}
	if len(body) <= maxBody {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && len(msg.ID) > 0 {
			var id any
			var whole map[string]json.RawMessage
			if json.Unmarshal(msg.ID, &id) == nil && json.Unmarshal(body, &whole) == nil {
				whole["params"], _ = withRequestID(msg.Params, id, "")
				if b, err := json.Marshal(whole); err == nil {
					body = b
				}
			}
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return nil
}

// bearerSum is the SHA-256 of the token in an Authorization header of
// the Bearer scheme (any case), and whether there is one.
func bearerSum(h string) ([32]byte, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return [32]byte{}, false
	}
	return sha256.Sum256([]byte(tok)), true
}

// refuse answers status and records the refusal (rate-limited).
func (f *front) refuse(w http.ResponseWriter, r *http.Request, status int, rule fserr.Rule, why string) {
	f.refusals.note(r, status, rule, why)
	http.Error(w, http.StatusText(status)+": "+why, status)
}

// sessionRecorder binds the session id a response carries to the token
// of the request that opened it, before the response leaves (the client
// learns the id from it).
type sessionRecorder struct {
	http.ResponseWriter
	f    *front
	sum  [32]byte
	done bool
}

func (s *sessionRecorder) bind(status int) {
	if s.done {
		return
	}
	s.done = true
	if id := s.Header().Get(sessionHeader); id != "" && status >= 200 && status < 300 {
		s.f.mu.Lock()
		s.f.sessions[id] = s.sum
		s.f.mu.Unlock()
	}
}

func (s *sessionRecorder) WriteHeader(status int) {
	s.bind(status)
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	s.bind(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

func (s *sessionRecorder) Flush() {
	s.bind(http.StatusOK)
	http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// statusRecorder remembers the response's status.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// refusalLog writes refused requests to the audit log and stderr through
// a token bucket, so a flood of bad requests cannot grow either without
// bound; the next record written says how many were left out.
type refusalLog struct {
	audit  *sandbox.AuditLog
	sb     *sandbox.Sandbox
	stderr io.Writer
	now    func() time.Time

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int64
}

func newRefusalLog(s *tool.ServeSpec, clock func() time.Time) *refusalLog {
	if clock == nil {
		clock = time.Now
	}
	return &refusalLog{audit: s.Audit, sb: s.Sandbox, stderr: s.Stderr, now: clock, tokens: refusalBurst, last: clock()}
}

// allow takes a token from the bucket: whether the refusal is written,
// and how many were dropped since the last one written.
func (l *refusalLog) allow(now time.Time) (bool, int64) {
	if d := now.Sub(l.last); d > 0 {
		l.tokens = min(refusalBurst, l.tokens+d.Seconds()*refusalRate)
		l.last = now
	}
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	n := l.dropped
	l.dropped = 0
	return true, n
}

func (l *refusalLog) note(r *http.Request, status int, rule fserr.Rule, why string) {
	l.mu.Lock()
	defer l.mu.Unlock() // writes are serialised too (stderr may be any writer)
	ok, dropped := l.allow(l.now())
	if !ok {
		return
	}
	if l.audit != nil {
		rec := l.record(time.Now(), rule, why)
		rec.Dropped = dropped
		if err := l.audit.Append(rec); err != nil && l.stderr != nil {
			fmt.Fprintf(l.stderr, "fsbox mcp: audit: %v\n", err)
		}
	}
	if l.stderr != nil {
		more := ""
		if dropped > 0 {
			more = fmt.Sprintf(" (%d more refusals before this one not logged)", dropped)
		}
		fmt.Fprintf(l.stderr, "fsbox mcp: refused %s %s from %s: %d %s: %s%s\n",
			r.Method, strconv.Quote(r.URL.Path), r.RemoteAddr, status, http.StatusText(status), why, more)
	}
}

// record is a refusal's audit record: command mcp-http, verdict denied.
func (l *refusalLog) record(now time.Time, rule fserr.Rule, why string) *sandbox.AuditRecord {
	err := &fserr.Error{Code: fserr.CodeDenied, Rule: rule, Msg: why}
	if l.sb != nil {
		return tool.AuditRecordOf(l.sb.ForCall(), "mcp-http", now, err)
	}
	return &sandbox.AuditRecord{
		Time: now.UTC().Format(time.RFC3339Nano), PID: os.Getpid(), Command: "mcp-http", Paths: []sandbox.AuditPath{},
		Verdict: "denied", Exit: 3, Error: &sandbox.AuditError{Code: fserr.CodeDenied, Rule: rule},
	}
}
