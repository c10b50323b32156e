package ops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

// readCall runs read through its descriptor with the values set sets, in
// form ("json" or "text", the text form printing Raw), resuming at
// cursor; it returns the result and the size of its JSON as the command
// line prints it (compact, no newline).
func readCall(t *testing.T, sb *sandbox.Sandbox, form string, set func(in *spec.Input), cursor string) (*ReadResult, int, error) {
	t.Helper()
	op, _ := Registry.Lookup("read")
	in := spec.NewInput(op)
	if set != nil {
		set(in)
	}
	in.Cursor, in.Form, in.Exact = cursor, form, form == "text"
	v, err := op.Run(context.Background(), sb, in)
	if err != nil {
		return nil, 0, err
	}
	r, ok := v.(*ReadResult)
	if !ok {
		t.Fatalf("read gave %T", v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return r, b.Len() - 1, nil
}

// randomText is a file of random lines: ASCII, multibyte UTF-8, bytes
// JSON escapes (quotes, backslashes, controls, U+2028), CRLF and LF, some
// long lines, maybe a BOM, maybe no final newline.
func randomText(rng *rand.Rand, size int) []byte {
	pieces := []string{"a", "b", "z", " ", "\t", "\"", "\\", "\x01", "é", "—", "😀", "\u2028", "<", "&", "x", "0"}
	var b bytes.Buffer
	if rng.Intn(5) == 0 {
		b.Write(textio.BOM)
	}
	for b.Len() < size {
		n := rng.Intn(80)
		if rng.Intn(20) == 0 {
			n = rng.Intn(size + 1) // a long line, maybe over the budget
		}
		for i := 0; i < n && b.Len() < size; i++ {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		if rng.Intn(3) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
	}
	out := b.Bytes()
	if rng.Intn(2) == 0 {
		out = bytes.TrimRight(out, "\r\n") // no final newline
	}
	return out
}

// TestReadBudgetPages: under a byte budget, following the cursors of a
// read gives the file exactly (its raw bytes in the text form, its
// content in JSON, its base64 joined), each page's JSON within the
// budget, each cut page truncated with limit max_result_bytes, a
// next_offset and a next_cursor; a page of whole lines ends at the last
// whole line that fits (the next would not); a line cut only when no
// whole line fits, at a UTF-8 boundary, marked text_truncated. Over
// random files and budgets.
func TestReadBudgetPages(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	iters := 60
	if testing.Short() {
		iters = 15
	}
	for it := 0; it < iters; it++ {
		dir := t.TempDir()
		data := randomText(rng, 500+rng.Intn(20000))
		if it%7 == 3 {
			data[rng.Intn(len(data))] = 0xff // invalid UTF-8: lossy, still whole in the text form and base64
		}
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		budget := int64(400 + rng.Intn(6000))
		sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResultBytes = budget })
		valid := utf8.Valid(data)
		for _, mode := range []string{"json", "text", "base64", "limit"} {
			form, set := "json", func(in *spec.Input) { in.Set("path", "f.txt") }
			switch mode {
			case "text":
				form = "text"
			case "base64":
				set = func(in *spec.Input) { in.Set("path", "f.txt"); in.Set("encoding", "base64") }
			case "limit":
				set = func(in *spec.Input) { in.Set("path", "f.txt"); in.Set("limit", int64(1<<40)) }
			}
			var got []byte
			cursor := ""
			for page := 0; ; page++ {
				if page > len(data)+2 {
					t.Fatalf("%d/%s: more pages than bytes: the cursors do not move on", it, mode)
				}
				r, size, err := readCall(t, sb, form, set, cursor)
				if err != nil {
					t.Fatalf("%d/%s page %d: %v", it, mode, page, err)
				}
				if r.Truncated {
					if r.Limit != "max_result_bytes" || r.NextCursor == "" || r.NextOffset == nil || r.EOF {
						t.Fatalf("%d/%s page %d: a cut page without its fields: %+v", it, mode, page, r.Truncation)
					}
					if mode != "text" && int64(size) > budget && len(r.Raw) > minPage(ReadOptions{Encoding: r.Encoding}) {
						t.Fatalf("%d/%s page %d: %d bytes of JSON, over the budget %d", it, mode, page, size, budget)
					}
					if mode == "base64" && len(r.Raw)%3 != 0 {
						t.Fatalf("%d/%s page %d: a base64 page of %d bytes, not a multiple of 3", it, mode, page, len(r.Raw))
					}
					if out := r.Outcome(); (mode == "limit") != (out.Cut == nil) {
						t.Fatalf("%d/%s page %d: outcome %+v: a cut exits 9 only when the caller asked for no page", it, mode, page, out)
					}
				}
				if mode == "json" && r.Truncated && !r.TextTruncated {
					// The page ends at a line end, and the next line would not have fitted.
					if !bytes.HasSuffix(r.Raw, []byte("\n")) {
						t.Fatalf("%d page %d: a page of whole lines ends inside one", it, page)
					}
					rest := data[len(got)+len(r.Raw):]
					line := rest
					if i := bytes.IndexByte(rest, '\n'); i >= 0 {
						line = rest[:i+1]
					}
					bigger := *r
					bigger.Raw = append(append([]byte(nil), r.Raw...), line...)
					if bigger.jsonSize(ReadOptions{Encoding: "utf-8", Offset: r.Offset}) <= budget {
						t.Fatalf("%d page %d: the next line (%d bytes) would have fitted the budget %d", it, page, len(line), budget)
					}
				}
				if r.TextTruncated && (r.Lines != 1 || bytes.Contains(r.Raw[:max(len(r.Raw)-1, 0)], []byte("\n"))) {
					t.Fatalf("%d/%s page %d: a cut line with other lines on its page", it, mode, page)
				}
				if r.TextTruncated && valid && !utf8.Valid(bytes.TrimPrefix(r.Raw, textio.BOM)) && len(got) > 0 {
					t.Fatalf("%d/%s page %d: a line cut inside a UTF-8 sequence", it, mode, page)
				}
				switch mode {
				case "base64":
					b, err := base64.StdEncoding.DecodeString(r.Content)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, b...)
				case "json":
					if valid && r.Content != string(bytes.TrimPrefix(r.Raw, textio.BOM)) && !(page > 0 && r.Content == string(r.Raw)) {
						t.Fatalf("%d page %d: content is not the page's bytes", it, page)
					}
					got = append(got, r.Raw...)
				default:
					got = append(got, r.Raw...)
				}
				if !r.Truncated {
					if !r.EOF {
						t.Fatalf("%d/%s page %d: the last page is not at the end of the file", it, mode, page)
					}
					break
				}
				cursor = r.NextCursor
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("%d/%s (budget %d): the pages give %d bytes, not the file's %d", it, mode, budget, len(got), len(data))
			}
		}
	}
}

// TestReadBudgetAgent: under the agent preset's budget (64 KiB) a 230 KB
// file comes back as its first 64 KiB and a cursor, exit 9 (the caller
// asked for no page); with --offset 0 the same page exits 0.
func TestReadBudgetAgent(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("fsbox reads within the budget; ", 3) + "\n"
	data := strings.Repeat(line, 230_000/len(line)+1)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := pagingSandbox(t, dir, func(l *policy.Limits) { l.MaxResultBytes = 65536 })
	r, size, err := readCall(t, sb, "json", func(in *spec.Input) { in.Set("path", "big.txt") }, "")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Limit != "max_result_bytes" || r.NextCursor == "" || size > 65536 || size < 65536-len(line)-2 {
		t.Fatalf("read of %d bytes: truncated %v limit %q, %d bytes of JSON", len(data), r.Truncated, r.Limit, size)
	}
	if r.Outcome().Cut == nil {
		t.Fatal("a page the caller did not ask for is no cut (exit 9)")
	}
	if *r.NextOffset != r.Lines || !strings.HasPrefix(data, r.Content) {
		t.Fatalf("next_offset %d, lines %d", *r.NextOffset, r.Lines)
	}
	r2, _, err := readCall(t, sb, "json", func(in *spec.Input) { in.Set("path", "big.txt"); in.Set("offset", int64(0)) }, "")
	if err != nil {
		t.Fatal(err)
	}
	if r2.Content != r.Content || r2.Outcome().Cut != nil || len(r2.Outcome().Notes) != 1 {
		t.Fatalf("the page asked for: outcome %+v", r2.Outcome())
	}
	// The cursor of one call does not resume another.
	if _, _, err := readCall(t, sb, "json", func(in *spec.Input) { in.Set("path", "big.txt"); in.Set("offset", int64(1)) }, r.NextCursor); err == nil {
		t.Fatal("a cursor resumed a call with other arguments")
	}
	// A file changed since: the page starts again, restarted.
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(data+"more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r3, _, err := readCall(t, sb, "json", func(in *spec.Input) { in.Set("path", "big.txt") }, r.NextCursor)
	if err != nil {
		t.Fatal(err)
	}
	if !r3.Restarted || r3.Offset != 0 || r3.Content != r.Content {
		t.Fatalf("a changed file: restarted %v offset %d", r3.Restarted, r3.Offset)
	}
	// Whole (the reference profile's read tools): no budget.
	rw, err := Read(context.Background(), sb, ReadOptions{Path: "big.txt", Whole: true})
	if err != nil || rw.Truncated || int(rw.Size) != len(data)+5 {
		t.Fatalf("whole read: %v truncated %v", err, rw.Truncated)
	}
}
