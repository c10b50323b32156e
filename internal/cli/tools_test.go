package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestToolsCoverEveryFlag fails when a command's flag or argument is
// missing from its tool schema, or a disabled command shows up.
func TestToolsCoverEveryFlag(t *testing.T) {
	doc := Tools(func(name string) bool { return name != "rm" })
	seen := map[string]Tool{}
	for _, tl := range doc.Tools {
		seen[tl.Command] = tl
	}
	if _, ok := seen["rm"]; ok {
		t.Error("a disabled command is listed")
	}
	for _, name := range commandNames() {
		switch name {
		case "rm", "completion", "man", "links", "tools":
			continue
		}
		tl, ok := seen[name]
		if !ok {
			t.Errorf("%s has no tool", name)
			continue
		}
		for _, f := range registry[name].flags {
			if _, ok := tl.InputSchema.Properties[f.Names()[0]]; !ok {
				t.Errorf("%s: flag --%s missing from the schema", name, f.Names()[0])
			}
		}
		for _, a := range tl.Args {
			if _, ok := tl.InputSchema.Properties[a]; !ok {
				t.Errorf("%s: argument %s missing from the schema", name, a)
			}
		}
		if tl.ReadOnly && tl.Destructive {
			t.Errorf("%s is both read-only and destructive", name)
		}
	}
	b, _ := json.Marshal(doc)
	if !strings.Contains(string(b), `"inputSchema"`) || !strings.Contains(string(b), `"readOnlyHint":true`) {
		t.Error("MCP field names missing")
	}
	if g := seen["grep"]; len(g.Args) != 2 || g.InputSchema.Required[0] != "pattern" {
		t.Errorf("grep args: %v required %v", g.Args, g.InputSchema.Required)
	}
	// A tool call has no stdin to give write: its content is required, and
	// the "-" operand (read stdin) is no property.
	if w := seen["write"]; strings.Join(w.Args, ",") != "path" || strings.Join(w.InputSchema.Required, ",") != "path,content" {
		t.Errorf("write args %v required %v, want [path] and [path content]", w.Args, w.InputSchema.Required)
	}
	for name, flags := range requiredFlags {
		for _, f := range flags {
			if _, ok := seen[name].InputSchema.Properties[f]; !ok {
				t.Errorf("%s: required flag --%s is no property", name, f)
			}
		}
	}
}

// Every command documents its output, JSON and text, in its man page.
func TestEveryCommandDocumentsItsOutput(t *testing.T) {
	for _, name := range commandNames() {
		out, ok := outputs[name]
		if !ok || out.json == "" || out.text == "" {
			t.Errorf("%s: no entry in outputs (what it prints, in JSON and in --format text)", name)
			continue
		}
		page, err := ManPage(name)
		if err != nil || !strings.Contains(page, ".SH OUTPUT\n") {
			t.Errorf("%s: man page has no OUTPUT section (%v)", name, err)
		}
	}
	for name := range outputs {
		if _, ok := registry[name]; !ok {
			t.Errorf("outputs names %q, which is no command", name)
		}
	}
}
