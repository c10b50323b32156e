package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReferenceOwnWords: the reference profile names only its own tools
// and arguments (issue 42): head and tail of 0 are not given, as the
// reference's JavaScript reads them; the ambiguous edit_file error says
// to add context, never "all", an argument edit_file lacks; a file over
// max_read_bytes is refused with head and tail as the way out, never
// offset and limit; the instructions name list_allowed_directories. The
// native profile keeps its own words: "all": true, and fsbox_roots.
func TestReferenceOwnWords(t *testing.T) {
	work, _, p := refFixture(t)
	_ = work
	p.Limits.MaxReadBytes = 1024
	cs := refSession(t, p)
	for _, args := range []map[string]any{
		{"path": "a.txt", "head": 0}, {"path": "a.txt", "tail": 0}, {"path": "a.txt", "head": 0, "tail": 0},
	} {
		res := callTool(t, cs, "read_text_file", args)
		if res.IsError || refTextOf(res) != "one\ntwo\nthree\nfour\n" {
			t.Errorf("read_text_file %v: isError %v, %q; want the whole file", args, res.IsError, refTextOf(res))
		}
	}
	if res := callTool(t, cs, "read_text_file", map[string]any{"path": "a.txt", "head": 0, "tail": 1}); res.IsError || refTextOf(res) != "four\n" {
		t.Errorf("head 0, tail 1: %q, want the last line", refTextOf(res))
	}
	if res := callTool(t, cs, "read_text_file", map[string]any{"path": "a.txt", "head": 1, "tail": 1}); !res.IsError {
		t.Errorf("head 1, tail 1: %q, want the reference's refusal", refTextOf(res))
	}

	res := callTool(t, cs, "edit_file", map[string]any{"path": "dup.txt", "edits": []any{map[string]any{"oldText": "x = 1", "newText": "x = 2"}}})
	if text := refTextOf(res); !res.IsError || !strings.Contains(text, "make it unique") || strings.Contains(text, "all") {
		t.Errorf("edit_file, ambiguous: %s", text)
	}
	for _, name := range []string{"read_text_file", "read_multiple_files", "read_media_file"} {
		args := map[string]any{"path": "sub/deep/d.txt"}
		if name == "read_multiple_files" {
			args = map[string]any{"paths": []any{"sub/deep/d.txt"}}
		}
		text := refTextOf(callTool(t, cs, name, args))
		if !strings.Contains(text, "over max_read_bytes") || strings.Contains(text, "offset") || strings.Contains(text, "limit") {
			t.Errorf("%s of a file over max_read_bytes: %s", name, text)
		}
		if name != "read_media_file" && !strings.Contains(text, "head or tail") {
			t.Errorf("%s of a file over max_read_bytes names no way out in the profile's words: %s", name, text)
		}
	}
	ins := cs.InitializeResult().Instructions
	if !strings.Contains(ins, "list_allowed_directories") || strings.Contains(ins, "roots tool") || strings.Contains(ins, "fsbox_") {
		t.Errorf("reference instructions: %s", ins)
	}

	h := newHarness(t, setup{files: map[string]string{"dup.txt": "x = 1\nx = 1\n"}})
	e := h.fail("fsbox_edit", map[string]any{"path": "dup.txt", "old": "x = 1", "new": "x = 2"}, "ambiguous", "")
	if !strings.HasSuffix(e.Message, `make it unique (or replace every occurrence: "all": true)`) {
		t.Errorf("native edit, ambiguous: %s", e.Message)
	}
	if ins := h.cs.InitializeResult().Instructions; !strings.Contains(ins, "fsbox_roots") || strings.Contains(ins, "list_allowed_directories") {
		t.Errorf("native instructions: %s", ins)
	}
}

// TestUnknownPropertyNearest: a native tool's property it does not take
// is refused naming the nearest it does, its face's own (timeout,
// cursor) among them.
func TestUnknownPropertyNearest(t *testing.T) {
	h := newHarness(t, setup{files: map[string]string{"a.txt": "x\n"}})
	for _, c := range []struct {
		tool, bad, want string
	}{
		{"fsbox_grep", "path", `did you mean "paths"?`},
		{"fsbox_read", "ofset", `did you mean "offset"?`},
		{"fsbox_grep", "timout", `did you mean "timeout"?`},
		{"fsbox_ls", "cursr", `did you mean "cursor"?`},
	} {
		args := map[string]any{c.bad: "a.txt"}
		if c.tool == "fsbox_grep" {
			args["pattern"] = "x"
		}
		if c.tool != "fsbox_grep" || c.bad != "path" {
			args["path"] = "a.txt"
			if c.tool == "fsbox_grep" {
				delete(args, "path")
				args["paths"] = []any{"a.txt"}
			}
		}
		e := h.fail(c.tool, args, "usage", "")
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%s {%s}: %s, want %s", c.tool, c.bad, e.Message, c.want)
		}
	}
}

// TestNativeMediaWhole: an image read by the native read tool is one
// image block of the whole file (up to max_read_bytes), never a page of
// max_result_bytes: part of an image is no image. A text file over the
// budget is a page with a cursor, which the tool takes.
func TestNativeMediaWhole(t *testing.T) {
	pic := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01\x02", 2000)
	text := strings.Repeat("a line of text\n", 200)
	h := newHarness(t, setup{files: map[string]string{"pic.png": pic, "notes.txt": text},
		toml: "workdir = \"$WORK\"\n[limits]\nmax_result_bytes = 1024\n"})
	res, err := h.call("fsbox_read", map[string]any{"path": "pic.png"})
	if err != nil || res.IsError {
		t.Fatalf("fsbox_read pic.png: %v %v", err, res)
	}
	var got []byte
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			got = img.Data
		}
	}
	if string(got) != pic {
		t.Errorf("the image block holds %d bytes, want the file's %d", len(got), len(pic))
	}
	var page struct {
		Content    string `json:"content"`
		Truncated  bool   `json:"truncated"`
		Limit      string `json:"limit"`
		NextCursor string `json:"next_cursor"`
	}
	all := ""
	cursor := ""
	for i := 0; i < 100; i++ {
		args := map[string]any{"path": "notes.txt"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, err := h.call("fsbox_read", args)
		if err != nil || res.IsError {
			t.Fatalf("fsbox_read notes.txt: %v %v", err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		all += page.Content
		if !page.Truncated {
			break
		}
		if page.Limit != "max_result_bytes" || page.NextCursor == "" || len(b) > 1024 {
			t.Fatalf("a page of %d bytes: %+v", len(b), page)
		}
		cursor = page.NextCursor
	}
	if all != text {
		t.Errorf("the pages give %d bytes, want the file's %d", len(all), len(text))
	}
}
