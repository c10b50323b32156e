// Package mcpserver is `fsbox mcp`: the operations of a registry served as
// Model Context Protocol tools on the official Go SDK, every call through
// one sandbox that the policy built once. It is linked only into the
// fsbox-mcp binary (cmd/fsbox-mcp), so the SDK's start-up cost is not
// paid by every fsbox command.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// memoryLimit is the server's soft memory limit (the GC works harder as
// the heap nears it).
const memoryLimit = 64 << 20

// Workers bounds the tool calls that run at once; the others wait for a
// worker (or for their cancellation).
var Workers = max(4, 2*runtime.GOMAXPROCS(0))

// Serve is the cli.Serve of fsbox-mcp: stdio, or streamable HTTP.
func Serve(ctx context.Context, s *tool.ServeSpec) error {
	// A server's live heap is small and its garbage per call large (a
	// result is marshalled three times on its way out): collect less
	// often, within a soft memory limit.
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(memoryLimit)
	srv := New(s)
	if s.HTTP != "" {
		return serveHTTP(ctx, srv, s)
	}
	batches := new(atomic.Bool)
	in := &batchWatch{r: s.Stdin, seen: batches}
	t := &idTransport{inner: &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{s.Stdout}}, out: s.Stdout, batches: batches}
	err := srv.Run(ctx, t)
	if err == io.EOF || ctx.Err() != nil {
		return nil // the host closed our stdin, or the call was cancelled
	}
	return err
}

// Server is one fsbox MCP server: the SDK's server with fsbox's tools.
type Server struct {
	*mcp.Server
	spec  *tool.ServeSpec
	work  chan struct{} // a token per running call (Workers)
	roots *rootSet      // the roots clients announced
	// sessionEnded, when set (HTTP), hears the id of each session that
	// ended.
	sessionEnded func(id string)
	ready        chan struct{} // closed once every tool is added
}

// New builds the server for s: one tool per operation the policy enables
// (native profile), or the reference server's tools (reference profile).
func New(s *tool.ServeSpec) *Server {
	srv := &Server{spec: s, work: make(chan struct{}, Workers), roots: newRootSet(s.Sandbox, s.Stderr)}
	srv.Server = mcp.NewServer(&mcp.Implementation{Name: "fsbox", Title: "fsbox: sandboxed file tools", Version: s.Version}, &mcp.ServerOptions{
		Instructions: instructions(s.Profile),
		// Only what is used is advertised: tools, whose list never
		// changes during a session (no listChanged), and no logging (the
		// server sends no log messages; its notes go to stderr).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		InitializedHandler: func(ctx context.Context, r *mcp.InitializedRequest) {
			srv.roots.initialized(r.Session)
			go func() { // what the session held goes with it
				r.Session.Wait()
				srv.roots.forget(r.Session)
				if srv.sessionEnded != nil {
					srv.sessionEnded(r.Session.ID())
				}
			}()
		},
		RootsListChangedHandler: func(ctx context.Context, r *mcp.RootsListChangedRequest) { srv.roots.changed(r.Session) },
	})
	// The tools are built while the client's handshake runs (their
	// schemas cost most of a start); tools/list and tools/call wait for
	// them. The list is complete before any client sees it, so it never
	// changes in a session.
	srv.ready = make(chan struct{})
	go func() {
		defer close(srv.ready)
		if s.Profile == "reference" {
			srv.addReferenceTools()
		} else {
			srv.addNativeTools()
		}
	}()
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "tools/") {
				select {
				case <-srv.ready:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// addNativeTools adds fsbox_COMMAND for every operation the policy
// enables: generated from the descriptor like every other face (the
// schemas and annotations of `fsbox tools`). A disabled operation is no
// tool, and calling it finds none.
func (srv *Server) addNativeTools() {
	reg, p := srv.spec.Reg, srv.spec.Sandbox.Policy()
	for _, op := range reg.Ops() {
		if op.NoTool || op.Run == nil || ops.CheckCommandIn(reg, p, op.Name) != nil {
			continue
		}
		t := tool.ToolOf(op)
		tool.AddExpect(&t, op, p.Write.RequirePrecondition) // the schema follows the policy the server serves
		destructive, openWorld := t.Destructive, false
		srv.AddTool(&mcp.Tool{
			Name: t.Name, Title: t.Annotations.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			Annotations: &mcp.ToolAnnotations{Title: t.Annotations.Title, ReadOnlyHint: t.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: t.Idempotent, OpenWorldHint: &openWorld},
		}, withReply(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var raw json.RawMessage
			if req.Params != nil {
				raw = req.Params.Arguments
			}
			raw, timeout, terr := tool.SplitTimeout(raw) // every tool's own deadline argument
			var cursor string
			if terr == nil && op.Pages {
				raw, cursor, terr = tool.SplitCursor(raw) // a list tool's resume position
			}
			if terr == nil {
				raw, terr = tool.SplitExpect(op.Name, raw) // the one precondition argument, as the operation's own
			}
			return srv.call(ctx, req, op, timeout, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
				if terr != nil {
					return nil, terr
				}
				in, err := spec.FromJSON(op, raw, tool.FaceProperties(op)...)
				if err != nil {
					return nil, err
				}
				in.Reg, in.Cursor, in.Form = reg, cursor, "mcp"
				if mt := mediaType(op, in); mt != "" {
					return readMedia(ctx, sb, op, in, mt)
				}
				return op.Run(ctx, sb, in)
			})
		}))
	}
}

// instructions are the server's instructions to the model, naming only
// the profile's own tools: fsbox_roots, or the reference's
// list_allowed_directories.
func instructions(profile string) string {
	list := "fsbox_roots"
	if profile == "reference" {
		list = "list_allowed_directories"
	}
	return "File tools inside one sandbox: relative paths resolve against the policy's workdir; only the workdir and the other writable directories (list them with " + list + ") may be written. " +
		"Errors are tool results with isError and {\"error\":{code, message, path, rule}}."
}

// queued, set by tests only, runs as a call is about to wait for a
// worker: the seam that cancels a call while it waits, without a timed
// race.
var queued func()

// call runs one tool call: it waits for a worker, makes the call's view of
// the sandbox (its own audit trail; the client's roots, if any, narrow
// it), runs fn, writes the audit record and shapes the result: the JSON
// object as structuredContent and as one text block, or an isError result.
// fn runs under the call's deadline, from the call's arrival: the policy's
// max_call_seconds, lowered by timeout (the tool's argument) when it is
// above 0. Past it a walk or search gives its part as a result; the
// client's cancel is an error, as before.
func (srv *Server) call(ctx context.Context, req *mcp.CallToolRequest, op *spec.Op, timeout time.Duration, fn func(context.Context, *sandbox.Sandbox) (any, error)) (*mcp.CallToolResult, error) {
	start := time.Now()
	sb, reach := srv.roots.view(ctx, req.Session) // waits for a pending roots/list answer
	fn = reach.confine(op, fn)
	dctx, cancel := context.WithDeadline(ctx, start.Add(sb.Limits().CallTimeout(timeout)))
	defer cancel()
	if p := sb.Policy(); p.HasObjectRoot() { // [store] max_requests ends the call as its deadline does
		dctx = sandbox.WithRequestCap(dctx, p.Store.MaxRequests)
	}
	if queued != nil {
		queued()
	}
	select {
	case srv.work <- struct{}{}:
		defer func() { <-srv.work }()
	case <-dctx.Done():
		// Audited as any other call that failed.
		err := fserr.Errorf(fserr.CodeIO, "", "cancelled before it started")
		if ctx.Err() == nil {
			err = fserr.AsError(dctx.Err()) // the deadline passed in the queue: timeout
		}
		srv.audit(req, op.Name, sb, start, err)
		return toolError(err, srv.spelling(op)), nil
	}
	if req.Params != nil && req.Session != nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			// The client asked for progress: a walk reports its count of
			// entries (no total: a walk does not know it in advance).
			sb.SetProgress(func(n int64) {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: fmt.Sprintf("%d entries walked", n)})
			})
		}
	}
	v, err := srv.guard(ctx, op, sb, func(sb *sandbox.Sandbox) (any, error) { return fn(dctx, sb) })
	srv.audit(req, op.Name, sb, start, err)
	if err != nil {
		return toolError(err, srv.spelling(op)), nil
	}
	var blocks []mcp.Content
	if m, ok := v.(media); ok {
		v, blocks = m.structured, []mcp.Content{m.block}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return toolError(err, srv.spelling(op)), nil
	}
	return &mcp.CallToolResult{Content: append(blocks, &mcp.TextContent{Text: string(b)}), StructuredContent: json.RawMessage(b)}, nil
}

// media is a tool's answer that is an image or audio file: the data in
// its own content block, and the structuredContent (and text block)
// describing it without the data.
type media struct {
	block      mcp.Content
	structured any
}

// mediaType is the MIME type of the image or audio file a native read
// asks for whole (no offset, limit or max-bytes): "" for any other call.
func mediaType(op *spec.Op, in *spec.Input) string {
	if op.Name != "read" || in.IsSet("offset") || in.IsSet("limit") || in.IsSet("max-bytes") {
		return ""
	}
	mt := mimeTypes[strings.ToLower(filepath.Ext(in.String("path")))]
	if !strings.HasPrefix(mt, "image/") && !strings.HasPrefix(mt, "audio/") {
		return ""
	}
	return mt
}

// readMedia reads an image or audio file whole (as read --encoding
// base64 does: within max_read_bytes, never a page of max_result_bytes:
// part of an image is no image, and the data is a block of its own, not
// the JSON result) and answers with an image or audio content block;
// structuredContent is the read result without the data (content ""),
// with mime: the bytes are not sent twice.
func readMedia(ctx context.Context, sb *sandbox.Sandbox, op *spec.Op, in *spec.Input, mt string) (any, error) {
	in.Set("encoding", "base64")
	o := ops.ReadInput(in)
	o.Whole = true
	res, err := ops.Read(ctx, sb, o)
	if err != nil {
		return nil, err
	}
	if res.Unchanged {
		return &ops.ReadUnchanged{Path: res.Path, Unchanged: true, SHA256: *res.SHA256}, nil
	}
	r := &res
	data := append([]byte(nil), r.Raw...)
	var block mcp.Content = &mcp.ImageContent{Data: data, MIMEType: mt}
	if strings.HasPrefix(mt, "audio/") {
		block = &mcp.AudioContent{Data: data, MIMEType: mt}
	}
	described := struct {
		ops.ReadResult
		Mime string `json:"mime"`
	}{*r, mt}
	described.Content = ""
	return media{block: block, structured: described}, nil
}

// guard runs fn with the operation's switch checked (a disabled operation
// is refused even if a client calls a name it was not offered), the
// context's error for a call the client cancelled (ctx is the client's:
// fn's own deadline passing gives a part, or timeout, not this), and a
// panic turned into io.
func (srv *Server) guard(ctx context.Context, op *spec.Op, sb *sandbox.Sandbox, fn func(*sandbox.Sandbox) (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fserr.Errorf(fserr.CodeIO, "", "internal error: %v", r)
		}
	}()
	if err := ops.CheckCommandIn(srv.spec.Reg, sb.Policy(), op.Name); err != nil {
		return nil, err
	}
	v, err = fn(sb)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == context.Canceled || (err == context.DeadlineExceeded && ctx.Err() != nil) {
		err = fserr.Errorf(fserr.CodeIO, "", "cancelled: %v", err)
	}
	return v, err
}

// toolError is an error as a tool result: isError, and the CLI's error
// object as the text.
func toolError(err error, spell func(*fserr.Hint) string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(tool.ErrorJSON(err, spell))}}}
}

// spelling names a hint's option as op's tool takes it: its argument
// ("force": true), or nothing where the tool has no such argument (the
// reference profile's tools have none of fsbox's options), so the hint
// says what to do instead; and a setting as the host that started the
// server set it up (settingWords), in either profile.
func (srv *Server) spelling(op *spec.Op) func(*fserr.Hint) string {
	return func(h *fserr.Hint) string {
		if h.Setting != "" {
			return settingWords(h.Setting)
		}
		if srv.spec.Profile == "reference" {
			return ""
		}
		if tool.TakesExpect(op.Name) {
			// The tool's one precondition argument stands for these.
			switch h.Option {
			case "expect-sha256":
				return fmt.Sprintf("%q", tool.ExpectProperty)
			case "expect-absent":
				return fmt.Sprintf("%q: \"absent\"", tool.ExpectProperty)
			}
		}
		for _, o := range op.Options {
			if o.Name == h.Option && !o.CLIOnly {
				if o.Type == spec.Bool {
					return fmt.Sprintf("%q: true", spec.Property(o.Name))
				}
				return fmt.Sprintf("%q", spec.Property(o.Name))
			}
		}
		return ""
	}
}

// audit appends the call's record (as the CLI does for a command), with
// the JSON-RPC request id.
func (srv *Server) audit(req *mcp.CallToolRequest, command string, sb *sandbox.Sandbox, start time.Time, err error) {
	if srv.spec.Audit == nil {
		return
	}
	rec := tool.AuditRecordOf(sb, command, start, err)
	if req.Params != nil {
		rec.RequestID = requestIDOf(req.Params.Meta)
	}
	if aerr := srv.spec.Audit.Append(rec); aerr != nil {
		fmt.Fprintf(srv.spec.Stderr, "fsbox mcp: audit: %v\n", aerr)
	}
}

// logf writes one line to the server's stderr (a host shows it in its
// server log).
func (srv *Server) logf(format string, a ...any) {
	w := srv.spec.Stderr
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "fsbox mcp: "+format+"\n", a...)
}
