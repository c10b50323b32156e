package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// The reference profile: the tool names, arguments and result text of the
// reference MCP filesystem server, each tool mapped onto an fsbox
// operation and run through the same sandbox (srv.call) as the native
// tools. A tool whose operation the policy switches off is not offered.
// Results are text, as the reference gives them, with {"content": text}
// as structuredContent; errors are isError results with fsbox's error
// object. The README's profile table lists where fsbox is stricter.

// refTool is one reference tool.
type refTool struct {
	name, op    string // the tool, and the fsbox operation it runs as
	title, desc string
	props       map[string]any // the input schema's properties
	required    []string
	media       bool // the result is media content, not text
	run         func(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error)
}

// refOut is a reference tool's answer: text (the usual), or content
// blocks with the structuredContent to go with them.
type refOut struct {
	text       string
	content    []mcp.Content
	structured any
	note       string // said in a second text block: a cap that cut the answer
}

var (
	strProp     = map[string]any{"type": "string"}
	strListProp = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	textOutput  = map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []string{"content"}}
)

func described(p map[string]any, desc string) map[string]any {
	out := map[string]any{"description": desc}
	for k, v := range p {
		out[k] = v
	}
	return out
}

// refTools are the reference server's tools, in its order.
func refTools() []refTool {
	pathOnly := map[string]any{"path": strProp}
	readProps := map[string]any{"path": strProp,
		"head": map[string]any{"type": "number", "description": "If provided, returns only the first N lines of the file"},
		"tail": map[string]any{"type": "number", "description": "If provided, returns only the last N lines of the file"}}
	return []refTool{
		// read_file: the reference still lists it, deprecated, as
		// read_text_file under its old name.
		{name: "read_file", op: "read", title: "Read File (deprecated)",
			desc:  "Read the complete contents of a file as text. Deprecated: use read_text_file, which this is exactly (the same arguments and answer).",
			props: readProps, required: []string{"path"}, run: refReadText},
		{name: "read_text_file", op: "read", title: "Read Text File",
			desc: "Read a file as text. head gives only its first N lines, tail only its last N (not both). " +
				"Line ends and a byte order mark are kept as the file has them; a file over the policy's max_read_bytes is refused unless head or tail is given. Only works within the allowed directories.",
			props: readProps, required: []string{"path"}, run: refReadText},
		{name: "read_media_file", op: "read", title: "Read Media File", media: true,
			desc:  "Read an image or audio file; returns it as base64 data with its MIME type. Files over the policy's max_read_bytes are refused. Only works within the allowed directories.",
			props: pathOnly, required: []string{"path"}, run: refReadMedia},
		{name: "read_multiple_files", op: "read", title: "Read Multiple Files",
			desc: "Read several files at once. Each file's content is returned with its path as a reference; a file that cannot be read gives its error in its place and does not stop the others. Only works within the allowed directories.",
			props: map[string]any{"paths": described(map[string]any{"type": "array", "items": strProp, "minItems": 1},
				"Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.")},
			required: []string{"paths"}, run: refReadMultiple},
		{name: "write_file", op: "write", title: "Write File",
			desc:  "Create a new file or replace an existing file's content, atomically (missing parent directories are created). It overwrites without warning. Only works within the writable directories.",
			props: map[string]any{"path": strProp, "content": strProp}, required: []string{"path", "content"}, run: refWrite},
		{name: "edit_file", op: "edit", title: "Edit File",
			desc: "Make exact-text edits to a text file: each oldText must occur exactly once (text occurring more than once is refused as ambiguous: give more context). " +
				"All edits apply together or not at all; CRLF line ends and bytes outside the edits are kept. Returns a git-style unified diff; dryRun shows it without changing the file. Only works within the writable directories.",
			props: map[string]any{"path": strProp,
				"edits": map[string]any{"type": "array", "items": map[string]any{"type": "object",
					"properties": map[string]any{
						"oldText": described(strProp, "Text to search for - must match exactly"),
						"newText": described(strProp, "Text to replace with")},
					"required": []string{"oldText", "newText"}}},
				"dryRun": map[string]any{"type": "boolean", "default": false, "description": "Preview changes using git-style diff format"}},
			required: []string{"path", "edits"}, run: refEdit},
		{name: "create_directory", op: "mkdir", title: "Create Directory",
			desc:  "Create a directory and any missing parents; an existing directory is no error. Only works within the writable directories.",
			props: pathOnly, required: []string{"path"}, run: refMkdir},
		{name: "list_directory", op: "ls", title: "List Directory",
			desc:  "List a directory's entries, one a line, each prefixed [FILE] or [DIR]. Only works within the allowed directories.",
			props: pathOnly, required: []string{"path"}, run: refList},
		{name: "list_directory_with_sizes", op: "ls", title: "List Directory with Sizes",
			desc: "List a directory's entries with their sizes, [FILE] or [DIR] first, sorted by name or (sortBy size) largest first, then the totals. Only works within the allowed directories.",
			props: map[string]any{"path": strProp,
				"sortBy": map[string]any{"type": "string", "enum": []string{"name", "size"}, "default": "name", "description": "Sort entries by name or size"}},
			required: []string{"path"}, run: refListSizes},
		{name: "directory_tree", op: "find", title: "Directory Tree",
			desc: "Get a recursive tree of files and directories as JSON: each entry has name, type (file or directory) and, for a directory, children (maybe empty). " +
				"excludePatterns are globs of paths to leave out (an excluded directory is not entered). Indented with 2 spaces. Only works within the allowed directories.",
			props: map[string]any{"path": strProp, "excludePatterns": strListProp}, required: []string{"path"}, run: refTree},
		{name: "move_file", op: "mv", title: "Move File",
			desc:  "Move or rename a file or directory. It fails if the destination exists. Both paths must lie within the writable directories.",
			props: map[string]any{"source": strProp, "destination": strProp}, required: []string{"source", "destination"}, run: refMove},
		{name: "search_files", op: "find", title: "Search Files",
			desc: "Find files and directories below path whose path matches a glob pattern (a pattern without '/' matches the base name at any depth, as in '*.go'; '**' crosses directories). " +
				"excludePatterns leave paths out. Returns the full paths, one a line. Only works within the allowed directories.",
			props:    map[string]any{"path": strProp, "pattern": strProp, "excludePatterns": strListProp},
			required: []string{"path", "pattern"}, run: refSearch},
		{name: "get_file_info", op: "stat", title: "Get File Info",
			desc:  "Get a file's or directory's metadata: size, created, modified and accessed times, type and permissions, as key: value lines. A symlink is described as itself. Only works within the allowed directories.",
			props: pathOnly, required: []string{"path"}, run: refFileInfo},
		{name: "list_allowed_directories", op: "roots", title: "List Allowed Directories",
			desc:  "List the directories this server may reach: the writable ones first (the workdir, then the other writable directories), then the read-only roots.",
			props: map[string]any{}, run: refAllowed},
	}
}

// addReferenceTools adds the reference filesystem server's tools whose
// fsbox operations the policy enables.
func (srv *Server) addReferenceTools() {
	reg, p := srv.spec.Reg, srv.spec.Sandbox.Policy()
	for _, t := range refTools() {
		op, ok := reg.Lookup(t.op)
		if !ok || ops.CheckCommandIn(reg, p, t.op) != nil {
			continue
		}
		schema := map[string]any{"type": "object", "properties": t.props}
		if len(t.required) > 0 {
			schema["required"] = t.required
		}
		readOnly, destructive, openWorld := op.ReadOnly(), op.Class == spec.Destructive, false
		tool := &mcp.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: readOnly, DestructiveHint: &destructive,
				IdempotentHint: readOnly || op.Idempotent, OpenWorldHint: &openWorld}}
		tool.OutputSchema = textOutput
		if t.media {
			tool.OutputSchema = mediaOutput
		}
		srv.AddTool(tool, withReply(srv.refHandler(t, op)))
	}
}

// refHandler runs a reference tool through srv.call and gives its answer
// the reference's shape.
func (srv *Server) refHandler(t refTool, op *spec.Op) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		var out refOut
		res, err := srv.call(ctx, req, op, 0, func(ctx context.Context, sb *sandbox.Sandbox) (any, error) {
			a, err := parseRefArgs(raw)
			if err != nil {
				return nil, err
			}
			if err := a.need(t.required...); err != nil {
				return nil, err
			}
			if out, err = t.run(ctx, sb, a); err != nil {
				return nil, err
			}
			if out.structured == nil {
				out.structured = map[string]any{"content": out.text}
			}
			return out.structured, nil
		})
		if err != nil || res == nil || res.IsError {
			return res, err
		}
		if out.content != nil {
			res.Content = out.content
		} else {
			res.Content = []mcp.Content{&mcp.TextContent{Text: out.text}}
		}
		if out.note != "" {
			res.Content = append(res.Content, &mcp.TextContent{Text: out.note})
		}
		return res, nil
	}
}

// runOp runs the fsbox operation name through its descriptor's Run, the
// input set by the names the descriptor declares (refInput): the
// reference tools map their arguments onto the input the native tools
// and the command line build, so every face runs the one code path of
// each operation. Where the reference shapes a streaming operation's
// items itself, it runs that Run with the operation's own sink
// (ops.SliceLines, ops.FindPaths).
func runOp(ctx context.Context, sb *sandbox.Sandbox, name string, args map[string]any) (spec.Result, error) {
	op, in, err := refInput(name, args)
	if err != nil {
		return nil, err
	}
	return op.Run(ctx, sb, in)
}

// refInput is the input of the fsbox operation name, set by the names its
// descriptor declares.
func refInput(name string, args map[string]any) (*spec.Op, *spec.Input, error) {
	op, ok := ops.Registry.Lookup(name)
	if !ok {
		return nil, nil, fserr.Errorf(fserr.CodeIO, "", "internal error: no operation %s", name)
	}
	in := spec.NewInput(op)
	for k, v := range args {
		if raw, ok := v.(json.RawMessage); ok {
			if err := in.SetJSON(k, raw); err != nil {
				return nil, nil, err
			}
			continue
		}
		in.Set(k, v)
	}
	if err := in.Check(); err != nil {
		return nil, nil, err
	}
	return op, in, nil
}

// readWhole runs read with args as the reference's read tools answer: the
// whole selection up to max_read_bytes, never a page of max_result_bytes
// (a host that swaps servers must not get silently shorter files).
// A file over the cap is too_large with advice in the profile's own
// words (advice: what the calling tool offers; "" for nothing).
func readWhole(ctx context.Context, sb *sandbox.Sandbox, args map[string]any, advice string) (*ops.ReadResult, error) {
	_, in, err := refInput("read", args)
	if err != nil {
		return nil, err
	}
	o := ops.ReadInput(in)
	o.Whole = true
	r, err := ops.Read(ctx, sb, o)
	if err != nil {
		return nil, refAdvice(err, advice)
	}
	return &r, nil
}

// refAdvice is err with read's advice on a file over the cap (pages with
// offset and limit, arguments the reference's tools lack) replaced by
// advice in the profile's words, or left out.
func refAdvice(err error, advice string) error {
	e := fserr.AsError(err)
	msg, ok := strings.CutSuffix(e.Msg, ": "+ops.ReadPagesAdvice)
	if e.Code != fserr.CodeTooLarge || !ok {
		return err
	}
	if advice != "" {
		msg += ": " + advice
	}
	c := *e
	c.Msg = msg
	return &c
}

// The reference tools' advice for a file over max_read_bytes.
const (
	headTailAdvice = "read a part of it with head or tail"
	textToolAdvice = "read a part of it with read_text_file's head or tail"
)

// sliceLines runs slice with args, each line sent to sink as the file
// has it.
func sliceLines(ctx context.Context, sb *sandbox.Sandbox, args map[string]any, sink ops.LineSink) error {
	_, in, err := refInput("slice", args)
	if err != nil {
		return err
	}
	_, err = ops.SliceLines(ctx, sb, in, sink)
	return err
}

// findPaths runs find with args (without long), each path found and its
// type sent to sink.
func findPaths(ctx context.Context, sb *sandbox.Sandbox, args map[string]any, sink ops.PathSink) (ops.FindResult, error) {
	_, in, err := refInput("find", args)
	if err != nil {
		return ops.FindResult{}, err
	}
	return ops.FindPaths(ctx, sb, in, sink)
}

// refArgs are a call's arguments, decoded by name.
type refArgs map[string]json.RawMessage

func parseRefArgs(raw json.RawMessage) (refArgs, error) {
	a := refArgs{}
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fserr.Errorf(fserr.CodeUsage, "", "the arguments must be a JSON object: %v", err)
	}
	return a, nil
}

func (a refArgs) has(name string) bool {
	v, ok := a[name]
	return ok && string(v) != "null"
}

func (a refArgs) need(names ...string) error {
	for _, n := range names {
		if !a.has(n) {
			return fserr.Errorf(fserr.CodeUsage, "", "the argument %s is required", n)
		}
	}
	return nil
}

// get decodes argument name into v (left alone when the argument is
// absent).
func (a refArgs) get(name string, v any) error {
	if !a.has(name) {
		return nil
	}
	if err := json.Unmarshal(a[name], v); err != nil {
		return fserr.Errorf(fserr.CodeUsage, "", "the argument %s: %v", name, err)
	}
	return nil
}

func (a refArgs) str(name string) (string, error) {
	var s string
	return s, a.get(name, &s)
}

// count decodes a line count: a whole number, 0 or more.
func (a refArgs) count(name string) (*int64, error) {
	if !a.has(name) {
		return nil, nil
	}
	var f float64
	if err := a.get(name, &f); err != nil {
		return nil, err
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return nil, fserr.Errorf(fserr.CodeUsage, "", "the argument %s must be a whole number, 0 or more, got %v", name, f)
	}
	n := int64(f)
	return &n, nil
}

func refReadText(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	head, err := a.count("head")
	if err != nil {
		return refOut{}, err
	}
	tail, err := a.count("tail")
	if err != nil {
		return refOut{}, err
	}
	// As the reference tests them (JavaScript's truthiness): a head or
	// tail of 0 is one not given, so {head: 0} reads the whole file, and
	// {head: 0, tail: 5} is tail 5.
	if head != nil && *head == 0 {
		head = nil
	}
	if tail != nil && *tail == 0 {
		tail = nil
	}
	switch {
	case head != nil && tail != nil:
		return refOut{}, fserr.Errorf(fserr.CodeUsage, p, "give head or tail, not both")
	case tail != nil:
		var b strings.Builder
		start := -*tail
		err := sliceLines(ctx, sb, map[string]any{"path": p, "start": start}, func(l []byte) error { b.Write(l); return nil })
		if err != nil {
			return refOut{}, err
		}
		return refOut{text: validText(b.String())}, nil
	}
	args := map[string]any{"path": p}
	if head != nil {
		args["limit"] = *head
	}
	r, err := readWhole(ctx, sb, args, headTailAdvice)
	if err != nil {
		return refOut{}, err
	}
	out := refOut{text: r.Content}
	if r.BOM {
		out.text = "\uFEFF" + out.text // kept, as a UTF-8 reader that does not strip it gives it
	}
	if r.Truncated {
		at := r.Limit
		if r.Limit == "max_read_bytes" {
			at = fmt.Sprintf("max_read_bytes = %d bytes", sb.Limits().MaxReadBytes)
		}
		out.note = fmt.Sprintf("[fsbox: the text stops at %s, after %d lines; read the rest with tail]", at, r.Lines)
	}
	return out, nil
}

// validText is s with invalid UTF-8 replaced (MCP text is UTF-8).
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// mimeTypes are the media types read_media_file knows by extension.
var mimeTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".bmp": "image/bmp", ".svg": "image/svg+xml", ".ico": "image/x-icon", ".tif": "image/tiff", ".tiff": "image/tiff",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
	".aac": "audio/aac", ".opus": "audio/opus", ".weba": "audio/webm",
}

func refReadMedia(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	r, err := readWhole(ctx, sb, map[string]any{"path": p, "encoding": "base64"}, "")
	if err != nil {
		return refOut{}, err
	}
	mt, ok := mimeTypes[strings.ToLower(filepath.Ext(p))]
	if !ok {
		mt = "application/octet-stream"
	}
	data := append([]byte(nil), r.Raw...)
	// structuredContent is the reference's: {content: [the block]}, the
	// block as the content holds it (base64 data).
	var c mcp.Content
	var item map[string]any
	switch {
	case strings.HasPrefix(mt, "image/"):
		c = &mcp.ImageContent{Data: data, MIMEType: mt}
		item = map[string]any{"type": "image", "data": r.Content, "mimeType": mt}
	case strings.HasPrefix(mt, "audio/"):
		c = &mcp.AudioContent{Data: data, MIMEType: mt}
		item = map[string]any{"type": "audio", "data": r.Content, "mimeType": mt}
	default:
		uri := fileURI(sb, r.Path)
		c = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mt, Blob: data}}
		item = map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "mimeType": mt, "blob": r.Content}}
	}
	return refOut{content: []mcp.Content{c}, structured: map[string]any{"content": []any{item}}}, nil
}

// mediaOutput is read_media_file's output schema, as the reference
// declares it.
var mediaOutput = map[string]any{"type": "object", "required": []string{"content"}, "properties": map[string]any{
	"content": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "required": []string{"type", "data", "mimeType"}, "properties": map[string]any{
			"type": map[string]any{"type": "string", "enum": []string{"image", "audio"}}, "data": strProp, "mimeType": strProp}},
		map[string]any{"type": "object", "required": []string{"type", "resource"}, "properties": map[string]any{
			"type": map[string]any{"type": "string", "const": "resource"},
			"resource": map[string]any{"type": "object", "required": []string{"uri", "blob"}, "properties": map[string]any{
				"uri": strProp, "mimeType": strProp, "blob": strProp}}}},
	}}}}}

// absPath is a displayed path made absolute (a workdir path is shown
// relative to the workdir).
func absPath(sb *sandbox.Sandbox, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(sb.Workdir(), p)
}

func fileURI(sb *sandbox.Sandbox, p string) string {
	return "file://" + filepath.ToSlash(absPath(sb, p))
}

func refReadMultiple(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	var paths []string
	if err := a.get("paths", &paths); err != nil {
		return refOut{}, err
	}
	if len(paths) == 0 {
		return refOut{}, fserr.Errorf(fserr.CodeUsage, "", "paths must name at least one file")
	}
	if max := sb.Limits().Items(); int64(len(paths)) > max {
		return refOut{}, fserr.Errorf(fserr.CodeUsage, "", "%d paths is over max_results = %d", len(paths), max)
	}
	parts := make([]string, len(paths))
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return refOut{}, err
		}
		r, err := readWhole(ctx, sb, map[string]any{"path": p}, textToolAdvice)
		if err != nil {
			parts[i] = fmt.Sprintf("%s: Error - %s", p, fserr.AsError(err).Error())
			continue
		}
		parts[i] = p + ":\n" + r.Content + "\n"
	}
	return refOut{text: strings.Join(parts, "\n---\n")}, nil
}

func refWrite(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	content, err := a.str("content")
	if err != nil {
		return refOut{}, err
	}
	if _, err := runOp(ctx, sb, "write", map[string]any{"path": p, "content": content}); err != nil {
		return refOut{}, err
	}
	return refOut{text: "Successfully wrote to " + p}, nil
}

func refEdit(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	var edits []struct {
		OldText *string `json:"oldText"`
		NewText *string `json:"newText"`
	}
	if err := a.get("edits", &edits); err != nil {
		return refOut{}, err
	}
	var dry bool
	if err := a.get("dryRun", &dry); err != nil {
		return refOut{}, err
	}
	type edit struct {
		Old string `json:"old"`
		New string `json:"new"`
	}
	list := []edit{} // edits: [] is an empty diff, as the reference gives it
	for i, e := range edits {
		if e.OldText == nil || e.NewText == nil {
			return refOut{}, fserr.Errorf(fserr.CodeUsage, p, "edit %d needs oldText and newText", i+1)
		}
		list = append(list, edit{*e.OldText, *e.NewText})
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return refOut{}, err
	}
	// As the reference applies them: one after another, falling back to
	// a line-by-line match that ignores indentation (edit's own options).
	// The old and new text come back for the reference's diff.
	v, err := runOp(ctx, sb, "edit", map[string]any{"path": p, "dry-run": dry, "edits": json.RawMessage(raw),
		"sequential": true, "loose-indent": true})
	if err != nil {
		return refOut{}, err
	}
	r := v.(*ops.EditResult)
	return refOut{text: fenced(refDiff(absPath(sb, r.Path), r.Before(), r.After()))}, nil
}

// refDiff is the reference server's diff of an edit: jsdiff's
// createTwoFilesPatch(path, path, old, new, "original", "modified") over
// the texts with CRLF read as LF, four lines of context, every hunk
// header with both counts, "\ No newline at end of file" after a last
// line without one; no hunk at all when nothing changed.
func refDiff(path, old, new string) string {
	old, new = validText(strings.ReplaceAll(old, "\r\n", "\n")), validText(strings.ReplaceAll(new, "\r\n", "\n"))
	var b strings.Builder
	b.WriteString("Index: " + path + "\n" + strings.Repeat("=", 67) + "\n")
	b.WriteString("--- " + path + "\toriginal\n+++ " + path + "\tmodified\n")
	type line struct {
		kind byte // ' ', '-', '+'
		text string
	}
	oldLines := splitKeep(old)
	var lines []line
	at := 0 // old lines consumed
	offset := 0
	for _, e := range udiff.Lines(old, new) {
		for at < len(oldLines) && offset < e.Start {
			lines = append(lines, line{' ', oldLines[at]})
			offset += len(oldLines[at])
			at++
		}
		for at < len(oldLines) && offset < e.End {
			lines = append(lines, line{'-', oldLines[at]})
			offset += len(oldLines[at])
			at++
		}
		for _, l := range splitKeep(e.New) {
			lines = append(lines, line{'+', l})
		}
	}
	for ; at < len(oldLines); at++ {
		lines = append(lines, line{' ', oldLines[at]})
	}
	const context = 4
	for i := 0; i < len(lines); {
		if lines[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before the change to context after
		// the last change within 2*context of the one before.
		start := max(0, i-context)
		end := i
		for j := i; j < len(lines); j++ {
			if lines[j].kind != ' ' {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		stop := min(len(lines), end+1+context)
		oldStart, newStart := 1, 1
		for _, l := range lines[:start] {
			if l.kind != '+' {
				oldStart++
			}
			if l.kind != '-' {
				newStart++
			}
		}
		oldN, newN := 0, 0
		for _, l := range lines[start:stop] {
			if l.kind != '+' {
				oldN++
			}
			if l.kind != '-' {
				newN++
			}
		}
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		for _, l := range lines[start:stop] {
			b.WriteByte(l.kind)
			b.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return b.String()
}

// splitKeep splits s into lines, each with its newline (the last may
// have none).
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out, s = append(out, s[:i+1]), s[i+1:]
	}
	return out
}

// fenced puts a diff in a markdown code fence longer than any run of
// backticks inside it.
func fenced(diff string) string {
	n := 3
	for strings.Contains(diff, strings.Repeat("`", n)) {
		n++
	}
	f := strings.Repeat("`", n)
	if diff != "" && !strings.HasSuffix(diff, "\n") {
		diff += "\n"
	}
	return f + "diff\n" + diff + f + "\n\n"
}

func refMkdir(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	if _, err := runOp(ctx, sb, "mkdir", map[string]any{"path": p}); err != nil {
		return refOut{}, err
	}
	return refOut{text: "Successfully created directory " + p}, nil
}

// lsAll lists a directory as the reference does: dot-names included.
func lsAll(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (ops.LsResult, string, error) {
	p, err := a.str("path")
	if err != nil {
		return ops.LsResult{}, "", err
	}
	v, err := runOp(ctx, sb, "ls", map[string]any{"path": p, "all": true})
	if err != nil {
		return ops.LsResult{}, "", err
	}
	r := v.(ops.LsResult)
	var note string
	if r.Truncated {
		note = cutNote(sb, "listing", "entries", r.Truncation, "list a subdirectory instead")
	}
	return r, note, nil
}

func kindTag(typ string) string {
	if typ == "dir" {
		return "[DIR]"
	}
	return "[FILE]"
}

func refList(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	r, note, err := lsAll(ctx, sb, a)
	if err != nil {
		return refOut{}, err
	}
	lines := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		lines[i] = kindTag(e.Type) + " " + e.Name
	}
	return refOut{text: strings.Join(lines, "\n"), note: note}, nil
}

// humanSize writes a size as the reference does: bytes below 1 KB, else
// two decimals of the largest binary unit (up to TB).
func humanSize(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	u, v := 0, float64(n)
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

// padRight pads s with spaces to n characters.
func padRight(s string, n int) string {
	if c := utf8.RuneCountInString(s); c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}

func refListSizes(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	by, err := a.str("sortBy")
	if err != nil {
		return refOut{}, err
	}
	if by != "" && by != "name" && by != "size" {
		return refOut{}, fserr.Errorf(fserr.CodeUsage, "", "sortBy must be name or size, got %q", by)
	}
	r, note, err := lsAll(ctx, sb, a)
	if err != nil {
		return refOut{}, err
	}
	ents := r.Entries
	if by == "size" {
		sort.SliceStable(ents, func(i, j int) bool { return ents[i].Bytes() > ents[j].Bytes() })
	} else {
		// By name as the reference sorts (JavaScript's localeCompare):
		// the Unicode collation of English, case and accents second.
		c := collate.New(language.English)
		sort.SliceStable(ents, func(i, j int) bool { return c.CompareString(ents[i].Name, ents[j].Name) < 0 })
	}
	lines := make([]string, 0, len(ents)+3)
	var files, dirs int
	var total int64
	for _, e := range ents {
		size := ""
		if e.Type == "dir" {
			dirs++
		} else {
			files++
			total += e.Bytes()
			size = fmt.Sprintf("%10s", humanSize(e.Bytes()))
		}
		lines = append(lines, kindTag(e.Type)+" "+padRight(e.Name, 30)+" "+size)
	}
	lines = append(lines, "", fmt.Sprintf("Total: %d files, %d directories", files, dirs), "Combined size: "+humanSize(total))
	return refOut{text: strings.Join(lines, "\n"), note: note}, nil
}

// treeEntry is one node of directory_tree's answer.
type treeEntry struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Children *[]treeEntry `json:"children,omitempty"`
}

func refTree(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	var excl []string
	if err := a.get("excludePatterns", &excl); err != nil {
		return refOut{}, err
	}
	start, err := sb.Lstat(p)
	if err != nil {
		return refOut{}, err
	}
	if start.Type != "dir" {
		return refOut{}, fserr.Errorf(fserr.CodeNotADir, p, "%s is not a directory", p)
	}
	// Walk entries come in path order, parents first; each directory's
	// children are collected under its relative path.
	type dirNode struct {
		kids  []string
		types map[string]string
	}
	nodes := map[string]*dirNode{".": {types: map[string]string{}}}
	node := func(rel string) *dirNode {
		n := nodes[rel]
		if n == nil {
			n = &dirNode{types: map[string]string{}}
			nodes[rel] = n
		}
		return n
	}
	res, err := findPaths(ctx, sb, map[string]any{"dir": p, "exclude": excl, "hidden": true, "no-ignore": true}, func(path, typ string) error {
		rel := relTo(start.Path, path)
		parent, name := ".", rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			parent, name = rel[:i], rel[i+1:]
		}
		n := node(parent)
		n.kids = append(n.kids, name)
		n.types[name] = typ
		if typ == "dir" {
			node(rel)
		}
		return nil
	})
	if err != nil {
		return refOut{}, err
	}
	var build func(rel string) []treeEntry
	build = func(rel string) []treeEntry {
		n := nodes[rel]
		out := []treeEntry{}
		if n == nil {
			return out
		}
		for _, name := range n.kids {
			e := treeEntry{Name: name, Type: "file"}
			if n.types[name] == "dir" {
				child := name
				if rel != "." {
					child = rel + "/" + name
				}
				kids := build(child)
				e.Type, e.Children = "directory", &kids
			}
			out = append(out, e)
		}
		return out
	}
	b, err := json.MarshalIndent(build("."), "", "  ")
	if err != nil {
		return refOut{}, err
	}
	out := refOut{text: string(b)}
	if res.Truncated {
		out.note = cutNote(sb, "tree", "entries", res.Truncation, "ask for a subdirectory's tree, or leave more out with excludePatterns")
	}
	return out, nil
}

// cutNote is the second text block of a reference tool whose list a
// limit cut: which limit, and how to narrow the request in the tool's
// own arguments (its tools take no cursor).
func cutNote(sb *sandbox.Sandbox, what, unit string, tr ops.Truncation, narrow string) string {
	at := fmt.Sprintf("%s = %d %s", tr.Limit, sb.Limits().MaxResults, unit)
	switch tr.Limit {
	case "max_result_bytes":
		at = fmt.Sprintf("max_result_bytes = %d bytes", sb.Limits().MaxResultBytes)
	case "timeout":
		at = "the call's deadline (max_call_seconds)"
	}
	return fmt.Sprintf("[fsbox: the %s stops at %s; for the rest, %s]", what, at, narrow)
}

// relTo is path p (as the sandbox shows it) relative to dir (shown the
// same way).
func relTo(dir, p string) string {
	if dir == "." || dir == "" {
		return p
	}
	if dir == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(p, dir+"/")
}

func refMove(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	src, err := a.str("source")
	if err != nil {
		return refOut{}, err
	}
	dst, err := a.str("destination")
	if err != nil {
		return refOut{}, err
	}
	if _, err := runOp(ctx, sb, "mv", map[string]any{"src": src, "dst": dst}); err != nil {
		return refOut{}, err
	}
	return refOut{text: "Successfully moved " + src + " to " + dst}, nil
}

func refSearch(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	pat, err := a.str("pattern")
	if err != nil {
		return refOut{}, err
	}
	if pat == "" {
		return refOut{}, fserr.Errorf(fserr.CodeUsage, p, "pattern must not be empty")
	}
	var excl []string
	if err := a.get("excludePatterns", &excl); err != nil {
		return refOut{}, err
	}
	// The pattern is matched against the path relative to path, as the
	// reference does ("*.go" the top level only, "**/*.go" every level):
	// anchored, not find's base-name rule.
	var found []string
	res, err := findPaths(ctx, sb, map[string]any{"dir": p, "glob": "/" + strings.TrimPrefix(pat, "/"), "exclude": excl, "hidden": true, "no-ignore": true},
		func(path, _ string) error { found = append(found, absPath(sb, path)); return nil })
	if err != nil {
		return refOut{}, err
	}
	out := refOut{text: strings.Join(found, "\n")}
	if len(found) == 0 {
		out.text = "No matches found"
	}
	if res.Truncated {
		out.note = cutNote(sb, "search", "paths", res.Truncation, "search a subdirectory, with a narrower pattern, or leave more out with excludePatterns")
	}
	return out, nil
}

func refFileInfo(ctx context.Context, sb *sandbox.Sandbox, a refArgs) (refOut, error) {
	p, err := a.str("path")
	if err != nil {
		return refOut{}, err
	}
	if err := ctx.Err(); err != nil {
		return refOut{}, err
	}
	info, err := sb.Lstat(p)
	if err != nil {
		return refOut{}, err
	}
	// Times come from the sandbox's own lstat, as every byte does; the
	// creation time from statx on the descriptor it opens to read, and
	// is unknown (rather than guessed) where the file system keeps none.
	const layout = "2006-01-02T15:04:05.000Z"
	created := "unknown"
	if bt, ok := sb.BirthTime(p); ok {
		created = bt.Format(layout)
	}
	lines := []string{
		fmt.Sprintf("size: %d", info.Size),
		"created: " + created,
		"modified: " + info.ModTime.UTC().Format(layout),
		"accessed: " + info.ATime.UTC().Format(layout),
		fmt.Sprintf("isDirectory: %t", info.Type == "dir"),
		fmt.Sprintf("isFile: %t", info.Type == "file"),
		fmt.Sprintf("permissions: %03o", info.Mode.Perm()),
	}
	return refOut{text: strings.Join(lines, "\n")}, nil
}

func refAllowed(ctx context.Context, sb *sandbox.Sandbox, _ refArgs) (refOut, error) {
	v, err := runOp(ctx, sb, "roots", nil)
	if err != nil {
		return refOut{}, err
	}
	r := v.(ops.RootsResult)
	dirs := reachableOf(ctx, append(append([]string{r.Workdir}, r.WriteRoots...), r.ReadRoots...)) // what the client's roots leave
	text := "Allowed directories:\n" + strings.Join(dirs, "\n")
	for _, g := range r.GoneRoots {
		text += fmt.Sprintf("\n\nGone: %s (%s since the server started; restart the server to serve it again)", g.Root, g.State)
	}
	return refOut{text: text}, nil
}
