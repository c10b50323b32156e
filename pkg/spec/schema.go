package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Schema is the part of JSON Schema (draft 2020-12) the tools use: what
// function-calling hosts accept in non-strict mode and MCP accepts as
// inputSchema and outputSchema. No $ref, so no cycles.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Default              any                `json:"default,omitempty"`
	Minimum              *int64             `json:"minimum,omitempty"`
	Maximum              *int64             `json:"maximum,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	// Nullable: the value may also be null (a Go pointer or slice that
	// JSON writes as null); the type is then written ["TYPE", "null"].
	Nullable bool `json:"-"`
}

// MarshalJSON writes a nullable type as a type array, and an object's
// properties even when it has none (some hosts refuse an object schema
// without them).
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	var b []byte
	var err error
	if !s.Nullable || s.Type == "" {
		b, err = json.Marshal((*plain)(s))
	} else {
		b, err = json.Marshal(struct {
			Type []string `json:"type"`
			*plain
		}{[]string{s.Type, "null"}, (*plain)(s)})
	}
	if err == nil && s.Type == "object" && s.Properties != nil && len(s.Properties) == 0 {
		b = append([]byte(`{"properties":{},`), b[1:]...)
	}
	return b, err
}

// PathHelp is how every path property says where a relative path leads.
const PathHelp = "a path; a relative one resolves against the policy's workdir, an absolute one must lie in the workdir, a write root or a read root"

// Required lists the properties every tool call must give.
func Required(op *Op) []string {
	var out []string
	for _, a := range op.Args {
		if !a.Optional && !a.CLIOnly {
			out = append(out, Property(a.Name))
		}
	}
	for _, o := range op.Options {
		if o.ToolRequired {
			out = append(out, Property(o.Name))
		}
	}
	return out
}

// InputSchema is the tool face's input: one property per argument (in
// order) and per option that is not CLI-only.
func InputSchema(op *Op) *Schema {
	no := false
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, Required: Required(op), AdditionalProperties: &no}
	for _, a := range op.Args {
		if a.CLIOnly {
			continue
		}
		p := &Schema{Type: jsonType(a.Type), Description: argHelp(a), Enum: a.Enum}
		if a.Many {
			p = &Schema{Type: "array", Items: &Schema{Type: "string"}, Description: argHelp(a)}
			if !a.Optional {
				p.Description += " (at least one)"
			}
		}
		s.Properties[Property(a.Name)] = p
	}
	for i := range op.Options {
		o := &op.Options[i]
		if o.CLIOnly {
			continue
		}
		s.Properties[Property(o.Name)] = optionSchema(o)
	}
	return s
}

func argHelp(a Arg) string {
	h := a.Help
	if a.Use != sandbox.NeedNone {
		h += " (" + PathHelp + ")"
	}
	return h
}

func jsonType(t Type) string {
	switch t {
	case Bool:
		return "boolean"
	case Int:
		return "integer"
	case Strings, Objects:
		return "array"
	}
	return "string"
}

func optionSchema(o *Option) *Schema {
	s := &Schema{Type: jsonType(o.Type), Description: OptionHelp(o), Enum: o.Enum, Minimum: o.Min, Maximum: o.Max}
	switch o.Type {
	case Strings:
		s.Items = &Schema{Type: "string"}
	case Objects:
		no := false
		item := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: &no}
		for i := range o.Fields {
			f := &o.Fields[i]
			item.Properties[Property(f.Name)] = optionSchema(f)
			if f.ToolRequired {
				item.Required = append(item.Required, Property(f.Name))
			}
		}
		s.Items = item
	}
	if o.Default != nil {
		s.Default = o.Default
	}
	return s
}

// OptionHelp is an option's help with its unit, default and the limit it
// narrows: the text every face shows.
func OptionHelp(o *Option) string {
	h := o.Help
	var notes []string
	if o.Unit != "" {
		notes = append(notes, "in "+o.Unit)
	}
	switch {
	case o.DefaultText != "":
		notes = append(notes, "default: "+o.DefaultText)
	case o.Default != nil:
		notes = append(notes, fmt.Sprintf("default: %v", o.Default))
	}
	if o.Narrows != "" {
		notes = append(notes, "can only lower the policy's "+o.Narrows)
	}
	if len(notes) > 0 {
		h += " (" + strings.Join(notes, "; ") + ")"
	}
	return h
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Schema) UnmarshalJSON(b []byte) error {
	type plain Schema
	var v struct {
		Type json.RawMessage `json:"type"`
		*plain
	}
	v.plain = (*plain)(s)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var types []string
	if len(v.Type) > 0 && v.Type[0] == '[' {
		if err := json.Unmarshal(v.Type, &types); err != nil {
			return err
		}
	} else if len(v.Type) > 0 {
		var t string
		if err := json.Unmarshal(v.Type, &t); err != nil {
			return err
		}
		types = []string{t}
	}
	s.Type, s.Nullable = "", false
	for _, t := range types {
		if t == "null" {
			s.Nullable = true
		} else {
			s.Type = t
		}
	}
	return nil
}

// OutputSchema describes the JSON of op's result, from its Go type.
func OutputSchema(op *Op) *Schema {
	if op.Result == nil {
		return &Schema{Type: "object"}
	}
	return typeSchema(reflect.TypeOf(op.Result), 0)
}

func typeSchema(t reflect.Type, depth int) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > 8 {
		return &Schema{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string"} // []byte is base64 in JSON
		}
		return &Schema{Type: "array", Items: typeSchema(t.Elem(), depth+1)}
	case reflect.Map:
		return &Schema{Type: "object"}
	case reflect.Struct:
		s := &Schema{Type: "object", Properties: map[string]*Schema{}}
		addFields(s, t, depth, false)
		return s
	}
	return &Schema{}
}

// addFields adds a struct's JSON fields to s, flattening embedded structs
// as encoding/json does; allOptional: none of them is required (an
// embedded struct tagged schema:"optional", which some values leave out
// whole).
func addFields(s *Schema, t reflect.Type, depth int, allOptional bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		// schema:"-": a field a value stores but no output shows.
		if tag == "-" || f.Tag.Get("schema") == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omit := strings.Contains(opts, "omitempty")
		// schema:"optional": a field some values leave out though the
		// type always writes it (a binary file's match has no text).
		optional := allOptional || omit || f.Tag.Get("schema") == "optional"
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, depth, optional)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		p := typeSchema(f.Type, depth+1)
		k := f.Type.Kind()
		if !omit && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map) && p.Type != "" {
			c := *p
			c.Nullable = true // nil is written as null
			p = &c
		}
		s.Properties[name] = p
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
}

// Outline is a one-line sketch of a result's JSON for the man page:
// "{path, size, entries[{name, type}]}".
func Outline(op *Op) string {
	if op.Result == nil {
		return ""
	}
	return outline(OutputSchema(op), 0)
}

func outline(s *Schema, depth int) string {
	switch {
	case s.Type == "array" && s.Items != nil && s.Items.Type == "object" && depth < 3:
		return "[" + outline(s.Items, depth+1) + "]"
	case s.Type == "array":
		return "[]"
	case s.Type != "object" || len(s.Properties) == 0 || depth >= 3:
		if s.Type == "object" {
			return "{}"
		}
		return ""
	}
	var parts []string
	for _, name := range fieldOrder(s) {
		p := s.Properties[name]
		sub := outline(p, depth+1)
		opt := ""
		if !contains(s.Required, name) {
			opt = "?"
		}
		parts = append(parts, name+opt+sub)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fieldOrder lists a schema's properties required first (in declaration
// order), then the optional ones, sorted.
func fieldOrder(s *Schema) []string {
	out := append([]string(nil), s.Required...)
	var rest []string
	for name := range s.Properties {
		if !contains(s.Required, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
