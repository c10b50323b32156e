package cli

import (
	"encoding/json"
	"math"
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
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
		return rest, "", sandbox.Errorf(sandbox.CodeUsage, "", "cursor must be a string (a result's next_cursor), got %s", v)
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
		return rest, 0, sandbox.Errorf(sandbox.CodeUsage, "", "timeout must be a number of seconds above 0, got %s", v)
	}
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return rest, math.MaxInt64, nil
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 {
		return rest, 0, sandbox.Errorf(sandbox.CodeUsage, "", "timeout must be a number of seconds above 0, got %s", v)
	}
	return rest, d, nil
}

// ExpectProperty is the native MCP tools' one precondition argument
// (SPEC §4, Preconditions): the sha256 of the file a change replaces or
// removes, or "absent" for a name that must be free. It stands for the
// operation's own expect-sha256, expect-absent and (cp, mv) force.
const ExpectProperty = "expect"

// expectTools are the operations whose tool takes expect, each with
// whether every call can name one (and so must, under [write]
// require_precondition): rm of a directory has no sha256 to name.
var expectTools = map[string]bool{"write": true, "edit": true, "cp": true, "mv": true, "rm": false}

// TakesExpect says whether op's native tool takes expect.
func TakesExpect(op string) bool {
	_, ok := expectTools[op]
	return ok
}

// AddExpect gives t, op's native tool, the expect argument (when op takes
// one), listed in required when the policy requires preconditions and
// every call of op can name one.
func AddExpect(t *Tool, op *spec.Op, require bool) {
	must, ok := expectTools[op.Name]
	if !ok {
		return
	}
	desc := map[string]string{
		"write": `what the write replaces: the sha256 (64 hex digits) the file has now, or "absent" to create a new file (the same as expect_sha256 and expect_absent)`,
		"edit":  `the sha256 (64 hex digits) of the content the edit changes, as read gives it (the same as expect_sha256)`,
		"cp":    `the sha256 (64 hex digits) of the file at dst the copy replaces (implies force), or "absent": dst must not exist`,
		"mv":    `the sha256 (64 hex digits) of the file at dst the move replaces (implies force), or "absent": dst must not exist`,
		"rm":    `the sha256 (64 hex digits) of the file removed (the same as expect_sha256); a directory takes none`,
	}[op.Name]
	if require && must {
		desc += "; the policy requires it (precondition_required without it)"
	} else if require {
		desc += "; the policy requires it for a file (precondition_required without it), and removes only an empty directory"
	}
	t.InputSchema.Properties[ExpectProperty] = &spec.Schema{Type: "string", Pattern: "^([0-9a-fA-F]{64}|absent)$", Description: desc}
	if require && must {
		t.InputSchema.Required = append(t.InputSchema.Required, ExpectProperty)
	}
}

// SplitExpect maps a tool call's expect onto op's own arguments:
// expect_sha256, or for "absent" expect_absent (write) or no force (cp,
// mv); a sha256 given to cp or mv implies force. Arguments that are no
// JSON object, or carry no expect, are passed on untouched.
func SplitExpect(op string, raw json.RawMessage) (json.RawMessage, error) {
	if !TakesExpect(op) {
		return raw, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw, nil
	}
	v, ok := m[ExpectProperty]
	if !ok {
		return raw, nil
	}
	delete(m, ExpectProperty)
	var e string
	if json.Unmarshal(v, &e) != nil || (e != "absent" && !isHex64(e)) {
		return raw, sandbox.Errorf(sandbox.CodeUsage, "", `expect wants a sha256 (64 hex digits) or "absent", got %s`, v)
	}
	for _, other := range []string{"expect_sha256", "expect_absent", "no_clobber"} {
		if _, both := m[other]; both {
			return raw, sandbox.Errorf(sandbox.CodeUsage, "", "give expect or %s, not both", other)
		}
	}
	t := json.RawMessage("true")
	switch {
	case e == "absent" && op == "write":
		m["expect_absent"] = t
	case e == "absent" && (op == "cp" || op == "mv"):
		if f, ok := m["force"]; ok && string(f) != "false" {
			return raw, sandbox.Errorf(sandbox.CodeUsage, "", `expect "absent" keeps an existing dst; it does not go with force`)
		}
	case e == "absent":
		return raw, sandbox.Errorf(sandbox.CodeUsage, "", `expect "absent" names no file to %s: give the sha256 of the file`, op)
	default:
		m["expect_sha256"], _ = json.Marshal(e)
		if op == "cp" || op == "mv" {
			m["force"] = t
		}
	}
	return json.Marshal(m)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
