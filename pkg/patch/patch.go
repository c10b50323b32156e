package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// Op is the kind of change a File makes.
type Op string

// The operations a patch can hold.
const (
	Add    Op = "add"
	Update Op = "update"
	Delete Op = "delete"
)

// File is one file's change.
type File struct {
	Op Op
	// Path is the file's path as written in the patch. For unified diffs
	// the a/ and b/ prefixes are stripped when both sides carry them (as
	// git apply -p1 does); /dev/null never appears here.
	Path string
	// MoveTo is the new path of an Update that renames the file
	// (envelope "*** Move to:", git "rename from"/"rename to"), else "".
	MoveTo string
	// Content is an Add's whole new content.
	Content []byte
	// Line is the patch line (1-based) where this file's section starts.
	Line int
	// OldMode and NewMode are git's mode lines ("100644", "100755"), if
	// any: "old mode"/"new mode", "new file mode" (NewMode) and "deleted
	// file mode" (OldMode). They are recorded, never acted on here.
	OldMode, NewMode string

	// An Update's hunks are not held: they are read from the patch text
	// (src, the lines of body) each time they are needed, one at a time,
	// so that a patch of many hunks costs little more than its text.
	// stats sums them up for Apply.
	src     string
	body    section
	unified bool
	stats   hunkStats
}

// NumHunks is the number of an Update's hunks.
func (f *File) NumHunks() int { return f.stats.hunks }

// HasModeChange reports whether git's mode lines give the file a new mode.
func (f *File) HasModeChange() bool { return f.NewMode != "" && f.NewMode != f.OldMode }

// EachHunk calls fn with each of an Update's hunks, in order, read anew
// from the patch text. The Hunk (and its slices) is reused for the next
// one: fn must copy what it keeps. An error from fn ends the walk.
func (f *File) EachHunk(fn func(h *Hunk) error) error {
	if f.stats.hunks == 0 {
		return nil
	}
	c := cursor{s: f.src, off: f.body.off, end: f.body.end, num: f.body.num}
	var h Hunk
	if f.unified {
		return unifiedHunks(&c, &h, fn)
	}
	return envHunks(c, &h, fn)
}

// Hunks returns an Update's hunks, each its own copy (EachHunk holds one
// at a time instead).
func (f *File) Hunks() []Hunk {
	var hs []Hunk
	if f.stats.hunks > 0 {
		hs = make([]Hunk, 0, f.stats.hunks)
	}
	_ = f.EachHunk(func(h *Hunk) error {
		c := *h
		c.Anchors = cloneStrings(h.Anchors)
		c.Old = cloneStrings(h.Old)
		c.New = cloneStrings(h.New)
		hs = append(hs, c)
		return nil
	})
	return hs
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// Hunk is one replacement of Old lines by New lines.
type Hunk struct {
	// Anchors are the envelope's "@@ text" lines (nested: each is found
	// after the previous). Unified diffs never set them: the text after a
	// unified header's second "@@" is a section heading, kept in Heading.
	Anchors []string
	// OldStart is a unified hunk's old range start (1-based; for an empty
	// old range, the line after which the new lines go, 0 meaning the
	// start of the file). 0 when absent.
	OldStart int
	// HasRange reports that the hunk carried a unified range
	// ("@@ -l,s +l,s @@"), so that OldStart is meaningful even when 0.
	HasRange bool
	// Heading is the text after a unified header's second "@@", if any.
	Heading string
	// Old and New are the hunk's lines without line endings: context
	// lines in both, '-' lines in Old, '+' lines in New, in order.
	Old, New []string
	// OldNoEOL and NewNoEOL record "\ No newline at end of file" after
	// the old/new side's last line.
	OldNoEOL, NewNoEOL bool
	// EOF is the envelope's "*** End of File": the hunk must match at the
	// end of the file.
	EOF bool
	// CRLF reports that every line of the hunk's body ended with "\r\n"
	// in the patch text; Old lines are then expected to end with "\r\n"
	// in the file for an "exact" match (else with "\n").
	CRLF bool
	// Line is the patch line of the hunk's header (or of its first body
	// line when an envelope hunk has no "@@" header), for errors.
	Line int
}

// Result is the outcome of Apply.
type Result struct {
	Content []byte
	// Matched holds, per hunk, the tolerance its Old lines needed:
	// "exact", "trailing_whitespace" or "eol" (see the package doc).
	Matched []string
	// Replacements is the number of hunks applied.
	Replacements int
	// At says where each hunk landed, in order: the 1-based line of the
	// original where its Old lines start (for a hunk with no Old lines,
	// the line its New lines go before). Placements pairs it with the
	// hunks.
	At []int32
}

// Placed is one applied hunk: its Old lines replaced the file's lines
// from OldLine (1-based, in the original), and its New lines start at
// NewLine in the result.
type Placed struct {
	OldLine, NewLine int
	Old, New         []string
}

// LimitError: matching a hunk would take more work than the bound (see
// Apply).
type LimitError struct {
	Hunk int // 0-based
	Msg  string
}

func (e *LimitError) Error() string { return e.Msg }

// Match levels reported in Result.Matched.
const (
	MatchExact              = "exact"
	MatchTrailingWhitespace = "trailing_whitespace"
	MatchEOL                = "eol"
)

// ParseError is a syntax error in a patch.
type ParseError struct {
	Line int // 1-based patch line; 0 when the error is about the whole patch
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line <= 0 {
		return e.Msg
	}
	return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// AmbiguousError reports a hunk whose Old lines match in several places
// that neither its OldStart nor its anchors decide between.
type AmbiguousError struct {
	Hunk  int   // index of the hunk in the slice given to Apply (0-based)
	Lines []int // every 1-based file line where a match starts
}

func (e *AmbiguousError) Error() string {
	s := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		s[i] = strconv.Itoa(l)
	}
	return fmt.Sprintf("hunk %d matches in %d places (lines %s); add context lines or an \"@@\" anchor so it matches once",
		e.Hunk+1, len(e.Lines), strings.Join(s, ", "))
}

// NotFoundError reports a hunk (or one of its anchors) that is not in the
// file, even with the tolerances of the package doc.
type NotFoundError struct {
	Hunk int // index of the hunk in the slice given to Apply (0-based)
	Msg  string
	// Closest shows the file lines that come closest to the hunk's Old
	// lines, one per line as "NUMBER| text", whitespace made visible
	// (see the package doc); "" when no line is even close.
	Closest string
}

func (e *NotFoundError) Error() string {
	if e.Closest == "" {
		return e.Msg
	}
	return e.Msg + "; the closest lines in the file are:\n" + e.Closest
}
