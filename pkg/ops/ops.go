// Package ops holds one file per fsbox operation: typed options in, a typed
// result out (with JSON tags). Operations reach the filesystem only through
// a *sandbox.Sandbox, never through os or filepath directly.
package ops

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

// Truncation says that a limit cut a result short, and which.
type Truncation struct {
	Truncated bool   `json:"truncated"`
	Limit     string `json:"limit,omitempty"` // the policy limit or flag that cut it
	// NextCursor resumes the list after its last item (SPEC §2): the
	// same call with --cursor NextCursor gives the items after the cut.
	NextCursor string `json:"next_cursor,omitempty"`
	// Cuts, when the deadline cut the result, names every cut in the
	// order they came (["timeout"], or ["max_result_bytes", "timeout"]
	// when a counting mode's list was cut first and the deadline then
	// stopped its counting): Limit is "timeout" whatever came first.
	Cuts []string `json:"cuts,omitempty"`
	// TextTruncated says that the JSON text of CutLines lines (or rows)
	// was cut at max_line_bytes; the text form prints every line whole.
	TextTruncated bool  `json:"text_truncated,omitempty"`
	CutLines      int64 `json:"cut_lines,omitempty"`
}

// Outcome is the outcome of a result that embeds the truncation and has
// nothing more to say (ls, slice, sort, cut): a limit's cut, if one cut
// it. A result with more to say (notes, failing paths) has its own.
func (t Truncation) Outcome() spec.Outcome { return spec.Outcome{Cut: t.outcomeCut()} }

// outcomeCut is the truncation as an outcome says it (spec.Outcome's
// Cut): nil when no limit cut the list.
func (t Truncation) outcomeCut() *spec.Cut {
	if !t.Truncated {
		return nil
	}
	return &spec.Cut{Limit: t.Limit, Cuts: t.Cuts, NextCursor: t.NextCursor}
}

// PathError is one of several paths that failed (SPEC §2): the others
// were processed. A denied path carries only the path as given.
type PathError struct {
	Path    string     `json:"path"`
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
}

// PathErrors are the failing paths of a command given several: at most
// max_results of them, then how many more. Results that embed it report
// the first (in argument order) as their outcome.
type PathErrors struct {
	Errors     []PathError `json:"errors,omitempty"`
	ErrorsMore int64       `json:"errors_more,omitempty"`
	first      error
	failed     int
	usage      error // a malformed path (empty, NUL, too long): the call's own fault
}

// add records path's failure; named says path is one the call was given
// (not a file found in a walk), which end counts.
func (pe *PathErrors) add(sb *sandbox.Sandbox, path string, err error, named bool) {
	e := fserr.AsError(err)
	if e.Code == fserr.CodeUsage {
		if pe.usage == nil {
			pe.usage = e
		}
		return
	}
	if pe.first == nil {
		pe.first = e
	}
	if named {
		pe.failed++
	}
	if int64(len(pe.Errors)) >= sb.Limits().Items() {
		pe.ErrorsMore++
		return
	}
	msg := e.Message(nil)
	if e.Code == fserr.CodeDenied {
		msg = path + " is denied by the policy" // the path as given, and nothing it resolves to
	}
	pe.Errors = append(pe.Errors, PathError{Path: path, Code: e.Code, Message: msg})
}

// failures are the failing paths as an outcome says them (spec.Outcome's
// Failures): the first one's error is the call's exit class once its
// result is printed, and a face's text form says each on stderr; nil
// when none failed.
func (pe PathErrors) failures() *spec.Failures {
	if pe.first == nil {
		return nil
	}
	f := &spec.Failures{First: pe.first, More: pe.ErrorsMore}
	for _, e := range pe.Errors {
		f.Shown = append(f.Shown, &fserr.Error{Code: e.Code, Msg: e.Message, Path: e.Path})
	}
	return f
}

// end is the call's error once its n paths are done: a malformed path
// (usage) fails the call as a whole, and so does every path failing (with
// the first path's error); else nil, and the result carries the errors.
func (pe PathErrors) end(n int) error {
	switch {
	case pe.usage != nil:
		return pe.usage
	case n > 0 && pe.failed == n:
		return pe.first
	}
	return nil
}

// lineCut is where the JSON text of one line ends: max_line_bytes, but
// never more than a line a command may hold (textio.MaxLine); 0 in the
// text form (exact), which prints lines whole.
func lineCut(sb *sandbox.Sandbox, exact bool) int {
	if exact {
		return 0
	}
	// A line's text also fits the result's byte budget, with room for
	// the item around it (an item alone over the budget is cut to fit).
	budget := max(sb.Limits().MaxResultBytes-512, 64)
	if sb.Limits().MaxResultBytes <= 0 {
		budget = textio.MaxLine
	}
	return int(min(sb.Limits().MaxLineBytes, textio.MaxLine, budget))
}

// holdFor is how much of one line a reader keeps for a given cut: the cut
// plus room for "\r\n", or a whole line up to textio.MaxLine.
func holdFor(cut int) int {
	if cut == 0 {
		return textio.MaxLine
	}
	return cut + 2
}

// fitLine applies the long-line rule to a line read by ReadLineMax(
// holdFor(cut)), whose whole length was n: a line that fits is returned
// as it is; in JSON (cut > 0) a longer one is cut at a UTF-8 boundary and
// counted in tr; in the text form a line over textio.MaxLine is too_large,
// as it cannot be printed whole without holding it.
func fitLine(line []byte, n int64, cut int, tr *Truncation, path string, lineNo int64) ([]byte, error) {
	if cut == 0 {
		if n > int64(len(line)) {
			return nil, tooLongLine(path, lineNo, n)
		}
		return line, nil
	}
	if n == int64(len(line)) && len(textio.TrimEOL(line)) <= cut {
		return line, nil
	}
	tr.TextTruncated = true
	tr.CutLines++
	return cutText(textio.TrimEOL(line), cut), nil
}

// tooLongLine is too_large for a line over textio.MaxLine (lineNo 0: its
// number is not known).
func tooLongLine(path string, lineNo, n int64) error {
	which := "a line"
	if lineNo > 0 {
		which = fmt.Sprintf("line %d", lineNo)
	}
	return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: path,
		Msg: fmt.Sprintf("%s of %s has %d bytes or more, over the %d that fsbox holds of one line; the JSON form shows its first max_line_bytes", which, path, n, textio.MaxLine)}
}

// cutText cuts b to at most max bytes without splitting a UTF-8 sequence.
func cutText(b []byte, max int) []byte {
	if len(b) <= max {
		return b
	}
	// Back to the start of the sequence that b[max] belongs to (when
	// none is near, the bytes are not UTF-8 anyway: cut at max).
	for i := max; i > 0 && i > max-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return b[:i]
		}
	}
	return b[:max]
}

// itemCap is how many items a list may hold, and the name of the limit
// that says so: the caller's --limit when it is lower than the policy's
// max_results (which it can only narrow).
func itemCap(sb *sandbox.Sandbox, limit int64) (int64, string) {
	max := sb.Limits().Items()
	if limit > 0 && limit < max {
		return limit, "limit"
	}
	return max, "max_results"
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// badSHA256 is the usage error of an expect-sha256 value that is not 64
// hex digits (form says what the option takes: "64 hex digits",
// "PATH=64 hex digits"), the option named as the face spells it.
func badSHA256(path, got, form string) error {
	return fserr.Errorf(fserr.CodeUsage, path, "%q is not a SHA-256.", got).WithHint(fserr.Hint{
		Option: "expect-sha256", Text: "%s wants " + form + " (read or stat --sha256 gives them).", Else: "A SHA-256 is 64 hex digits."})
}

func usagef(path, format string, args ...any) error {
	return fserr.Errorf(fserr.CodeUsage, path, format, args...)
}

// collectLines is the LineSink of the json form: each line, without its
// terminator and with invalid UTF-8 replaced, appended to *dst (which
// starts as an empty list, never null).
func collectLines(dst *[]string) LineSink {
	*dst = []string{}
	return func(line []byte) error {
		*dst = append(*dst, jsonText(textio.TrimEOL(line)))
		return nil
	}
}

// MaxHold is the most of one file a command holds in memory at once: read
// (without paging), edit and sort take a file whole. A policy may set its
// byte limits higher, up to 2^63-1; past MaxHold the answer is too_large,
// never an allocation the machine cannot make.
const MaxHold = 4 << 30

// holdCapName is the limit a Truncation or too_large names when MaxHold,
// not the policy, was the smaller cap.
const holdCapName = "hold_cap"

// holdLimit is the smaller of a policy byte limit and MaxHold, with the
// name of the one that applies.
func holdLimit(policy int64, name string) (int64, string) {
	if policy > MaxHold {
		return MaxHold, holdCapName
	}
	return policy, name
}

// usageErr is a malformed input: every face shows it as a usage error.
func usageErr(format string, args ...any) error {
	return fserr.Errorf(fserr.CodeUsage, "", format, args...)
}

// openInput opens a path argument of a reading operation: "-" is the
// call's standard input (sandbox.OpenStdin), anything else a file.
func openInput(sb *sandbox.Sandbox, p string) (*sandbox.File, error) {
	if p == sandbox.StdinPath {
		return sb.OpenStdin()
	}
	return sb.Open(p)
}
