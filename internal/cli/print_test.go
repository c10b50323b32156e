package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestPrinterFor: the printer is picked once from the format, and its
// sink is the form the format prints (items as values, the text form) for
// a streaming call, or none (the result collects them): --jq collects, and
// so does json for a result type without a list.
func TestPrinterFor(t *testing.T) {
	grep, _ := ops.Registry.Lookup("grep")
	ls, _ := ops.Registry.Lookup("ls")
	jq := &shape{jq: func(context.Context, any) JQOutputs { return nil }}
	for _, c := range []struct {
		name    string
		format  string
		shape   *shape
		op      *spec.Op
		streams bool
		sink    string // "", "item" or "text"
		printer string
	}{
		{"json streams into the object", formatJSON, nil, grep, true, "item", "*cli.jsonPrinter"},
		{"json --jq collects", formatJSON, jq, grep, true, "", "*cli.jsonPrinter"},
		{"json of no list collects", formatJSON, nil, &spec.Op{Result: struct{ N int }{}}, true, "", "*cli.jsonPrinter"},
		{"ndjson streams a line each", formatNDJSON, nil, grep, true, "item", "*cli.ndjsonPrinter"},
		{"text streams its text form", formatText, nil, grep, true, "text", "*cli.textPrinter"},
		{"a whole result", formatText, nil, ls, false, "", "*cli.textPrinter"},
		{"a whole ndjson list", formatNDJSON, nil, ls, false, "", "*cli.ndjsonPrinter"},
	} {
		p := &output{w: &bytes.Buffer{}, errw: &bytes.Buffer{}, format: c.format, shape: c.shape}
		pr := p.printerFor(c.op, c.streams)
		sink := ""
		switch s := pr.Sink(); {
		case s == nil:
		case s.Text != nil && s.Item == nil:
			sink = "text"
		case s.Item != nil && s.Text == nil:
			sink = "item"
		default:
			sink = "both"
		}
		if got := fmt.Sprintf("%T", pr); got != c.printer || sink != c.sink {
			t.Errorf("%s: %s with sink %q, want %s with %q", c.name, got, sink, c.printer, c.sink)
		}
	}
}

// TestSinkIdle: a streaming sink passes on what it holds when the
// operation waits only where stdout's reader reads as fsbox writes.
func TestSinkIdle(t *testing.T) {
	grep, _ := ops.Registry.Lookup("grep")
	for _, live := range []bool{false, true} {
		var out bytes.Buffer
		p := &output{w: &out, errw: &bytes.Buffer{}, format: formatNDJSON, live: live}
		s := p.printerFor(grep, true).Sink()
		if err := s.Item("a.txt"); err != nil {
			t.Fatal(err)
		}
		if (s.Idle != nil) != live {
			t.Fatalf("live %v: Idle set %v", live, s.Idle != nil)
		}
		if s.Idle != nil {
			s.Idle()
		}
		if want := map[bool]string{false: "", true: "\"a.txt\"\n"}[live]; out.String() != want {
			t.Errorf("live %v: stdout %q before the end, want %q", live, out.String(), want)
		}
	}
}

// TestExitOf: a printed result's outcome is the call's end, in SPEC §2's
// order: a failing path's class, then a policy's cut (9), then no match
// (1); the caller's own cut and a quiet match are no failure.
func TestExitOf(t *testing.T) {
	denied := &fserr.Error{Code: fserr.CodeDenied, Path: "secret"}
	for _, c := range []struct {
		name string
		o    spec.Outcome
		want string // the code, "" for success
	}{
		{"whole", spec.Outcome{}, ""},
		{"a path failed", spec.Outcome{Failures: &spec.Failures{First: denied}, Cut: &spec.Cut{Limit: "max_results"}, NoMatch: true}, "denied"},
		{"max_results", spec.Outcome{Cut: &spec.Cut{Limit: "max_results"}, NoMatch: true}, "truncated"},
		{"max_result_bytes", spec.Outcome{Cut: &spec.Cut{Limit: "max_result_bytes"}}, "truncated"},
		{"the deadline", spec.Outcome{Cut: &spec.Cut{Limit: "timeout"}}, "truncated"},
		{"--limit", spec.Outcome{Cut: &spec.Cut{Limit: "limit"}}, ""},
		{"no match", spec.Outcome{Cut: &spec.Cut{Limit: "limit"}, NoMatch: true}, "no_match"},
	} {
		got := ""
		if err := exitOf(c.o); err != nil {
			got = string(fserr.AsError(err).Code)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if err := quietEnd(spec.Outcome{Quiet: true, Failures: &spec.Failures{First: denied}}); err != nil {
		t.Errorf("grep -q with a match: %v", err)
	}
	if err := quietEnd(spec.Outcome{Quiet: true, NoMatch: true, Failures: &spec.Failures{First: denied}}); fserr.AsError(err).Code != fserr.CodeDenied {
		t.Errorf("grep -q without a match, a path failed: %v", err)
	}
}

// TestTextPrinterStderr: the text form's stderr after its output: the
// cut's note, then the notes, then each failing path and how many more.
func TestTextPrinterStderr(t *testing.T) {
	var out, errw bytes.Buffer
	p := &output{w: &out, errw: &errw, format: formatText, limitValue: func(limit string) string {
		if limit == "max_results" {
			return "1"
		}
		return ""
	}}
	grep, _ := ops.Registry.Lookup("grep")
	pr := p.printerFor(grep, true)
	pr.Sink().Text.WriteString("a.txt:1:x\n")
	o := spec.Outcome{Cut: &spec.Cut{Limit: "max_results", NextCursor: "C"}, Notes: []string{"binary file b matches"},
		Failures: &spec.Failures{First: &fserr.Error{Code: fserr.CodeNotFound}, Shown: []*fserr.Error{{Code: fserr.CodeNotFound, Msg: "nope does not exist"}}, More: 3}}
	if err := pr.Done(ops.GrepResult{}, o); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"fsbox: truncated: the max_results limit (1) cut the output after 1 line",
		"fsbox:   the rest: the same command with --cursor C",
		"fsbox: binary file b matches",
		"fsbox: not_found: nope does not exist",
		"fsbox: and 3 more failing paths", ""}, "\n")
	if out.String() != "a.txt:1:x\n" || errw.String() != want {
		t.Errorf("stdout %q, stderr\n%s\nwant\n%s", out.String(), errw.String(), want)
	}
}
