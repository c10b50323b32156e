package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolCursor: a list tool's cut result carries next_cursor, and the
// same tool with the same arguments and cursor gives the items after
// the cut, until none is left; the pages together are the whole list.
// A cursor given to another tool or other arguments is usage.
func TestToolCursor(t *testing.T) {
	files := map[string]string{}
	for i := range 7 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "needle\n"
	}
	h := newHarness(t, setup{files: files, toml: "workdir = \"$WORK\"\n[limits]\nmax_results = 3\n"})
	var paths []any
	args := map[string]any{"dir": "."}
	for n := 0; ; n++ {
		got := h.ok("fsbox_find", args)
		paths = append(paths, got["paths"].([]any)...)
		next, _ := got["next_cursor"].(string)
		if next == "" {
			if got["truncated"] != false {
				t.Errorf("the last page: %v, want truncated false", got)
			}
			break
		}
		if got["truncated"] != true || got["limit"] != "max_results" || n > 10 {
			t.Fatalf("page %d: %v, want a cut by max_results", n, got)
		}
		args = map[string]any{"dir": ".", "cursor": next}
	}
	var want []any
	for i := range 7 {
		want = append(want, fmt.Sprintf("d%d", i), fmt.Sprintf("d%d/f.txt", i))
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("the pages give %v, want %v", paths, want)
	}
	cut := h.ok("fsbox_find", map[string]any{"dir": "."})["next_cursor"].(string)
	h.fail("fsbox_find", map[string]any{"dir": ".", "hidden": true, "cursor": cut}, "usage", "")
	h.fail("fsbox_ls", map[string]any{"cursor": cut}, "usage", "")
	h.fail("fsbox_find", map[string]any{"cursor": 7}, "usage", "")
}

// TestToolsTakeCursor: the list tools, and only they, take a cursor (wc:
// its files, which the deadline cuts; read: its lines, which
// max_result_bytes cuts).
func TestToolsTakeCursor(t *testing.T) {
	h := newHarness(t, setup{})
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]bool{"find": true, "grep": true, "ls": true, "history": true, "slice": true, "sort": true, "cut": true, "stat": true, "wc": true, "read": true}
	for _, tool := range res.Tools {
		schema := fmt.Sprint(tool.InputSchema)
		name := strings.TrimPrefix(tool.Name, "fsbox_")
		if has := strings.Contains(schema, "cursor"); has != pages[name] {
			t.Errorf("%s: takes cursor %v, want %v", tool.Name, has, pages[name])
		}
	}
}

// TestCapabilitiesUsed: the server advertises only what it uses: tools,
// without listChanged (the list never changes in a session), and no
// logging (it sends no log messages).
func TestCapabilitiesUsed(t *testing.T) {
	h := newHarness(t, setup{})
	caps := h.cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged || caps.Logging != nil || caps.Prompts != nil || caps.Resources != nil {
		b, _ := json.Marshal(caps)
		t.Errorf("capabilities %s, want tools only, without listChanged", b)
	}
}

// TestNativeReadMedia: a native read of an image or audio file, whole,
// answers with an image or audio content block; structuredContent
// describes it (mime, size, sha256) without the data, so the bytes are
// not sent twice. A page of it (offset, limit) is a read as before.
func TestNativeReadMedia(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x01"
	h := newHarness(t, setup{files: map[string]string{"pic.png": png, "song.mp3": "ID3\x00\x01"}})
	for name, want := range map[string]string{"pic.png": "image/png", "song.mp3": "audio/mpeg"} {
		res, err := h.call("fsbox_read", map[string]any{"path": name})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var data []byte
		var mime string
		switch c := res.Content[0].(type) {
		case *mcp.ImageContent:
			data, mime = c.Data, c.MIMEType
		case *mcp.AudioContent:
			data, mime = c.Data, c.MIMEType
		default:
			t.Fatalf("%s: first block %T, want image or audio", name, c)
		}
		if mime != want || (name == "pic.png" && string(data) != png) {
			t.Errorf("%s: %s %q", name, mime, data)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var sc map[string]any
		json.Unmarshal(b, &sc)
		if sc["mime"] != want || sc["content"] != "" || sc["sha256"] == nil || sc["encoding"] != "base64" {
			t.Errorf("%s: structuredContent %s, want the file described without its data", name, b)
		}
	}
	if got := h.ok("fsbox_read", map[string]any{"path": "pic.png", "encoding": "base64", "limit": 1}); got["content"] == "" {
		t.Errorf("a page of the image: %v, want its base64 content as before", got)
	}
}
