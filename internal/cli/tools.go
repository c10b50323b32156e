package cli

import "github.com/fsbox/fsbox/pkg/spec"

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
	t.Annotations = ToolAnnotations{Title: "fsbox " + op.Name, ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent}
	for _, a := range op.Args {
		if !a.CLIOnly {
			t.Args = append(t.Args, spec.Property(a.Name))
		}
	}
	return t
}
