package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// editCall runs edit through its descriptor on a tool call's arguments,
// as every face does.
func editCall(sb *sandbox.Sandbox, args map[string]any) (*EditResult, error) {
	op, _ := Registry.Lookup("edit")
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	in, err := spec.FromJSON(op, raw)
	if err != nil {
		return nil, err
	}
	v, err := op.Run(context.Background(), sb, in)
	if err != nil {
		return nil, err
	}
	return v.(*EditResult), nil
}

// edits is a list of edits as a tool call's "edits": old, new pairs.
func edits(pairs ...string) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"old": pairs[i], "new": pairs[i+1]})
	}
	return out
}

// outcome is a result's file content or its error as "code: message".
func editOutcome(t *testing.T, dir string, r *EditResult, err error) string {
	t.Helper()
	if err != nil {
		e := fserr.AsError(err)
		if e == nil {
			return "error: " + err.Error()
		}
		return string(e.Code) + ": " + e.Msg
	}
	b, rerr := os.ReadFile(filepath.Join(dir, "f"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(b)
}

func matchesOf(r *EditResult) string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, m := range r.Edits {
		parts = append(parts, fmt.Sprintf("%d:%s:%d-%d:%d", m.Index, m.Match, m.FirstLine, m.LastLine, m.Replacements))
	}
	return strings.Join(parts, " ")
}

// TestEditSequential: with sequential, edit k is matched against the text
// edits 1..k-1 left; without it, against the original, as before.
func TestEditSequential(t *testing.T) {
	const orig = "[server]\nhost = localhost\nport = 80\ndebug = false\n"
	for _, c := range []struct {
		name       string
		file       string
		edits      []map[string]any
		loose      bool
		plain, seq string // the outcome without and with sequential
		report     string // with sequential: index:match:first-last:replacements
	}{
		{
			name:  "an edit matches what an earlier one wrote",
			edits: edits("port = 80", "port = 8080", "port = 8080", "port = 9090"),
			plain: "text_not_found: edit 2: the old text is not in f; closest: line 3",
			seq:   "[server]\nhost = localhost\nport = 9090\ndebug = false\n",
		},
		{
			name:   "edits that share bytes are fine one after another",
			edits:  edits("port = 80\ndebug", "port = 81\nverbose", "81\nverbose = false", "82\nverbose = true"),
			plain:  "text_not_found: edit 2: the old text is not in f; closest: line 3",
			seq:    "[server]\nhost = localhost\nport = 82\nverbose = true\n",
			report: "1:exact:3-4:1 2:exact:3-4:1",
		},
		{
			name:   "an earlier edit moves the lines a later one reports",
			edits:  edits("[server]\n", "# top\n\n[server]\n", "debug = false", "debug = true"),
			plain:  "[server]\nhost = localhost\nport = 80\ndebug = false\n", // not reached: checked below
			seq:    "# top\n\n[server]\nhost = localhost\nport = 80\ndebug = true\n",
			report: "1:exact:1-1:1 2:exact:6-6:1",
		},
		{
			name:  "a later edit's old text was removed by an earlier one",
			edits: edits("host = localhost\n", "", "host = localhost", "host = example.org"),
			plain: "usage: edits 1 and 2 overlap at line 2",
			seq:   "text_not_found: edit 2: the old text is not in f as edit 1 left it (the original text has it: an edit before this one changed it); ",
		},
		{
			name:  "a later edit's old text is made ambiguous by an earlier one",
			edits: edits("host = localhost", "port = 80", "port = 80", "port = 8"),
			plain: "[server]\nport = 80\nport = 8\ndebug = false\n",
			seq:   "ambiguous: edit 2: the old text occurs 2 times in f as edit 1 left it, at 2:1, 3:1 (line:column)",
		},
		{
			name:  "the third edit fails: messages name edits 1 to 2",
			edits: edits("port = 80", "port = 81", "debug = false", "debug = true", "port = 80", "x"),
			plain: "usage: edits 1 and 3 overlap at line 3",
			seq:   "text_not_found: edit 3: the old text is not in f as edits 1 to 2 left it (the original text has it",
		},
		{
			name:   "loose-indent one after another",
			file:   "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			edits:  edits("if x {\n    y()\n}", "if x {\n    y()\n    z()\n}", "    z()", "    z(1)"),
			loose:  true,
			plain:  "text_not_found: edit 2: the old text is not in f, not even line by line",
			seq:    "func f() {\n\tif x {\n\t\ty()\n\t\tz(1)\n\t}\n}\n",
			report: "1:indent:2-4:1 2:indent:4-4:1",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			if file == "" {
				file = orig
			}
			for _, seq := range []bool{false, true} {
				sb, dir := testSandbox(t)
				os.WriteFile(filepath.Join(dir, "f"), []byte(file), 0o644)
				args := map[string]any{"path": "f", "edits": c.edits, "loose_indent": c.loose}
				if seq {
					args["sequential"] = true
				}
				r, err := editCall(sb, args)
				got, want := editOutcome(t, dir, r, err), c.plain
				if seq {
					want = c.seq
				}
				if c.name == "an earlier edit moves the lines a later one reports" && !seq {
					// Each edit on its own: the report is in original lines.
					if err != nil || matchesOf(r) != "1:exact:1-1:1 2:exact:4-4:1" {
						t.Fatalf("without sequential: %v %s", err, matchesOf(r))
					}
					continue
				}
				if !strings.HasPrefix(got, want) {
					t.Fatalf("sequential=%v: got %q, want %q", seq, got, want)
				}
				if err != nil {
					if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != file {
						t.Fatalf("a failed edit changed the file: %q", b)
					}
				}
				if seq && c.report != "" && matchesOf(r) != c.report {
					t.Errorf("report %q, want %q", matchesOf(r), c.report)
				}
			}
		})
	}
}

// TestEditLooseIndent: the line-by-line fallback, its re-indentation, its
// line endings, and when it is not used.
func TestEditLooseIndent(t *testing.T) {
	for _, c := range []struct {
		name, file, old, new string
		all                  bool
		want                 string // the file after, or code: message prefix
		report               string
	}{
		{
			name:   "tabs in the file, spaces in the old text, CRLF kept",
			file:   "func f() {\r\n\tif x {\r\n\t\ty()\r\n\t}\r\n}\r\n",
			old:    "    if x {\n        y()\n    }\n",
			new:    "    if x {\n        y()\n        z()\n    }\n    w()\n",
			want:   "func f() {\r\n\tif x {\r\n\t\ty()\r\n\t\tz()\r\n\t}\r\n\tw()\r\n}\r\n",
			report: "1:indent:2-4:1",
		},
		{
			name:   "old text without indentation; deeper and shallower new lines",
			file:   "class A:\n    def f(self):\n        return 1\n",
			old:    "def f(self):\n    return 1",
			new:    "def f(self):\n    if self:\n        return 2\n    return 1\nx = 1",
			want:   "class A:\n    def f(self):\n        if self:\n            return 2\n        return 1\n    x = 1\n",
			report: "1:indent:2-3:1",
		},
		{
			name:   "a new line indented less than any old line gets the first line's indentation",
			file:   "\t\tone\n\t\ttwo\n",
			old:    "  one\n  two",
			new:    "one\n  2",
			want:   "\t\tone\n\t\t2\n",
			report: "1:indent:1-2:1",
		},
		{
			name:   "blank new lines are written empty; trailing blanks are ignored",
			file:   "\tfoo()   \n\tbar()\n",
			old:    "foo()\nbar()",
			new:    "foo()\n   \nbar()",
			want:   "\tfoo()\n\n\tbar()\n",
			report: "1:indent:1-2:1",
		},
		{
			name:   "a last line without newline stays without",
			file:   "a\n\tb\n\tc",
			old:    "  b\n  c\n",
			new:    "  c\n  b\n",
			want:   "a\n\tc\n\tb",
			report: "1:indent:2-3:1",
		},
		{
			name:   "an empty new text deletes the lines",
			file:   "a\n\tb\n\tc\nd\n",
			old:    "b\nc",
			new:    "",
			want:   "a\nd\n",
			report: "1:indent:2-3:1",
		},
		{
			name: "ambiguous",
			file: "if a {\n\tx()\n}\nif b {\n\tx()\n}\n",
			old:  "    x()\n}",
			new:  "y()\n}",
			want: "ambiguous: the old text is not in f as it is, and occurs 2 times when each line's leading and trailing blanks are ignored, at lines 2-3, 5-6: include more of the surrounding lines in the old text to make it unique",
		},
		{
			name:   "all replaces every loose match, each re-indented to its place",
			file:   "if a {\n\tx()\n}\n\tif b {\n\t\tx()\n\t}\n",
			old:    "  x()\n}",
			new:    "  y()\n}",
			all:    true,
			want:   "if a {\n\ty()\n}\n\tif b {\n\t\ty()\n\t}\n",
			report: "1:indent:2-6:2",
		},
		{
			name:   "an exact match is preferred over a loose one",
			file:   "  foo()\n\tfoo()\n",
			old:    "  foo()",
			new:    "  bar()",
			want:   "  bar()\n\tfoo()\n",
			report: "1:exact:1-1:1",
		},
		{
			name:   "an exact match in the middle of a line is still exact",
			file:   "\tx := f(a)\n",
			old:    "f(a)",
			new:    "f(b)",
			want:   "\tx := f(b)\n",
			report: "1:exact:1-1:1",
		},
		{
			name: "lines must match whole",
			file: "\tx := f(a)\n\ty := 2\n",
			old:  "f(a)\n  y := 2",
			new:  "z",
			want: "text_not_found: the old text is not in f, not even line by line with leading and trailing blanks ignored; closest:",
		},
		{
			name: "an exact duplicate is ambiguous, with no fallback",
			file: "\tfoo()\n\tfoo()\n",
			old:  "foo()",
			new:  "bar()",
			want: "ambiguous: the old text occurs 2 times in f, at 1:2, 2:2",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb, dir := testSandbox(t)
			os.WriteFile(filepath.Join(dir, "f"), []byte(c.file), 0o644)
			args := map[string]any{"path": "f", "old": c.old, "new": c.new, "loose_indent": true}
			if c.all {
				args["all"] = true
			}
			r, err := editCall(sb, args)
			got := editOutcome(t, dir, r, err)
			if err != nil && !strings.HasPrefix(got, c.want) || err == nil && got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if err == nil && matchesOf(r) != c.report {
				t.Errorf("report %q, want %q", matchesOf(r), c.report)
			}
			if err != nil {
				if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != c.file {
					t.Fatalf("a failed edit changed the file: %q", b)
				}
			}
			// Without loose-indent, a loose case is text_not_found.
			delete(args, "loose_indent")
			os.WriteFile(filepath.Join(dir, "f"), []byte(c.file), 0o644)
			if r != nil && r.Edits[0].Match == "indent" {
				if _, err := editCall(sb, args); fserr.AsError(err) == nil || fserr.AsError(err).Code != fserr.CodeTextNotFound {
					t.Errorf("without loose-indent: %v, want text_not_found", err)
				}
			}
		})
	}
}

// TestEditReportShape: edits[] is in the result only when a list of edits
// or one of the new options is given, so a plain edit's JSON is as it was.
func TestEditReportShape(t *testing.T) {
	sb, dir := testSandbox(t)
	for _, c := range []struct {
		args map[string]any
		want bool
	}{
		{map[string]any{"old": "a", "new": "b"}, false},
		{map[string]any{"old": "a", "new": "b", "sequential": true}, true},
		{map[string]any{"old": "a", "new": "b", "loose_indent": true}, true},
		{map[string]any{"edits": edits("a", "b")}, true},
	} {
		os.WriteFile(filepath.Join(dir, "f"), []byte("a\n"), 0o644)
		c.args["path"] = "f"
		r, err := editCall(sb, c.args)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		if got := bytes.Contains(b, []byte(`"edits":[{"index":1,"match":"exact","first_line":1,"last_line":1,"replacements":1}]`)); got != c.want {
			t.Errorf("%v: %s", c.args, b)
		}
	}
}

// TestEditDryRunNewOptions: a dry run with both options shows the diff
// and the report and changes nothing.
func TestEditDryRunNewOptions(t *testing.T) {
	sb, dir := journaled(t, map[string]string{"f": "a {\r\n\tb\r\n}\r\n"}, nil)
	r, err := editCall(sb, map[string]any{"path": "f", "dry_run": true, "sequential": true, "loose_indent": true,
		"edits": edits("a {\n  b\n}", "a {\n  c\n}", "c", "d")})
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a {\r\n-\tb\r\n+\td\r\n }\r\n"
	if r.Diff != wantDiff || !r.DryRun || r.ChangeID != nil || r.Replacements != 2 || matchesOf(r) != "1:indent:1-3:1 2:exact:2-2:1" {
		t.Fatalf("got %+v", r)
	}
	if r.SHA256 != sha256Hex([]byte("a {\r\n\td\r\n}\r\n")) {
		t.Errorf("sha256 %s is not the edited content's", r.SHA256)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "a {\r\n\tb\r\n}\r\n" {
		t.Errorf("a dry run changed the file: %q", b)
	}
	if h, _ := History(context.Background(), sb, "", 0); h.Count != 0 {
		t.Errorf("a dry run was journaled: %+v", h.Changes)
	}
}

// TestEditEmptyList: edits [] changes nothing and journals nothing, yet
// the file is checked as for any edit.
func TestEditEmptyList(t *testing.T) {
	ctx := context.Background()
	sb, dir := journaled(t, map[string]string{"f": "one\n", "g": "two\n"}, nil)
	if _, err := editCall(sb, map[string]any{"path": "g", "old": "two", "new": "2"}); err != nil {
		t.Fatal(err)
	}
	before, _ := History(ctx, sb, "", 0)
	for _, extra := range []map[string]any{{}, {"sequential": true, "loose_indent": true}, {"dry_run": true}} {
		args := map[string]any{"path": "f", "edits": []any{}}
		for k, v := range extra {
			args[k] = v
		}
		r, err := editCall(sb, args)
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		if r.Diff != "" || r.Replacements != 0 || r.ChangeID != nil || len(r.Edits) != 0 || r.SHA256 != sha256Hex([]byte("one\n")) || r.Path != "f" {
			t.Errorf("%v: %+v", extra, r)
		}
	}
	// The same as any edit: absent is not_found, outside is denied, a
	// wrong expect-sha256 is conflict.
	for _, c := range []struct {
		args map[string]any
		code fserr.Code
	}{
		{map[string]any{"path": "nope"}, fserr.CodeNotFound},
		{map[string]any{"path": "/etc/passwd"}, fserr.CodeDenied},
		{map[string]any{"path": "f", "expect_sha256": strings.Repeat("0", 64)}, fserr.CodeConflict},
	} {
		c.args["edits"] = []any{}
		if _, err := editCall(sb, c.args); fserr.AsError(err) == nil || fserr.AsError(err).Code != c.code {
			t.Errorf("%v: %v, want %s", c.args, err, c.code)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "one\n" {
		t.Errorf("the file changed: %q", b)
	}
	after, _ := History(ctx, sb, "", 0)
	if after.Count != before.Count {
		t.Errorf("history went from %d to %d changes", before.Count, after.Count)
	}
	// Without edits at all, it is still usage.
	if _, err := editCall(sb, map[string]any{"path": "f"}); fserr.AsError(err) == nil || fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("no old, new or edits: %v", err)
	}
}

// TestEditNewOptionsChangeNothingExact: when every edit matches exactly
// once in the original and none overlaps another, sequential and
// loose-indent give the same file and diff as without them.
func TestEditNewOptionsChangeNothingExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	words := []string{"alpha", "beta", "\tgamma", "  delta", "", "x = 1", "}", "{"}
	sb, dir := testSandbox(t)
	p := filepath.Join(dir, "f")
	for iter := 0; iter < 300; iter++ {
		var b strings.Builder
		nl := "\n"
		if rng.Intn(3) == 0 {
			nl = "\r\n"
		}
		for i := rng.Intn(40); i >= 0; i-- {
			fmt.Fprintf(&b, "%s %d%s", words[rng.Intn(len(words))], rng.Intn(20), nl)
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail")
		}
		data := b.String()
		// Pick non-overlapping pieces that occur once, in random order.
		var specs []EditSpec
		taken := make([]bool, len(data)+1)
		for tries := 0; tries < 20 && len(specs) < 4; tries++ {
			i := rng.Intn(len(data))
			n := 1 + rng.Intn(min(12, len(data)-i))
			old := data[i : i+n]
			if strings.Count(data, old) != 1 || strings.Contains(old, "\r") && !strings.Contains(old, "\r\n") {
				continue
			}
			free := true
			for k := i; k < i+n; k++ {
				free = free && !taken[k]
			}
			if !free {
				continue
			}
			for k := i; k < i+n; k++ {
				taken[k] = true
			}
			// New text of characters the file has not: no edit can
			// match what another wrote, or across it.
			specs = append(specs, EditSpec{Old: old, New: fmt.Sprintf("«%c»", 'A'+len(specs))})
		}
		if len(specs) == 0 {
			continue
		}
		list := make([]any, len(specs))
		for i, s := range specs {
			list[i] = map[string]any{"old": s.Old, "new": s.New}
		}
		var ref *EditResult
		var refFile string
		for _, opts := range []map[string]any{{}, {"sequential": true}, {"loose_indent": true}, {"sequential": true, "loose_indent": true}} {
			os.WriteFile(p, []byte(data), 0o644)
			args := map[string]any{"path": "f", "edits": list}
			for k, v := range opts {
				args[k] = v
			}
			r, err := editCall(sb, args)
			if err != nil {
				t.Fatalf("%q %+v %v: %v", data, specs, opts, err)
			}
			got, _ := os.ReadFile(p)
			if ref == nil {
				ref, refFile = r, string(got)
				continue
			}
			if string(got) != refFile || r.Diff != ref.Diff || r.Replacements != ref.Replacements || r.SHA256 != ref.SHA256 {
				t.Fatalf("%q %+v with %v:\ngot  %q\n%s\nwant %q\n%s", data, specs, opts, got, r.Diff, refFile, ref.Diff)
			}
			for _, m := range r.Edits {
				if m.Match != "exact" {
					t.Fatalf("%q %+v with %v: edit %d matched %s", data, specs, opts, m.Index, m.Match)
				}
			}
			if _, seq := opts["sequential"]; !seq && matchesOf(r) != matchesOf(ref) {
				t.Fatalf("%q %+v with %v: report %s, want %s", data, specs, opts, matchesOf(r), matchesOf(ref))
			}
		}
	}
}

// TestSequentialDiffComposes: the replacements of edits applied one after
// another, composed over the original, make the edited text, and the diff
// rendered from them is go-udiff's diff of the same byte edits.
func TestSequentialDiffComposes(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	olds := []string{"a\n", "b", "line 1", "c\nline", "tail", "\n", "line 2 ", "x", "X", "Y\n", "1 a\nline 2"}
	news := []string{"", "X", "Y\nZ\n", "W\n", "x", "line", "\n"}
	done := 0
	for iter := 0; iter < 8000; iter++ {
		var b bytes.Buffer
		n := 1 + rng.Intn(12)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d %c\n", i, 'a'+rng.Intn(3))
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail")
		}
		data := b.Bytes()
		var specs []EditSpec
		for k := 1 + rng.Intn(5); k > 0; k-- {
			specs = append(specs, EditSpec{Old: olds[rng.Intn(len(olds))], New: news[rng.Intn(len(news))], All: rng.Intn(2) == 0})
		}
		out, _, set, _, err := applySequential(context.Background(), data, specs, "f", false, 1<<40, "max_write_bytes")
		if err != nil {
			continue
		}
		done++
		// The reference: each edit applied on its own to the text so far.
		want := data
		for _, s := range specs {
			o, _, _, err := editOnce(want, []EditSpec{s})
			if err != nil {
				t.Fatalf("%+v on %q: step failed: %v", specs, data, err)
			}
			want = o
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("%+v on %q: got %q, want %q", specs, data, out, want)
		}
		var ref []udiff.Edit
		it := newSpans(data, set)
		for sp, ok := it.next(); ok; sp, ok = it.next() {
			ref = append(ref, udiff.Edit{Start: sp.start, End: sp.start + len(sp.e.old), New: string(sp.e.new)})
		}
		applied, err := udiff.Apply(string(data), ref)
		if err != nil || applied != string(out) {
			t.Fatalf("%+v on %q: the composed edits give %q, want %q (%v)", specs, data, applied, out, err)
		}
		wantDiff, _ := udiff.ToUnified("a/f", "b/f", string(data), ref, udiff.DefaultContextLines)
		trimLines = false
		got := renderDiff("a/f", "b/f", data, out, set)
		trimLines = true
		if got != wantDiff {
			t.Fatalf("%+v on %q:\ngot\n%s\nwant\n%s", specs, data, got, wantDiff)
		}
		checkTrimmedDiff(t, data, out, renderDiff("a/f", "b/f", data, out, set))
	}
	if done < 500 {
		t.Fatalf("only %d of the random sequences applied", done)
	}
}

// TestLooseWindows: the line-by-line search finds every non-overlapping
// run, as a plain search over the trimmed lines does.
func TestLooseWindows(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	pieces := []string{"a", " a", "\ta ", "b", "  b", ""}
	for iter := 0; iter < 3000; iter++ {
		var lines []string
		for i := rng.Intn(15); i >= 0; i-- {
			lines = append(lines, pieces[rng.Intn(len(pieces))])
		}
		var old []string
		for i := rng.Intn(3); i >= 0; i-- {
			old = append(old, pieces[rng.Intn(len(pieces))])
		}
		data := []byte(strings.Join(lines, "\n") + "\n")
		got := looseWindows(data, strings.Join(old, "\n"))
		old = looseLines(strings.Join(old, "\n")) // a last empty line is the old text's final newline
		if len(old) == 0 {
			if got != nil {
				t.Fatalf("an empty old text matched: %+v", got)
			}
			continue
		}
		var want []int
		for i := 0; i+len(old) <= len(lines); {
			ok := true
			for j := range old {
				ok = ok && strings.Trim(lines[i+j], blanks) == strings.Trim(old[j], blanks)
			}
			if ok {
				want = append(want, i+1)
				i += len(old)
			} else {
				i++
			}
		}
		var firsts []int
		for _, w := range got {
			firsts = append(firsts, w.first)
			if w.n != len(old) || !bytes.HasSuffix(data[:w.end], []byte("\n")) {
				t.Fatalf("%q in %q: window %+v", old, data, w)
			}
		}
		if fmt.Sprint(firsts) != fmt.Sprint(want) {
			t.Fatalf("%q in %q: windows at %v, want %v", old, data, firsts, want)
		}
	}
}

// TestEditLooseAmongOthers: edits applied together, some exact and some
// loose: each matched against the original, overlaps still usage.
func TestEditLooseAmongOthers(t *testing.T) {
	const file = "x := 1\nif x {\n\tx++\n}\ny := 2\n"
	for _, c := range []struct {
		edits  []map[string]any
		want   string
		report string
	}{
		{edits("y := 2", "y := 3", "if x {\n  x++\n}", "if x {\n  x--\n}", "x := 1", "x := 0"),
			"x := 0\nif x {\n\tx--\n}\ny := 3\n", "1:exact:5-5:1 2:indent:2-4:1 3:exact:1-1:1"},
		{edits("if x {\n  x++\n}", "z", "}\ny", "w"), "usage: edits 1 and 2 overlap at line 4", ""},
	} {
		sb, dir := testSandbox(t)
		os.WriteFile(filepath.Join(dir, "f"), []byte(file), 0o644)
		r, err := editCall(sb, map[string]any{"path": "f", "edits": c.edits, "loose_indent": true})
		if got := editOutcome(t, dir, r, err); !strings.HasPrefix(got, c.want) || err == nil && got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if err == nil && matchesOf(r) != c.report {
			t.Errorf("report %q, want %q", matchesOf(r), c.report)
		}
	}
}
