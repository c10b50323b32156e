package ops

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// EditSpec is one replacement.
type EditSpec struct {
	Old string `json:"old"`
	New string `json:"new"`
	All bool   `json:"all,omitempty"` // replace every occurrence
}

// EditOptions are edit's inputs.
type EditOptions struct {
	Path         string
	Edits        []EditSpec // applied in order, all or nothing
	DryRun       bool
	ExpectSHA256 string
}

// EditResult describes the change.
type EditResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Diff         string `json:"diff"`
	SHA256       string `json:"sha256"` // of the new content (the current one with --dry-run... see DryRun)
	DryRun       bool   `json:"dry_run"`
}

// Edit replaces exact text in a file. Old text written with "\n" matches a
// "\r\n" file and the new text gets "\r\n" too. Bytes outside the edits
// never change. Absent old text is text_not_found (with the closest lines),
// several matches without All are ambiguous (with their line numbers).
func Edit(sb *sandbox.Sandbox, o EditOptions) (EditResult, error) {
	if len(o.Edits) == 0 {
		return EditResult{}, usagef(o.Path, "no edit given: use --old/--new, --old-file/--new-file or --edits-json")
	}
	for i, e := range o.Edits {
		if e.Old == "" {
			return EditResult{}, usagef(o.Path, "edit %d: the old text is empty", i+1)
		}
	}
	expect := strings.ToLower(o.ExpectSHA256)
	if expect != "" && !isSHA256(expect) {
		return EditResult{}, usagef(o.Path, "--expect-sha256 wants 64 hex digits, got %q", o.ExpectSHA256)
	}
	w, err := sb.OpenWriteTarget(o.Path, false)
	if err != nil {
		return EditResult{}, err
	}
	defer w.Close()
	if !w.Exists {
		return EditResult{}, sandbox.Errorf(sandbox.CodeNotFound, o.Path, "%s does not exist", o.Path)
	}
	f, err := w.Current()
	if err != nil {
		return EditResult{}, err
	}
	max, maxName := holdLimit(sb.Limits().MaxWriteBytes, "max_write_bytes")
	old, err := readUpTo(f, f.Info.Size, satAdd(max, 1))
	f.Close()
	if err != nil {
		return EditResult{}, sandbox.AsError(err)
	}
	if int64(len(old)) > max {
		return EditResult{}, &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("%s is over %s = %d, so it cannot be rewritten", o.Path, maxName, max)}
	}
	if expect != "" && sha256Hex(old) != expect {
		return EditResult{}, sandbox.Errorf(sandbox.CodeConflict, o.Path, "%s changed: its sha256 is %s, not %s", o.Path, sha256Hex(old), expect)
	}
	cur := old
	res := EditResult{Path: w.Path, DryRun: o.DryRun}
	var spans []udiff.Edit // byte edits on old, known exactly for one edit
	for i, e := range o.Edits {
		var n int
		var sp []udiff.Edit
		cur, n, sp, err = applyEditSpans(cur, e, o.Path, i, len(o.Edits))
		if err != nil {
			return EditResult{}, err
		}
		res.Replacements += n
		spans = sp
	}
	if len(o.Edits) == 1 {
		// The replaced spans are the diff: no line diff of the whole file.
		d, err := spanDiff("a/"+w.Path, "b/"+w.Path, old, spans)
		if err != nil {
			return EditResult{}, sandbox.AsError(err)
		}
		res.Diff = d
	} else {
		res.Diff = udiff.Unified("a/"+w.Path, "b/"+w.Path, string(old), string(cur))
	}
	res.SHA256 = sha256Hex(cur)
	if int64(len(cur)) > max { // said by --dry-run too, as the real edit would
		return EditResult{}, &sandbox.Error{Code: sandbox.CodeTooLarge, Rule: sandbox.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("the edited %s would be over %s = %d", o.Path, maxName, max)}
	}
	if o.DryRun {
		return res, nil
	}
	// The file must still be what was read when the new content takes
	// its name: checked under the workdir's write lock.
	if _, err := w.Commit(bytes.NewReader(cur), max, sandbox.CommitOptions{Unchanged: true}); err != nil {
		return EditResult{}, err
	}
	return res, nil
}

// applyEdit applies one edit to data.
func applyEdit(data []byte, e EditSpec, path string, i, n int) ([]byte, int, error) {
	out, count, _, err := applyEditSpans(data, e, path, i, n)
	return out, count, err
}

// applyEditSpans is applyEdit that also reports each replacement as a
// byte edit of data.
func applyEditSpans(data []byte, e EditSpec, path string, i, n int) ([]byte, int, []udiff.Edit, error) {
	old, new := []byte(e.Old), []byte(e.New)
	count := bytes.Count(data, old)
	if count == 0 && bytes.Contains(old, []byte("\n")) && !bytes.Contains(old, []byte("\r\n")) && bytes.Contains(data, []byte("\r\n")) {
		// A CRLF file, old text written with LF: match and write CRLF.
		crOld, crNew := toCRLF(old), toCRLF(new)
		if c := bytes.Count(data, crOld); c > 0 {
			old, new, count = crOld, crNew, c
		}
	}
	which := ""
	if n > 1 {
		which = fmt.Sprintf("edit %d: ", i+1)
	}
	switch {
	case count == 0:
		return nil, 0, nil, sandbox.Errorf(sandbox.CodeTextNotFound, path, "%sthe old text is not in %s%s", which, path, closest(data, e.Old))
	case count > 1 && !e.All:
		return nil, 0, nil, sandbox.Errorf(sandbox.CodeAmbiguous, path, "%sthe old text occurs %d times in %s, at lines %s: add context to make it unique, or pass --all",
			which, count, path, joinInts(lineNumbers(data, old)))
	}
	spans := make([]udiff.Edit, 0, count)
	out := make([]byte, 0, len(data)+count*(len(new)-len(old)))
	pos := 0
	for {
		j := bytes.Index(data[pos:], old)
		if j < 0 {
			break
		}
		spans = append(spans, udiff.Edit{Start: pos + j, End: pos + j + len(old), New: string(new)})
		out = append(append(out, data[pos:pos+j]...), new...)
		pos += j + len(old)
	}
	return append(out, data[pos:]...), count, spans, nil
}

// spanDiff renders a unified diff of byte edits on old by diffing only the
// lines around them (3 lines of context) and shifting the hunk line
// numbers, so a one-line edit in a large file costs little.
func spanDiff(from, to string, old []byte, spans []udiff.Edit) (string, error) {
	if len(spans) == 0 {
		return "", nil
	}
	ctx := udiff.DefaultContextLines
	ws := bytes.LastIndexByte(old[:spans[0].Start], '\n') + 1 // the first edited line
	for n := 0; n < ctx && ws > 0; n++ {
		ws = bytes.LastIndexByte(old[:ws-1], '\n') + 1
	}
	we := spans[len(spans)-1].End
	for n := 0; n <= ctx && we < len(old); n++ {
		j := bytes.IndexByte(old[we:], '\n')
		if j < 0 {
			we = len(old)
			break
		}
		we += j + 1
	}
	local := make([]udiff.Edit, len(spans))
	for i, e := range spans {
		local[i] = udiff.Edit{Start: e.Start - ws, End: e.End - ws, New: e.New}
	}
	d, err := udiff.ToUnified(from, to, string(old[ws:we]), local, udiff.DefaultContextLines)
	if err != nil || ws == 0 {
		return d, err
	}
	shift := bytes.Count(old[:ws], []byte("\n"))
	return hunkHeader.ReplaceAllStringFunc(d, func(h string) string {
		m := hunkHeader.FindStringSubmatch(h)
		a, _ := strconv.Atoi(m[1])
		c, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("@@ -%d%s +%d%s @@", a+shift, m[2], c+shift, m[4])
	}), nil
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@`)

func toCRLF(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
}

// lineNumbers gives the 1-based line of each occurrence of old.
func lineNumbers(data, old []byte) []int {
	var out []int
	line, pos := 1, 0
	for {
		i := bytes.Index(data[pos:], old)
		if i < 0 {
			return out
		}
		line += bytes.Count(data[pos:pos+i], []byte("\n"))
		out = append(out, line)
		line += bytes.Count(old, []byte("\n"))
		pos += i + len(old)
	}
}

func joinInts(l []int) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}

// closest names the lines most like the old text's first non-blank line,
// by the longest run of characters they share.
func closest(data []byte, old string) string {
	var probe string
	for _, l := range strings.Split(old, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			probe = t
			break
		}
	}
	if probe == "" {
		return ""
	}
	type cand struct {
		line  int
		score int
		text  string
	}
	var best []cand
	for i, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if t == "" {
			continue
		}
		sc := commonRun(probe, t)
		if sc*2 < len(probe) && sc < 8 {
			continue
		}
		best = append(best, cand{i + 1, sc, t})
	}
	if len(best) == 0 {
		return "; no similar line"
	}
	// the three best, by score then line
	for i := 0; i < len(best); i++ {
		for j := i + 1; j < len(best); j++ {
			if best[j].score > best[i].score {
				best[i], best[j] = best[j], best[i]
			}
		}
	}
	if len(best) > 3 {
		best = best[:3]
	}
	var b strings.Builder
	b.WriteString("; closest:")
	for _, c := range best {
		t := c.text
		if len(t) > 120 {
			t = t[:120] + "…"
		}
		fmt.Fprintf(&b, " line %d: %q;", c.line, t)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// commonRun is the length of the longest common substring (bounded work).
func commonRun(a, b string) int {
	if len(a) > 200 {
		a = a[:200]
	}
	if len(b) > 400 {
		b = b[:400]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	best := 0
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				if cur[j] > best {
					best = cur[j]
				}
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}
