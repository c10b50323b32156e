package cli

import (
	"regexp"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// ToolsDoc is `fsbox tools`: every enabled command as a tool. Each entry
// carries MCP's fields (name, description, inputSchema, annotations) and
// fsbox's hints; for OpenAI-style function calling, map each to
// {"type":"function","function":{"name":…,"description":…,"parameters":inputSchema}}.
type ToolsDoc struct {
	Tools []Tool `json:"tools"`
}

// Tool describes one command.
type Tool struct {
	Name        string          `json:"name"`    // fsbox_COMMAND
	Command     string          `json:"command"` // the CLI command
	Description string          `json:"description"`
	InputSchema Schema          `json:"inputSchema"`
	Annotations ToolAnnotations `json:"annotations"`
	ReadOnly    bool            `json:"read_only"`
	Destructive bool            `json:"destructive"`
	Idempotent  bool            `json:"idempotent"`
	// Args lists the positional properties in command-line order: a host
	// runs `fsbox COMMAND --flag value ... -- ARGS...`.
	Args []string `json:"args"`
}

// ToolAnnotations are MCP's behaviour hints.
type ToolAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// Schema is the JSON Schema subset the tools use.
type Schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Default              any                `json:"default,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
}

var (
	destructive = map[string]bool{"write": true, "edit": true, "mv": true, "cp": true, "rm": true}
	idempotent  = map[string]bool{"write": true, "mkdir": true, "cp": true, "links": true}
	flagEnums   = map[string][]string{"read.encoding": {"utf-8", "base64"}, "find.type": {"f", "d", "l"}, "completion.shell": {"bash", "zsh", "fish"}}
	intArgs     = map[string]bool{"start": true, "end": true}
	// requiredFlags are flags every tool call must give: a host runs a
	// tool without stdin, so write without content could only be refused.
	requiredFlags = map[string][]string{"write": {"content"}}
	argWord       = regexp.MustCompile(`[A-Z][A-Z|]*(\.\.\.)?`)
)

// Tools describes the enabled commands (the documentation commands
// completion, man and links are for people, not agents, and are left out).
func Tools(enabled func(string) bool) ToolsDoc {
	doc := ToolsDoc{Tools: []Tool{}}
	for _, n := range commandNames() {
		if !enabled(n) || n == "completion" || n == "man" || n == "links" || n == "tools" {
			continue
		}
		doc.Tools = append(doc.Tools, toolOf(registry[n]))
	}
	return doc
}

func toolOf(c *command) Tool {
	acc, _ := sandbox.CommandAccess(c.name)
	no := false
	t := Tool{Name: "fsbox_" + c.name, Command: c.name, Description: upperFirst(c.usage) + ".",
		ReadOnly: acc == sandbox.AccessRead, Destructive: destructive[c.name], Idempotent: acc == sandbox.AccessRead || idempotent[c.name],
		InputSchema: Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: &no}, Args: []string{}}
	t.Annotations = ToolAnnotations{ReadOnlyHint: t.ReadOnly, DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent}
	// Positional arguments from the usage line: [X] optional, X... many.
	depth := 0
	for _, tok := range strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ").Replace(c.argsUsage)) {
		switch tok {
		case "[":
			depth++
			continue
		case "]":
			depth--
			continue
		}
		word := argWord.FindString(tok)
		if word == "" {
			continue
		}
		many := strings.HasSuffix(word, "...")
		name := strings.ToLower(strings.TrimSuffix(word, "..."))
		if strings.Contains(name, "|") {
			name = "shell"
		}
		if hasFlag(c.flags, name) {
			continue // given as --NAME (slice's --start/--end)
		}
		var s *Schema
		switch {
		case many:
			s = &Schema{Type: "array", Items: &Schema{Type: "string"}, Description: strings.ToUpper(name) + " arguments"}
			name += "s"
		case intArgs[name]:
			s = &Schema{Type: "integer", Description: strings.ToUpper(name) + " (negative counts from the end)"}
		default:
			s = &Schema{Type: "string", Description: strings.ToUpper(name)}
		}
		if e, ok := flagEnums[c.name+"."+name]; ok {
			s.Enum = e
		}
		t.InputSchema.Properties[name] = s
		t.Args = append(t.Args, name)
		if depth == 0 {
			t.InputSchema.Required = append(t.InputSchema.Required, name)
		}
	}
	for _, f := range c.flags {
		t.InputSchema.Properties[f.Names()[0]] = flagSchema(c.name, f)
	}
	t.InputSchema.Required = append(t.InputSchema.Required, requiredFlags[c.name]...)
	return t
}

func hasFlag(fs []ucli.Flag, name string) bool {
	for _, f := range fs {
		if f.Names()[0] == name {
			return true
		}
	}
	return false
}

func flagSchema(cmd string, f ucli.Flag) *Schema {
	s := &Schema{Description: flagUsage(f)}
	if intArgs[f.Names()[0]] {
		s.Type = "integer"
		return s
	}
	switch ff := f.(type) {
	case *ucli.BoolFlag:
		s.Type = "boolean"
	case *ucli.IntFlag:
		s.Type = "integer"
		if ff.Value != 0 {
			s.Default = ff.Value
		}
	case *ucli.Int64Flag:
		s.Type = "integer"
		if ff.Value != 0 {
			s.Default = ff.Value
		}
	case *ucli.StringSliceFlag:
		s.Type, s.Items = "array", &Schema{Type: "string"}
	case *ucli.StringFlag:
		s.Type = "string"
		if ff.Value != "" {
			s.Default = ff.Value
		}
	default:
		s.Type = "string"
	}
	if e, ok := flagEnums[cmd+"."+f.Names()[0]]; ok {
		s.Enum = e
	}
	return s
}
