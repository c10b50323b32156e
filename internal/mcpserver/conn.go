package mcpserver

// The connection wrapper: fsbox's layer between the SDK and a stream, on
// the SDK's public Transport and Connection interfaces. It does three
// things the SDK leaves to a transport:
//
//   - It stamps each tools/call with its JSON-RPC id (the SDK does not
//     hand a tool handler the id, which the audit record carries) and a
//     reply slot, under the request's _meta.
//   - It writes tool replies. The SDK would encode a result several times
//     over on its way out (the text block inside the result, the result
//     inside the response, the response on the wire, each pass re-reading
//     JSON that is encoded already). Instead a handler encodes its result
//     once into its slot (replied) and gives the SDK an empty stand-in;
//     when the SDK writes the stand-in's response, the wrapper writes the
//     envelope around the slot's bytes: the same bytes the SDK would have
//     written (TestRepliesByteEqual). It does so only for a response the
//     SDK itself writes, once per request read, and never for one the SDK
//     turned into an error (a cancelled call's, say).
//   - It holds back the end of the input until every request read has
//     been answered: a host that writes its calls and closes stdin still
//     gets every reply.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// idMetaKey holds a tools/call's JSON-RPC id in its _meta.
	idMetaKey = "fsbox/request_id"
	// replyKey holds a tools/call's reply slot token in its _meta.
	replyKey = "fsbox/reply"
)

func requestIDOf(m mcp.Meta) any {
	if m == nil {
		return nil
	}
	return m[idMetaKey]
}

// A replySlot holds a tool's result, encoded once by its handler, until
// the wrapper writes it.
type replySlot struct{ result atomic.Pointer[[]byte] }

// replySlots are the slots of the requests read and not yet answered, by
// token. A token is random (a client that forges one in its _meta has it
// replaced on stdio, stripped over HTTP, and could not guess a live one).
var replySlots sync.Map

func newReplySlot() string {
	for {
		tok := strconv.FormatUint(rand.Uint64(), 36)
		if _, taken := replySlots.LoadOrStore(tok, &replySlot{}); !taken {
			return tok
		}
	}
}

// takeReply removes tok's slot and returns its result (nil: none).
func takeReply(tok string) []byte {
	if tok == "" {
		return nil
	}
	v, ok := replySlots.LoadAndDelete(tok)
	if !ok {
		return nil
	}
	if p := v.(*replySlot).result.Load(); p != nil {
		return *p
	}
	return nil
}

// withReply wraps a tool handler: its result goes through replied.
func withReply(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := h(ctx, req)
		if err != nil || res == nil {
			return res, err
		}
		return replied(req, res), nil
	}
}

// replied is res as the SDK gets it: when the call came through the
// wrapper (its _meta names a live reply slot), res encoded into the slot
// and an empty stand-in for the SDK to pass along; else res itself.
func replied(req *mcp.CallToolRequest, res *mcp.CallToolResult) *mcp.CallToolResult {
	if req.Params == nil {
		return res
	}
	tok, _ := req.Params.Meta[replyKey].(string)
	v, ok := replySlots.Load(tok)
	if !ok {
		return res
	}
	b, err := encodeResult(res)
	if err != nil {
		return res
	}
	v.(*replySlot).result.Store(&b)
	return &mcp.CallToolResult{Content: []mcp.Content{}}
}

// encodeResult is res as the SDK encodes a result into a response: the
// SDK's MarshalJSON of a CallToolResult (json.Marshal's escaping, fields
// in its order), which the SDK's wire encoder then copies unchanged. Plain
// text blocks and a structuredContent that is JSON fsbox encoded already
// are written as they stand, without encoding them a second time;
// anything else is marshalled as the SDK would.
func encodeResult(res *mcp.CallToolResult) ([]byte, error) {
	raw, rawOK := res.StructuredContent.(json.RawMessage)
	if len(res.Meta) > 0 || res.InputRequests != nil || res.RequestState != "" || (res.StructuredContent != nil && !rawOK) {
		return json.Marshal(res)
	}
	n := len(raw) + 64
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			n += len(t.Text) + len(t.Text)/8 + 32
		}
	}
	b := make([]byte, 0, n)
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if t, ok := c.(*mcp.TextContent); ok && len(t.Meta) == 0 && t.Annotations == nil {
			s, err := json.Marshal(t.Text)
			if err != nil {
				return nil, err
			}
			b = append(b, `{"type":"text","text":`...)
			b = append(b, s...)
			b = append(b, '}')
			continue
		}
		cb, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		b = append(b, cb...)
	}
	b = append(b, ']')
	if res.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, raw...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// idTransport is the wrapper's Transport. out, when set, is the stream
// the inner transport writes to, where the wrapper writes replies itself;
// batches, when set, says a JSON-RPC batch was read (batchWatch), after
// which replies go through the SDK's writer, which completes batches.
type idTransport struct {
	inner   mcp.Transport
	out     io.Writer
	batches *atomic.Bool
}

func (t *idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ic := &idConn{Connection: c, out: t.out, batches: t.batches, pending: map[jsonrpc.ID]string{}}
	if ic.batches == nil {
		ic.batches = new(atomic.Bool)
	}
	ic.cond = sync.NewCond(&ic.mu)
	return ic, nil
}

type idConn struct {
	mcp.Connection
	out     io.Writer
	batches *atomic.Bool
	wmu     sync.Mutex // orders the wrapper's writes with the SDK's
	mu      sync.Mutex
	cond    *sync.Cond
	pending map[jsonrpc.ID]string // requests read and not yet answered: their reply slot's token, or ""
}

func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == io.EOF {
		c.mu.Lock()
		for len(c.pending) > 0 && ctx.Err() == nil {
			c.cond.Wait()
		}
		c.mu.Unlock()
		return m, err
	}
	r, ok := m.(*jsonrpc.Request)
	if !ok || err != nil || !r.ID.IsValid() {
		return m, err
	}
	tok := ""
	if r.Method == "tools/call" {
		tok = newReplySlot()
		var stamped bool
		if r.Params, stamped = withRequestID(r.Params, r.ID.Raw(), tok); !stamped {
			takeReply(tok)
			tok = ""
		}
	}
	c.mu.Lock()
	if _, dup := c.pending[r.ID]; dup {
		// An id already in flight: the SDK refuses this request (with no
		// id), and the first keeps its slot.
		takeReply(tok)
	} else {
		c.pending[r.ID] = tok
	}
	c.mu.Unlock()
	return m, err
}

func (c *idConn) Write(ctx context.Context, m jsonrpc.Message) error {
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.Connection.Write(ctx, m)
	}
	c.mu.Lock()
	tok, pending := c.pending[r.ID]
	c.mu.Unlock()
	result := takeReply(tok)
	c.wmu.Lock()
	var err error
	switch {
	case result == nil || r.Error != nil:
		err = c.Connection.Write(ctx, m)
	case pending && c.out != nil && !c.batches.Load():
		err = writeReply(ctx, c.out, r.ID, result)
	default:
		// The SDK's writer (no stream of ours, or a batch to complete),
		// with the result in place of the stand-in.
		rr := *r
		rr.Result = result
		err = c.Connection.Write(ctx, &rr)
	}
	c.wmu.Unlock()
	c.mu.Lock()
	delete(c.pending, r.ID)
	c.cond.Broadcast()
	c.mu.Unlock()
	return err
}

// Close drops the slots of requests left unanswered.
func (c *idConn) Close() error {
	c.mu.Lock()
	for id, tok := range c.pending {
		takeReply(tok)
		delete(c.pending, id)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	return c.Connection.Close()
}

// writeReply writes a response's line as the SDK's stream writer does:
// nothing once ctx is done; the id as its wire encoder writes it (no
// HTML escaping), the result as it stands, a newline.
func writeReply(ctx context.Context, w io.Writer, id jsonrpc.ID, result []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var idb bytes.Buffer
	enc := json.NewEncoder(&idb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(id.Raw()); err != nil {
		return err
	}
	line := make([]byte, 0, len(result)+idb.Len()+32)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, bytes.TrimRight(idb.Bytes(), "\n")...)
	line = append(line, `,"result":`...)
	line = append(line, result...)
	line = append(line, "}\n"...)
	_, err := w.Write(line)
	return err
}

// withRequestID returns a tools/call's params with id under _meta's
// idMetaKey and tok under replyKey (none when tok is ""; a client's own
// is removed), and whether it could: params that are not an object are
// left as they are.
func withRequestID(params json.RawMessage, id any, tok string) (json.RawMessage, bool) {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params, false
	}
	meta, _ := p["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[idMetaKey] = id
	delete(meta, replyKey)
	if tok != "" {
		meta[replyKey] = tok
	}
	p["_meta"] = meta
	b, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return b, true
}

// batchWatch reads a stream of JSON-RPC messages for the SDK, and sets
// seen when a message is a batch (a JSON array): one begins a line (after
// a newline or carriage return, and blanks). A line inside a message
// printed over several lines may look like one too; that only sends
// replies through the SDK's writer, which is always right.
type batchWatch struct {
	r       io.Reader
	seen    *atomic.Bool
	midLine bool
}

func (w *batchWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	b := p[:n]
	for len(b) > 0 && !w.seen.Load() {
		if !w.midLine {
			i := 0
			for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
				i++
			}
			if b = b[i:]; len(b) == 0 {
				break
			}
			if b[0] == '[' {
				w.seen.Store(true)
				break
			}
			w.midLine = true
		}
		i := bytes.IndexByte(b, '\n')
		end := len(b)
		if i >= 0 {
			end = i
		}
		if j := bytes.IndexByte(b[:end], '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			break
		}
		b, w.midLine = b[i+1:], false
	}
	return n, err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
