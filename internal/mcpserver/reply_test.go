package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
)

// sdkResult is a result as the SDK encodes it into a response (its
// jsonrpc2 marshalToRaw: an encoder without HTML escaping, around the
// result's own MarshalJSON).
func sdkResult(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// TestEncodeResultLikeSDK: every kind of result fsbox gives is encoded
// byte for byte as the SDK would encode it.
func TestEncodeResultLikeSDK(t *testing.T) {
	structured := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hostile := "a <b> & c\u2028d\u2029e \x00\x1f \"q\" \\ \xff\xfe tail é 日本"
	text := func(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }
	cases := map[string]*mcp.CallToolResult{
		"text and structured": {Content: []mcp.Content{text(`{"path":"a"}`)}, StructuredContent: structured(map[string]any{"path": "a"})},
		"hostile text":        {Content: []mcp.Content{text(hostile)}, StructuredContent: structured(map[string]any{"content": hostile})},
		"empty text":          {Content: []mcp.Content{text("")}, StructuredContent: structured(map[string]any{})},
		"no structured":       {Content: []mcp.Content{text("plain")}},
		"error":               {IsError: true, Content: []mcp.Content{text(`{"error":{"code":"not_found"}}`)}},
		"two blocks":          {Content: []mcp.Content{text("body"), text("a note <x>")}, StructuredContent: structured(map[string]any{"content": "body"})},
		"image":               {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("\x89PNG\r\n\x1a\n<&>"), MIMEType: "image/png"}, text(`{"mime":"image/png"}`)}, StructuredContent: structured(map[string]any{"mime": "image/png"})},
		"audio":               {Content: []mcp.Content{&mcp.AudioContent{Data: []byte{0, 1, 2, 255}, MIMEType: "audio/wav"}, text("{}")}, StructuredContent: structured(map[string]any{})},
		"empty media":         {Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/gif"}}},
		"no content":          {Content: []mcp.Content{}},
		"text with meta":      {Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": "<v>"}}}},
		"annotated text":      {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"structured map":      {Content: []mcp.Content{text("m")}, StructuredContent: map[string]any{"b": "<&>", "a": 1}},
		"result meta":         {Meta: mcp.Meta{"m": 1}, Content: []mcp.Content{text("x")}},
	}
	for name, res := range cases {
		got, err := encodeResult(res)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := sdkResult(t, res); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// recConn is a Connection that records what is written through it.
type recConn struct {
	mu     sync.Mutex
	writes []jsonrpc.Message
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (c *recConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, m)
	return nil
}
func (c *recConn) Close() error      { return nil }
func (c *recConn) SessionID() string { return "" }

// TestReplyWrittenOnce: the wrapper writes a slot's reply itself only for
// the response the SDK writes for a request read and not yet answered,
// without an error, and outside batches; else the SDK's writer writes
// what the SDK gave (with the slot's result in place of the stand-in
// when the response is a result), and a slot is used at most once.
func TestReplyWrittenOnce(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(7))
	result := []byte(`{"content":[{"type":"text","text":"x"}]}`)
	standIn := json.RawMessage(`{"content":[]}`)
	setup := func(batch bool) (*idConn, *recConn, *bytes.Buffer) {
		inner, out := &recConn{}, &bytes.Buffer{}
		c := &idConn{Connection: inner, out: out, batches: new(atomic.Bool), pending: map[jsonrpc.ID]string{}}
		c.batches.Store(batch)
		c.cond = sync.NewCond(&c.mu)
		tok := newReplySlot()
		v, _ := replySlots.Load(tok)
		v.(*replySlot).result.Store(&result)
		c.pending[id] = tok
		return c, inner, out
	}
	ctx := context.Background()

	c, inner, out := setup(false)
	if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: standIn}); err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":7,"result":` + string(result) + "}\n"; out.String() != want || len(inner.writes) != 0 {
		t.Errorf("raw reply: wrote %q and %d through the SDK; want %q", out, len(inner.writes), want)
	}
	// Answered already: the SDK's message as it is, nothing of the slot.
	if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: standIn}); err != nil {
		t.Fatal(err)
	}
	if len(inner.writes) != 1 || string(inner.writes[0].(*jsonrpc.Response).Result) != string(standIn) || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("a second response for the id: %d writes through the SDK, raw %q", len(inner.writes), out)
	}

	// An error response (a cancelled call's): the SDK's, the slot dropped.
	c, inner, out = setup(false)
	tok := c.pending[id]
	errResp := &jsonrpc.Response{ID: id, Error: fmt.Errorf("cancelled")}
	if err := c.Write(ctx, errResp); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || len(inner.writes) != 1 || inner.writes[0] != jsonrpc.Message(errResp) {
		t.Errorf("error response: raw %q, SDK writes %v", out, inner.writes)
	}
	if _, live := replySlots.Load(tok); live {
		t.Error("the slot of an error response is still live")
	}

	// In a batch: the SDK's writer, with the result.
	c, inner, out = setup(true)
	if err := c.Write(ctx, &jsonrpc.Response{ID: id, Result: standIn}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 || len(inner.writes) != 1 || string(inner.writes[0].(*jsonrpc.Response).Result) != string(result) {
		t.Errorf("batch: raw %q, SDK writes %v", out, inner.writes)
	}

	// A done context: nothing written, as the SDK's writer does.
	c, _, out = setup(false)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Write(cctx, &jsonrpc.Response{ID: id, Result: standIn}); err == nil || out.Len() != 0 {
		t.Errorf("done context: err %v, wrote %q", err, out)
	}
}

// TestBatchWatch: a batch is seen wherever a line may begin, in any
// chunking of the stream; a stream of single messages is not.
func TestBatchWatch(t *testing.T) {
	cases := []struct {
		stream string
		batch  bool
	}{
		{`{"a":[1,2]}` + "\n" + `{"b":"[x"}` + "\n", false},
		{`[{"a":1}]` + "\n", true},
		{`{"a":1}` + "\n  \t[{}]\n", true},
		{`{"a":1}` + "\r[{}]\r", true},
		{`{"a":1}` + "\r\n\r\n [{}]", true},
		{`{"a":"x"}` + "\n" + `{"b":["[",1]}` + "\n", false},
	}
	for _, c := range cases {
		for size := 1; size <= len(c.stream); size++ {
			seen := new(atomic.Bool)
			w := &batchWatch{r: &chunked{s: c.stream, n: size}, seen: seen}
			if _, err := io.ReadAll(w); err != nil {
				t.Fatal(err)
			}
			if seen.Load() != c.batch {
				t.Errorf("%q in chunks of %d: batch %v, want %v", c.stream, size, seen.Load(), c.batch)
			}
		}
	}
}

type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

// lineSession is a server session over pipes, driven line by line.
type lineSession struct {
	in  *io.PipeWriter
	out *bufio.Reader
}

func (s *lineSession) roundTrip(t *testing.T, line string, replies int) []string {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range replies {
		l, err := s.out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %s: %v", line, err)
		}
		got = append(got, l)
	}
	return got
}

// countWriter counts the writes that pass through it.
type countWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.w.Write(p)
}

// serveLines connects srv over pipes: wrapped as Serve wraps stdio (raw
// counts the wrapper's own writes), or the SDK's stdio transport alone.
func serveLines(t *testing.T, srv *Server, wrapped bool) (*lineSession, *countWriter) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var tr mcp.Transport = &mcp.IOTransport{Reader: inR, Writer: outW}
	raw := &countWriter{w: outW}
	if wrapped {
		batches := new(atomic.Bool)
		tr = &idTransport{inner: &mcp.IOTransport{Reader: io.NopCloser(&batchWatch{r: inR, seen: batches}), Writer: outW}, out: raw, batches: batches}
	}
	ss, err := srv.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		done := make(chan struct{})
		go func() { ss.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the session did not end")
		}
		outR.Close()
	})
	return &lineSession{in: inW, out: bufio.NewReader(outR)}, raw
}

// TestRepliesByteEqual: over a stream, the replies the wrapper writes are
// byte for byte those the SDK writes without it, for every kind of tool
// result (text, structured, image, audio, error, a reference tool's), for
// ids of both kinds, and in a batch.
func TestRepliesByteEqual(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR<&>"
	h := newHarness(t, setup{noClient: true, files: map[string]string{
		"html.txt": "a <b> & c\u2028 \"q\" é 日本\n",
		"pic.png":  png,
		"tone.wav": "RIFF\x00\x00\x00\x00WAVEfmt ",
		"sub/x.go": "package x\n",
	}})
	ref := New(&tool.ServeSpec{Reg: ops.Registry, Sandbox: h.sb, Profile: "reference", Stderr: io.Discard, Version: "test"})
	const init = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	call := func(id, name string, args map[string]any) string {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	abs := func(p string) string { return h.work + "/" + p }
	for _, tc := range []struct {
		srv   *Server
		calls []string
	}{
		{h.srv, []string{
			call(`1`, "fsbox_read", map[string]any{"path": "html.txt"}),
			call(`"<id & 2>"`, "fsbox_stat", map[string]any{"path": "html.txt"}),
			call(`3`, "fsbox_ls", map[string]any{"path": "."}),
			call(`4`, "fsbox_read", map[string]any{"path": "pic.png"}),
			call(`5`, "fsbox_read", map[string]any{"path": "tone.wav"}),
			call(`6`, "fsbox_read", map[string]any{"path": "missing.txt"}),
			call(`7`, "fsbox_grep", map[string]any{"pattern": "<b>", "paths": []string{"."}}),
			call(`8`, "no_such_tool", map[string]any{}),
			call(`9007199254740993`, "fsbox_find", map[string]any{"dir": "."}),
		}},
		{ref, []string{
			call(`1`, "read_text_file", map[string]any{"path": abs("html.txt")}),
			call(`2`, "list_directory", map[string]any{"path": h.work}),
			call(`3`, "get_file_info", map[string]any{"path": abs("html.txt")}),
			call(`4`, "read_media_file", map[string]any{"path": abs("pic.png")}),
			call(`5`, "read_text_file", map[string]any{"path": abs("missing.txt")}),
			call(`6`, "directory_tree", map[string]any{"path": h.work}),
		}},
	} {
		wrapped, raw := serveLines(t, tc.srv, true)
		plain, _ := serveLines(t, tc.srv, false)
		for _, line := range append([]string{init}, tc.calls...) {
			got, want := wrapped.roundTrip(t, line, 1)[0], plain.roundTrip(t, line, 1)[0]
			if got != want {
				t.Errorf("%s:\n wrapped %s\n the SDK %s", line, got, want)
			}
			if line == init {
				wrapped.roundTrip(t, initialized, 0)
				plain.roundTrip(t, initialized, 0)
			}
		}
		// Tool results (all but the unknown tool's protocol error) were
		// written by the wrapper.
		results := int64(0)
		for _, c := range tc.calls {
			if !strings.Contains(c, "no_such_tool") {
				results++
			}
		}
		if raw.n.Load() != results {
			t.Errorf("the wrapper wrote %d replies itself, want %d", raw.n.Load(), results)
		}
		// A batch (on 2025-03-26, the last version with batches): the
		// replies go through the SDK's writer, and are still the same.
		wrapped, raw = serveLines(t, tc.srv, true)
		plain, _ = serveLines(t, tc.srv, false)
		init0326 := strings.Replace(init, "2025-06-18", "2025-03-26", 1)
		batch := "[" + tc.calls[0] + "," + tc.calls[2] + "]"
		for _, line := range []string{init0326, initialized, batch, tc.calls[1]} {
			n := 1
			if line == initialized {
				n = 0
			}
			got, want := wrapped.roundTrip(t, line, n), plain.roundTrip(t, line, n)
			if strings.Join(got, "") != strings.Join(want, "") {
				t.Errorf("%s:\n wrapped %s\n the SDK %s", line, got, want)
			}
		}
		if raw.n.Load() != 0 {
			t.Errorf("the wrapper wrote %d replies itself after a batch", raw.n.Load())
		}
	}
}

// queueConn is a Connection that reads the messages it is given.
type queueConn struct {
	recConn
	msgs []jsonrpc.Message
}

func (c *queueConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.msgs) == 0 {
		return nil, io.EOF
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}

// TestReplyDuplicateID: a request whose id is already in flight (which
// the SDK refuses) takes no slot, and the first keeps its own.
func TestReplyDuplicateID(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(5))
	call := func() *jsonrpc.Request {
		return &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":{}}`)}
	}
	first, second := call(), call()
	inner := &queueConn{msgs: []jsonrpc.Message{first, second}}
	c := &idConn{Connection: inner, batches: new(atomic.Bool), pending: map[jsonrpc.ID]string{}}
	c.cond = sync.NewCond(&c.mu)
	tokOf := func(r *jsonrpc.Request) string {
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(r.Params, &p); err != nil {
			t.Fatal(err)
		}
		s, _ := p.Meta[replyKey].(string)
		return s
	}
	for range 2 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t1, t2 := tokOf(first), tokOf(second)
	if t1 == "" || c.pending[id] != t1 {
		t.Errorf("the first request's slot %q, pending %q", t1, c.pending[id])
	}
	if _, live := replySlots.Load(t2); live {
		t.Error("the duplicate's slot is live")
	}
	takeReply(t1)
}
