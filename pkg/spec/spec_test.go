package spec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

type result struct {
	Name  string   `json:"name"`
	Next  *int64   `json:"next"`
	Items []string `json:"items"`
	Note  string   `json:"note,omitempty"`
	inner int
	Embedded
}

type Embedded struct {
	Truncated bool `json:"truncated"`
}

var op = &Op{
	Name: "demo", Class: Read, Summary: "demo", Examples: []Example{{Cmd: "demo a", Says: "demo"}}, Result: result{},
	Args: []Arg{{Name: "path", Meta: "PATH", Help: "the file", Use: sandbox.NeedReadFile}, {Name: "rest", Meta: "X", Help: "more", Many: true, Optional: true}},
	Options: []Option{
		{Name: "count-max", Short: "m", Type: Int, Meta: "N", Min: Int64(1), Max: Int64(9), Help: "a bound"},
		{Name: "mode", Type: String, Meta: "M", Enum: []string{"a", "b"}, Default: "a", Help: "a mode"},
		{Name: "tags", Type: Strings, Meta: "T", Help: "tags"},
		{Name: "pairs", Type: Objects, Help: "pairs", Fields: []Option{{Name: "k", Type: String, ToolRequired: true, Help: "key"}}},
	},
}

func code(err error) fserr.Code {
	if e := fserr.AsError(err); e != nil {
		return e.Code
	}
	return ""
}

func TestUsageAndArgs(t *testing.T) {
	if got := op.Usage(); got != "PATH [X...]" {
		t.Errorf("Usage = %q", got)
	}
	in := NewInput(op)
	if err := in.SetArgs([]string{"f", "g", "h"}); err != nil || in.String("path") != "f" || strings.Join(in.Strings("rest"), ",") != "g,h" {
		t.Errorf("SetArgs: %v %q %q", err, in.String("path"), in.Strings("rest"))
	}
	if err := NewInput(op).SetArgs(nil); code(err) != fserr.CodeUsage {
		t.Errorf("no PATH: %v", err)
	}
	if in.String("mode") != "a" {
		t.Errorf("default mode %q", in.String("mode"))
	}
}

func TestFromJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		code fserr.Code
	}{
		{`{"path":"f"}`, ""},
		{`{"path":"f","count_max":3,"mode":"b","tags":["x"],"pairs":[{"k":"v"}]}`, ""},
		{`{}`, fserr.CodeUsage},                           // path required
		{`{"path":"f","count_max":0}`, fserr.CodeUsage},   // below the minimum
		{`{"path":"f","count_max":10}`, fserr.CodeUsage},  // above the maximum
		{`{"path":"f","count_max":1.5}`, fserr.CodeUsage}, // not an integer
		{`{"path":"f","mode":"c"}`, fserr.CodeUsage},      // not in the enum
		{`{"path":"f","count-max":3}`, fserr.CodeUsage},   // the CLI spelling is no property
		{`{"path":"f","pairs":"[{}]"}`, fserr.CodeUsage},  // JSON in a string
		{`{"path":1}`, fserr.CodeUsage},                   // wrong type
		{`[1]`, fserr.CodeUsage},                          // not an object
	} {
		_, err := FromJSON(op, json.RawMessage(c.in))
		if code(err) != c.code {
			t.Errorf("FromJSON(%s) = %v, want code %q", c.in, err, c.code)
		}
	}
}

func TestOutputSchema(t *testing.T) {
	s := OutputSchema(op)
	b, _ := json.Marshal(s)
	for _, want := range []string{`"next":{"type":["integer","null"]}`, `"items":{"type":["array","null"]`, `"truncated":{"type":"boolean"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output schema lacks %s: %s", want, b)
		}
	}
	if strings.Contains(string(b), "inner") {
		t.Error("an unexported field is in the schema")
	}
	var back Schema
	if err := json.Unmarshal(b, &back); err != nil || !back.Properties["next"].Nullable || back.Properties["next"].Type != "integer" {
		t.Errorf("round trip: %v %+v", err, back.Properties["next"])
	}
	if got := Outline(op); got != "{name, next, items[], truncated, note?}" {
		t.Errorf("Outline = %q", got)
	}
}

func TestRegistryRefusesBadDescriptors(t *testing.T) {
	for name, bad := range map[string]*Op{
		"duplicate flag": {Name: "x", Class: Read, Summary: "x", Examples: op.Examples, Options: []Option{{Name: "a", Type: Bool, Help: "a"}, {Name: "b", Short: "a", Type: Bool, Help: "b"}}},
		"no example":     {Name: "x", Class: Read, Summary: "x"},
		"bad class":      {Name: "x", Class: "odd", Summary: "x", Examples: op.Examples},
		"help":           {Name: "x", Class: Read, Summary: "x", Examples: op.Examples, Options: []Option{{Name: "help", Type: Bool, Help: "h"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewRegistry took it", name)
				}
			}()
			NewRegistry(bad)
		}()
	}
}

// FuzzFromJSON: any tool-call arguments give an input or a usage error,
// never a panic.
func FuzzFromJSON(f *testing.F) {
	f.Add(`{"path":"f","count_max":3,"pairs":[{"k":"v"}]}`)
	f.Add(`{"path":null}`)
	f.Add(`{"count_max":1e400}`)
	f.Fuzz(func(t *testing.T, s string) {
		in, err := FromJSON(op, json.RawMessage(s))
		if err != nil && code(err) != fserr.CodeUsage {
			t.Fatalf("FromJSON(%q): %v, want usage", s, err)
		}
		if err == nil && !in.IsSet("path") {
			t.Fatalf("FromJSON(%q) accepted a call without the required path", s)
		}
		if err == nil && in.IsSet("count-max") && (in.Int("count-max") < 1 || in.Int("count-max") > 9) {
			t.Fatalf("FromJSON(%q) let count_max %d past its bounds", s, in.Int("count-max"))
		}
	})
}

// TestRegistryFlagNames: each flag name of an operation (long names,
// -json forms, one-letter forms, aliases, and --help and -h) is taken
// once; an option may take -h for its own (grep -h), and then only one.
func TestRegistryFlagNames(t *testing.T) {
	opt := func(name, short string, aliases ...string) Option {
		return Option{Name: name, Short: short, Aliases: aliases, Type: Bool, Help: name}
	}
	for _, c := range []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"distinct", []Option{opt("a", "x"), opt("b", "y", "bee")}, true},
		{"own -h", []Option{opt("no-filename", "h"), opt("b", "")}, true},
		{"alias of a long name", []Option{opt("a", ""), opt("b", "", "a")}, false},
		{"short of another's", []Option{opt("a", "x"), opt("b", "x")}, false},
		{"long -h", []Option{opt("h", "")}, false},
		{"alias help", []Option{opt("a", "", "help")}, false},
		{"two own -h", []Option{opt("a", "h"), opt("b", "h")}, false},
		{"json form", []Option{{Name: "x", Type: Objects, Help: "x"}, opt("x-json", "")}, false},
	} {
		func() {
			defer func() {
				if got := recover() == nil; got != c.ok {
					t.Errorf("%s: taken %v, want %v", c.name, got, c.ok)
				}
			}()
			NewRegistry(&Op{Name: "x", Class: Read, Summary: "x", Examples: op.Examples, Options: c.opts})
		}()
	}
}
