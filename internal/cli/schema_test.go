package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/spec"
)

// compileSchema compiles a schema as draft 2020-12, which also checks it
// against the draft's meta-schema.
func compileSchema(t *testing.T, name string, s *spec.Schema) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"$ref"`)) {
		t.Errorf("%s: a $ref (hosts in non-strict mode want none)", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile as draft 2020-12: %v", name, err)
	}
	return sch
}

func validate(t *testing.T, name string, sch *jsonschema.Schema, instance string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sch.Validate(v)
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// walkSchema visits every property schema below s.
func walkSchema(s *spec.Schema, path string, fn func(path string, s *spec.Schema)) {
	fn(path, s)
	for name, p := range s.Properties {
		walkSchema(p, path+"."+name, fn)
	}
	if s.Items != nil {
		walkSchema(s.Items, path+"[]", fn)
	}
}

// TestToolSchemas: every tool's input and output schema compiles as draft
// 2020-12 with a real validator, uses snake_case properties with real
// descriptions, has properties (even with none to give), lists only
// properties it has as required, bounds counts, and accepts a call built
// from its required properties while refusing unknown ones and wrong types.
func TestToolSchemas(t *testing.T) {
	doc := tool.Tools(ops.Registry, func(string) bool { return true })
	if len(doc.Tools) < 15 {
		t.Fatalf("%d tools", len(doc.Tools))
	}
	for _, tl := range doc.Tools {
		op, _ := ops.Registry.Lookup(tl.Command)
		in := compileSchema(t, tl.Name+".in", tl.InputSchema)
		compileSchema(t, tl.Name+".out", tl.OutputSchema)
		if b, _ := json.Marshal(tl.InputSchema); !bytes.Contains(b, []byte(`"properties":{`)) {
			t.Errorf("%s: inputSchema without properties: %s", tl.Name, b)
		}
		if len(tl.Description) < 40 {
			t.Errorf("%s: description %q", tl.Name, tl.Description)
		}
		for _, r := range tl.InputSchema.Required {
			if tl.InputSchema.Properties[r] == nil {
				t.Errorf("%s: required %q is no property", tl.Name, r)
			}
		}
		walkSchema(tl.InputSchema, tl.Name, func(path string, s *spec.Schema) {
			for name := range s.Properties {
				if !snake.MatchString(name) {
					t.Errorf("%s: property %q is not snake_case", path, name)
				}
			}
			if path != tl.Name && !strings.HasSuffix(path, "[]") && (len(s.Description) < 12 || strings.ToUpper(s.Description) == s.Description) {
				t.Errorf("%s: description %q says nothing", path, s.Description)
			}
			if s.Type == "string" && strings.Contains(s.Description, "[{") {
				t.Errorf("%s: JSON inside a string", path)
			}
		})
		for i := range op.Options {
			o := &op.Options[i]
			if o.Type == spec.Int && !o.CLIOnly && o.Min == nil {
				t.Errorf("%s: integer option %s has no minimum", tl.Name, o.Name)
			}
		}
		// A call with every required property accepts; an unknown
		// property and a wrong type are refused, by the schema and by
		// spec.FromJSON alike.
		call := map[string]any{}
		for _, r := range tl.InputSchema.Required {
			switch p := tl.InputSchema.Properties[r]; {
			case p.Type == "array":
				call[r] = []string{"a.txt"}
			case len(p.Enum) > 0:
				call[r] = p.Enum[0]
			default:
				call[r] = "1"
			}
		}
		b, _ := json.Marshal(call)
		if err := validate(t, tl.Name, in, string(b)); err != nil {
			t.Errorf("%s: %s refused: %v", tl.Name, b, err)
		}
		if _, err := spec.FromJSON(op, b); err != nil {
			t.Errorf("%s: FromJSON(%s): %v", tl.Name, b, err)
		}
		call["no_such_property"] = true
		b, _ = json.Marshal(call)
		if validate(t, tl.Name, in, string(b)) == nil {
			t.Errorf("%s: an unknown property is accepted", tl.Name)
		}
		if _, err := spec.FromJSON(op, b); err == nil {
			t.Errorf("%s: FromJSON takes an unknown property", tl.Name)
		}
	}
	// Multiple edits are an array of objects, not JSON in a string.
	var edit tool.Tool
	for _, tl := range doc.Tools {
		if tl.Command == "edit" {
			edit = tl
		}
	}
	e := edit.InputSchema.Properties["edits"]
	if e == nil || e.Type != "array" || e.Items == nil || e.Items.Type != "object" || e.Items.Properties["old"] == nil {
		t.Errorf("edit's edits: %+v", e)
	}
	sch := compileSchema(t, "edit.in", edit.InputSchema)
	if err := validate(t, "edit", sch, `{"path":"a","edits":[{"old":"x","new":"y","all":true}]}`); err != nil {
		t.Errorf("edits as objects refused: %v", err)
	}
	if validate(t, "edit", sch, `{"path":"a","edits":"[{\"old\":\"x\"}]"}`) == nil {
		t.Error("edits as a string accepted")
	}
}

var updateExamples = flag.Bool("update-examples", false, "rewrite testdata/examples.golden")

// journalDir is the workdir's journal under the fixture's state
// directory: its last part hashes the (temporary) workdir's path.
var journalDir = regexp.MustCompile(`\$STATE/fsbox/journal/[0-9a-f]{16}-[0-9a-f]{8}`)

// changeTime is a journal record's time (to the nanosecond, unlike the
// fixture's fixed mtimes).
var changeTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z`)

// exampleFiles is the workdir every help example runs in.
var exampleFiles = map[string]string{
	"main.go":       "package main\n\n// TODO: flags\nfunc main() {}\n",
	"notes.txt":     "beta\nalpha\ngamma\nalpha\n",
	"data.csv":      "name,age\nann,31\nbob,27\n",
	"src/app.go":    "package src\n\n// TODO: tests\n",
	"src/util.go":   "package src\n",
	"build/out.txt": "old build\n",
	"fix.patch":     "*** Begin Patch\n*** Update File: main.go\n@@\n-// TODO: flags\n+// DONE: flags\n*** Add File: CHANGES\n+flags parsed\n*** End Patch\n",
}

// shellWords splits an example command line: words, and 'single-quoted'
// words as sh reads them.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// TestHelpExamplesRun runs every example of every command's help in a
// fresh workdir and checks its exit status and output against
// testdata/examples.golden (go test -run TestHelpExamplesRun
// -update-examples rewrites it; make golden does). Each JSON output is
// also validated against the command's output schema.
func TestHelpExamplesRun(t *testing.T) {
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var got strings.Builder
	for _, op := range ops.Registry.Ops() {
		var out *jsonschema.Schema
		if op.Result != nil {
			out = compileSchema(t, op.Name+".out", spec.OutputSchema(op))
		}
		for _, ex := range op.Examples {
			if ex.Serves {
				continue // a server does not return (the mcpserver tests drive it)
			}
			if ex.Bucket {
				continue // needs a bucket (internal/s3test runs it on versitygw)
			}
			fx := newFixture(t, exampleFiles, "[commands]\nrm = true\npurge = true\n")
			filepath.WalkDir(fx.work, func(p string, _ os.DirEntry, _ error) error { return os.Chtimes(p, mtime, mtime) })
			if ex.After != "" {
				if _, stderr, code := fx.run(ops.Registry, shellWords(ex.After)...); code != 0 {
					t.Errorf("fsbox %s (before %s): exit %d: %s", ex.After, ex.Cmd, code, stderr)
				}
			}
			stdout, stderr, code := fx.run(ops.Registry, shellWords(ex.Cmd)...)
			if code != 0 {
				t.Errorf("fsbox %s: exit %d: %s", ex.Cmd, code, stderr)
			}
			if !strings.Contains(ex.Cmd, "--format text") && out != nil {
				if err := validate(t, op.Name, out, stdout); err != nil {
					t.Errorf("fsbox %s: the output does not fit the output schema: %v\n%s", ex.Cmd, err, stdout)
				}
			}
			stdout = strings.ReplaceAll(stdout, fx.work, "$WORK")
			stdout = strings.ReplaceAll(stdout, fx.policy, "$POLICY")
			stdout = journalDir.ReplaceAllString(strings.ReplaceAll(stdout, fx.state, "$STATE"), "$$JOURNAL")
			stdout = changeTime.ReplaceAllString(stdout, "$$TIME")
			lines := strings.SplitAfter(stdout, "\n")
			for i, l := range lines {
				if len(l) > 300 {
					lines[i] = l[:300] + fmt.Sprintf("... (%d bytes)\n", len(l))
				}
			}
			if len(lines) > 12 {
				lines = append(lines[:12], fmt.Sprintf("... (%d lines)\n", len(lines)))
			}
			fmt.Fprintf(&got, "$ fsbox %s\n%s", ex.Cmd, strings.Join(lines, ""))
		}
	}
	golden := filepath.Join("testdata", "examples.golden")
	if *updateExamples {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run make golden)", err)
	}
	if got.String() != string(want) {
		t.Errorf("the help examples print something else than %s (make golden rewrites it; review the diff):\n%s", golden, got.String())
	}
}

// TestRunIsReentrant: 16 calls of Run at once, with different commands
// and formats, print what the same calls print one at a time (go test
// -race watches for shared state).
func TestRunIsReentrant(t *testing.T) {
	fx := newFixture(t, exampleFiles, "")
	calls := [][]string{
		{"read", "main.go"}, {"--format", "text", "grep", "-n", "TODO", "."}, {"ls", "src", "--format", "ndjson"},
		{"wc", "notes.txt", "main.go", "--format", "text"}, {"find", ".", "*.go"}, {"sort", "-u", "notes.txt"},
		{"slice", "notes.txt", "-2"}, {"cut", "--csv", "-f", "2", "data.csv"}, {"explain", "write", "src/x.go"},
		{"grep", "-h", "TODO", "src", "--format", "text"}, {"man", "grep"}, {"completion", "fish"},
		{"--help"}, {"stat", "--help"}, {"tools"}, {"grep", "-c", "-i", "todo", "--format", "ndjson"},
	}
	want := make([]string, len(calls))
	for i, c := range calls {
		out, errb, code := fx.run(ops.Registry, c...)
		want[i] = fmt.Sprintf("%d\n%s\n%s", code, out, errb)
	}
	got := make([]string, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errb, code := fx.run(ops.Registry, c...)
			got[i] = fmt.Sprintf("%d\n%s\n%s", code, out, errb)
		}()
	}
	wg.Wait()
	for i := range calls {
		if got[i] != want[i] {
			t.Errorf("fsbox %s, run concurrently:\n%s\nalone:\n%s", strings.Join(calls[i], " "), got[i], want[i])
		}
	}
}

// TestReadmeCommandTable: the README's command table is the one the
// descriptors generate.
func TestReadmeCommandTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), CommandTable(ops.Registry)) {
		t.Errorf("README.md does not hold the generated command table; put this between its markers:\n%s", CommandTable(ops.Registry))
	}
	names := ops.Registry.Names()
	sort.Strings(names)
	for _, n := range names {
		if !strings.Contains(string(b), "| `"+n+"` |") {
			t.Errorf("README lacks %s", n)
		}
	}
}
