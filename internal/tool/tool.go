// Package tool is the tool face both the command line (`fsbox tools`)
// and the MCP server (internal/mcpserver) describe and take calls
// through: each operation as a tool and its JSON schemas, the arguments a
// tool takes beyond its operation's own (timeout, cursor, expect) split
// off a call's arguments, the error object a failed call answers with,
// and the audit record each call leaves (with the exit status the command
// line would give: the exit table).
package tool

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// ToolsDoc is `fsbox tools`: every enabled command as a tool. Each entry
// carries MCP's fields (name, description, inputSchema, outputSchema,
// annotations) and fsbox's hints; for OpenAI-style function calling, map
// each to {"type":"function","function":{"name":…,"description":…,
// "parameters":inputSchema}}.
type ToolsDoc struct {
	Tools []Tool `json:"tools"`
}

// Tool describes one command.
type Tool struct {
	Name         string          `json:"name"`    // fsbox_COMMAND
	Command      string          `json:"command"` // the CLI command
	Description  string          `json:"description"`
	InputSchema  *spec.Schema    `json:"inputSchema"`
	OutputSchema *spec.Schema    `json:"outputSchema"`
	Annotations  ToolAnnotations `json:"annotations"`
	ReadOnly     bool            `json:"read_only"`
	Destructive  bool            `json:"destructive"`
	Idempotent   bool            `json:"idempotent"`
	// Args lists the positional properties in command-line order: a host
	// runs `fsbox COMMAND --flag value ... -- ARGS...`, each other property
	// as a flag spelt with '-' for '_' (an array of objects as JSON text to
	// --NAME-json).
	Args []string `json:"args"`
}

// ToolAnnotations are MCP's behaviour hints.
type ToolAnnotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Tools describes the enabled operations of reg that are tools (the
// documentation commands are for people, not agents, and are left out).
func Tools(reg *spec.Registry, enabled func(string) bool) ToolsDoc {
	doc := ToolsDoc{Tools: []Tool{}}
	for _, op := range reg.Ops() {
		if op.NoTool || op.Run == nil || !enabled(op.Name) {
			continue
		}
		doc.Tools = append(doc.Tools, ToolOf(op))
	}
	return doc
}

// ToolOf describes one operation as a tool.
func ToolOf(op *spec.Op) Tool {
	desc := upperFirst(op.Summary) + ". " + op.Help
	if len(op.Examples) > 0 {
		desc += " Example: fsbox " + op.Examples[0].Cmd + " (" + op.Examples[0].Says + ")."
	}
	t := Tool{Name: "fsbox_" + op.Name, Command: op.Name, Description: desc,
		InputSchema: spec.InputSchema(op), OutputSchema: spec.OutputSchema(op),
		ReadOnly: op.ReadOnly(), Destructive: op.Class == spec.Destructive, Idempotent: op.ReadOnly() || op.Idempotent, Args: []string{}}
	t.InputSchema.Properties[TimeoutProperty] = &spec.Schema{Type: "number", Description: "seconds the call may take (fractions allowed; above 0): a walk or search gives what it found by then (truncated, limit \"timeout\"), a command that cannot give a part fails with timeout; can only lower the policy's max_call_seconds (the command line's --timeout)"}
	if op.Pages {
		t.InputSchema.Properties[CursorProperty] = &spec.Schema{Type: "string", Description: "resume a list a limit cut (truncated): the next_cursor of the same tool called with the same arguments; the call then gives the items after the cut"}
	}
	t.Annotations = ToolAnnotations{Title: "fsbox " + op.Name, ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent}
	for _, a := range op.Args {
		if !a.CLIOnly {
			t.Args = append(t.Args, spec.Property(a.Name))
		}
	}
	return t
}

// TimeoutProperty is the argument every tool takes besides its
// operation's own: the call's deadline in seconds, as the command line's
// global --timeout (so a host running a tool call as a command line
// passes it as --timeout N, after the command like any property).
const TimeoutProperty = "timeout"

// CursorProperty is the argument of the tools whose list a limit may cut
// (spec.Op.Pages): the command line's global --cursor.
const CursorProperty = "cursor"

// FaceProperties are the properties op's tool takes besides the
// operation's own, which a call's arguments give up before spec.FromJSON
// reads the rest (SplitTimeout, SplitCursor, SplitExpect): FromJSON names
// the nearest of all of them for one it does not know.
func FaceProperties(op *spec.Op) []string {
	names := []string{TimeoutProperty}
	if op.Pages {
		names = append(names, CursorProperty)
	}
	if TakesExpect(op.Name) {
		names = append(names, ExpectProperty)
	}
	return names
}

// SplitCursor takes a tool call's cursor out of its arguments, as
// SplitTimeout takes its timeout: the arguments without it and the cursor
// ("" when not given).
func SplitCursor(raw json.RawMessage) (json.RawMessage, string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw, "", nil
	}
	v, ok := m[CursorProperty]
	if !ok {
		return raw, "", nil
	}
	delete(m, CursorProperty)
	rest, err := json.Marshal(m)
	if err != nil {
		return raw, "", err
	}
	var cursor string
	if json.Unmarshal(v, &cursor) != nil {
		return rest, "", fserr.Errorf(fserr.CodeUsage, "", "cursor must be a string (a result's next_cursor), got %s", v)
	}
	return rest, cursor, nil
}

// SplitTimeout takes a tool call's timeout out of its arguments: the
// arguments without it (for spec.FromJSON) and the duration (0 when not
// given). Arguments that are no JSON object are passed on untouched, for
// spec.FromJSON to refuse.
func SplitTimeout(raw json.RawMessage) (json.RawMessage, time.Duration, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw, 0, nil
	}
	v, ok := m[TimeoutProperty]
	if !ok {
		return raw, 0, nil
	}
	delete(m, TimeoutProperty)
	rest, err := json.Marshal(m)
	if err != nil {
		return raw, 0, err
	}
	var secs float64
	if json.Unmarshal(v, &secs) != nil || !(secs > 0) {
		return rest, 0, fserr.Errorf(fserr.CodeUsage, "", "timeout must be a number of seconds above 0, got %s", v)
	}
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return rest, math.MaxInt64, nil
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 {
		return rest, 0, fserr.Errorf(fserr.CodeUsage, "", "timeout must be a number of seconds above 0, got %s", v)
	}
	return rest, d, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
