package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// cursor walks the lines of the patch text s from off up to end, one line
// at a time, without holding them: a patch of millions of lines costs no
// more than its text.
type cursor struct {
	s   string
	off int // where the next line starts
	end int // where the lines this cursor covers end
	num int // the next line's number (1-based)
}

// pline is one line of the patch text, without its line ending.
type pline struct {
	text string
	crlf bool // ended with "\r\n" (or, the last line, with "\r")
	num  int  // 1-based
	next int  // where the line after it starts
}

func newCursor(s string) cursor { return cursor{s: s, end: len(s), num: 1} }

// more reports whether a line is left.
func (c *cursor) more() bool { return c.off < c.end }

// peek returns the next line without moving past it.
func (c *cursor) peek() pline {
	rest := c.s[c.off:c.end]
	l := pline{num: c.num}
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		l.text, l.next = rest[:i], c.off+i+1
	} else {
		l.text, l.next = rest, c.end
	}
	if strings.HasSuffix(l.text, "\r") {
		l.text, l.crlf = l.text[:len(l.text)-1], true
	}
	return l
}

// next returns the next line and moves past it.
func (c *cursor) next() pline {
	l := c.peek()
	c.off, c.num = l.next, l.num+1
	return l
}

// peek2 reports whether the next two lines start with p1 and p2.
func (c *cursor) peek2(p1, p2 string) bool {
	if !c.more() || !strings.HasPrefix(c.peek().text, p1) {
		return false
	}
	d := *c
	d.next()
	return d.more() && strings.HasPrefix(d.peek().text, p2)
}

// section is where a file's hunks lie in the patch text: the lines from
// offset off up to end, the first of them numbered num.
type section struct{ off, end, num int }

// hunkStats sums up a file's hunks, gathered while the patch is parsed,
// so that Apply knows them before it meets the hunks one by one.
type hunkStats struct {
	hunks              int
	oldLines, oldBytes int
	newLines, newBytes int
	firstCRLF          bool // the first hunk's CRLF
	bomInOld           bool // some hunk's first Old line starts with a BOM
}

func (s *hunkStats) add(h *Hunk) {
	if s.hunks == 0 {
		s.firstCRLF = h.CRLF
	}
	s.hunks++
	s.oldLines += len(h.Old)
	s.newLines += len(h.New)
	for _, l := range h.Old {
		s.oldBytes += len(l)
	}
	for _, l := range h.New {
		s.newBytes += len(l)
	}
	if len(h.Old) > 0 && strings.HasPrefix(h.Old[0], bom) {
		s.bomInOld = true
	}
}

// resetHunk empties h for the next hunk, keeping its slices' storage.
func resetHunk(h *Hunk, line int) {
	*h = Hunk{Line: line, Anchors: h.Anchors[:0], Old: h.Old[:0], New: h.New[:0]}
}

func perr(line int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File:"
	updateFile = "*** Update File:"
	deleteFile = "*** Delete File:"
	moveTo     = "*** Move to:"
	endOfFile  = "*** End of File"
)

// Parse parses a patch in the envelope format or as a unified diff (see
// the package doc) and returns its files in order. It copies text once;
// ParseString takes a string without copying it.
func Parse(text []byte) ([]File, error) { return ParseString(string(text)) }

// ParseString is Parse of a string. The files refer to s: an Update's
// hunks are read from it anew each time they are asked for (EachHunk,
// Apply), so the parsed patch holds no more than s and a few numbers per
// file, however many hunks it has.
func ParseString(s string) ([]File, error) { return ParseStrip(s, -1) }

// ParseStrip is ParseString with patch(1)'s -p: a unified diff's names
// lose their first strip components ("a/src/x.go" is "src/x.go" at 1).
// A negative strip is the default: a/ and b/ are stripped when both sides
// carry them. The envelope names its files exactly, so it takes none.
func ParseStrip(s string, strip int) ([]File, error) {
	c := newCursor(s)
	first := c
	for first.more() && strings.TrimSpace(first.peek().text) == "" {
		first.next()
	}
	if !first.more() {
		return nil, perr(0, "empty patch")
	}
	var files []File
	var err error
	if strings.TrimSpace(first.peek().text) == beginPatch {
		if strip >= 0 {
			return nil, perr(first.peek().num, "-p strips a unified diff's names; the envelope names its files exactly")
		}
		files, err = parseEnvelope(first)
	} else {
		files, err = parseUnified(c, strip)
		if err == nil && len(files) == 0 {
			for c.more() {
				if l := c.next(); strings.TrimSpace(l.text) == beginPatch {
					return nil, perr(l.num, "text before %q: the envelope must start with it (only blank lines may come first)", beginPatch)
				}
			}
			return nil, perr(0, "no patch found: expected %q or a unified diff (\"--- a/x\" and \"+++ b/x\" lines, or \"diff --git\")", beginPatch)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := validate(files); err != nil {
		return nil, err
	}
	return files, nil
}

// validate checks what both formats share: paths present and not repeated.
func validate(files []File) error {
	seen := make(map[string]int, len(files))
	for _, f := range files {
		if f.Path == "" {
			return perr(f.Line, "path empty")
		}
		if prev, ok := seen[f.Path]; ok {
			return perr(f.Line, "the same path twice: %q (first at line %d)", f.Path, prev)
		}
		seen[f.Path] = f.Line
	}
	for _, f := range files {
		if f.MoveTo == "" || f.MoveTo == f.Path {
			continue
		}
		if prev, ok := seen[f.MoveTo]; ok {
			return perr(f.Line, "the same path twice: %q is moved to %q, which line %d also names", f.Path, f.MoveTo, prev)
		}
		seen[f.MoveTo] = f.Line
	}
	return nil
}

// ---- envelope ----

// isSectionEnd reports whether an envelope line ends a file's section:
// any "*** " line other than "*** End of File" and "*** Move to:".
func isSectionEnd(t string) bool {
	if !strings.HasPrefix(t, "***") {
		return false
	}
	tt := strings.TrimRight(t, " \t")
	return tt != endOfFile && !strings.HasPrefix(tt, moveTo)
}

func opPath(t, prefix string) (string, bool) {
	if !strings.HasPrefix(t, prefix) {
		return "", false
	}
	return strings.TrimSpace(t[len(prefix):]), true
}

// parseEnvelope parses the envelope whose "*** Begin Patch" line is c's
// next line.
func parseEnvelope(c cursor) ([]File, error) {
	var files []File
	c.next()
	for {
		if !c.more() {
			return nil, perr(c.num-1, "missing %q at the end of the patch", endPatch)
		}
		l := c.next()
		t := strings.TrimRight(l.text, " \t")
		if t == endPatch {
			for c.more() {
				if r := c.next(); strings.TrimSpace(r.text) != "" {
					return nil, perr(r.num, "text after %q", endPatch)
				}
			}
			if len(files) == 0 {
				return nil, perr(l.num, "empty patch: no file operations between %q and %q", beginPatch, endPatch)
			}
			return files, nil
		}
		if t == "" {
			continue
		}
		var op Op
		var path string
		if p, ok := opPath(t, addFile); ok {
			op, path = Add, p
		} else if p, ok := opPath(t, updateFile); ok {
			op, path = Update, p
		} else if p, ok := opPath(t, deleteFile); ok {
			op, path = Delete, p
		} else if strings.HasPrefix(t, "***") {
			return nil, perr(l.num, "unknown operation %q (expected %q, %q, %q or %q)", t, addFile, updateFile, deleteFile, endPatch)
		} else {
			return nil, perr(l.num, "expected a file operation (%q, %q or %q) or %q, got %q", addFile, updateFile, deleteFile, endPatch, t)
		}
		// The section runs to the next "*** " line that ends it. Bare
		// empty lines at its end separate it from the next one; they are
		// not content.
		body := c
		body.end = c.off
		for c.more() {
			r := c.peek()
			if isSectionEnd(r.text) {
				break
			}
			c.next()
			if r.text != "" {
				body.end = r.next
			}
		}
		f := File{Op: op, Path: path, Line: l.num, src: c.s}
		if path == "" {
			return nil, perr(l.num, "path empty in %q", t)
		}
		var err error
		switch op {
		case Add:
			err = envAdd(&f, body)
		case Delete:
			if body.more() {
				r := body.peek()
				err = perr(r.num, "%s %s takes no content, got %q", deleteFile, path, r.text)
			}
		case Update:
			err = envUpdate(&f, body)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
}

func envAdd(f *File, body cursor) error {
	var b strings.Builder
	b.Grow(body.end - body.off)
	for body.more() {
		l := body.next()
		switch {
		case strings.HasPrefix(l.text, "+"):
			b.WriteString(l.text[1:])
			b.WriteByte('\n')
		case l.text == "@@" || strings.HasPrefix(l.text, "@@ "):
			return perr(l.num, "%s takes only '+' lines (the whole new content), not hunks", addFile)
		case strings.HasPrefix(strings.TrimRight(l.text, " \t"), moveTo):
			return perr(l.num, "%q only follows %q", moveTo, updateFile)
		default:
			return perr(l.num, "a line of an added file must start with '+' (an empty line is \"+\"), got %q", l.text)
		}
	}
	f.Content = []byte(b.String())
	return nil
}

func isHeader(t string) bool { return t == "@@" || strings.HasPrefix(t, "@@ ") }

// envUpdate reads an Update's optional "*** Move to:" and checks its
// hunks, keeping only where they are and their sums.
func envUpdate(f *File, body cursor) error {
	if body.more() {
		l := body.peek()
		if p, ok := opPath(strings.TrimRight(l.text, " \t"), moveTo); ok {
			if p == "" {
				return perr(l.num, "path empty in %q", l.text)
			}
			f.MoveTo = p
			body.next()
		}
	}
	f.body = section{off: body.off, end: body.end, num: body.num}
	var h Hunk
	if err := envHunks(body, &h, func(h *Hunk) error { f.stats.add(h); return nil }); err != nil {
		return err
	}
	if f.stats.hunks == 0 && f.MoveTo == "" {
		return perr(f.Line, "%s %s has no hunks and no %q", updateFile, f.Path, moveTo)
	}
	return nil
}

// envHunks reads the hunks of an envelope Update's body, calling fn with
// each as it is complete; h is the one Hunk they are all read into.
func envHunks(body cursor, h *Hunk, fn func(*Hunk) error) error {
	open := false
	bodyLines, changes, crlfLines := 0, 0, 0
	finish := func() error {
		if bodyLines == 0 {
			return perr(h.Line, "hunk header with no lines after it")
		}
		if changes == 0 {
			return perr(h.Line, "hunk has no '+' or '-' lines")
		}
		h.CRLF = crlfLines == bodyLines
		open = false
		bodyLines, changes, crlfLines = 0, 0, 0
		return fn(h)
	}
	start := func(line int) {
		if !open {
			resetHunk(h, line)
			open = true
		}
	}
	for body.more() {
		l := body.next()
		t := l.text
		switch {
		case isHeader(t):
			if open && bodyLines > 0 {
				if err := finish(); err != nil {
					return err
				}
			}
			start(l.num)
			a := strings.TrimSpace(t[2:])
			if start, ok := unifiedRangeAnchor(a); ok {
				// "@@ -l,s +l,s @@" in an envelope: a position, not an anchor.
				h.OldStart, h.HasRange = start, true
			} else if a != "" {
				h.Anchors = append(h.Anchors, a)
			}
		case strings.TrimRight(t, " \t") == endOfFile:
			if !open || bodyLines == 0 {
				return perr(l.num, "%q must come right after a hunk's lines", endOfFile)
			}
			h.EOF = true
			if err := finish(); err != nil {
				return err
			}
		case strings.HasPrefix(t, moveTo):
			return perr(l.num, "%q must directly follow %q", moveTo, updateFile)
		case t == "" || t[0] == ' ' || t[0] == '+' || t[0] == '-':
			start(l.num)
			bodyLines++
			if l.crlf {
				crlfLines++
			}
			if t == "" {
				t = " " // a bare empty line is an empty context line
			}
			switch t[0] {
			case ' ':
				h.Old = append(h.Old, t[1:])
				h.New = append(h.New, t[1:])
			case '-':
				h.Old = append(h.Old, t[1:])
				changes++
			case '+':
				h.New = append(h.New, t[1:])
				changes++
			}
		default:
			return perr(l.num, "hunk line must start with ' ', '+' or '-' (got %q)", t)
		}
	}
	if open {
		return finish()
	}
	return nil
}

// unifiedRangeAnchor recognises "-l,s +l,s @@ heading" after an envelope
// "@@" and returns l.
func unifiedRangeAnchor(a string) (int, bool) {
	rest, ok := strings.CutPrefix(a, "-")
	if !ok {
		return 0, false
	}
	oldStart, _, _, _, _, ok := parseRangesAfter(rest)
	return oldStart, ok
}

// ---- unified ----

// parseRanges parses "@@ -l[,s] +l[,s] @@[ heading]".
func parseRanges(t string) (oldStart, oldCount, newStart, newCount int, heading string, ok bool) {
	rest, found := strings.CutPrefix(t, "@@ -")
	if !found {
		return
	}
	return parseRangesAfter(rest)
}

// parseRangesAfter is parseRanges of what follows "@@ -".
func parseRangesAfter(rest string) (oldStart, oldCount, newStart, newCount int, heading string, ok bool) {
	r1, rest, found := strings.Cut(rest, " +")
	if !found {
		return
	}
	var r2 string
	r2, rest, found = strings.Cut(rest, " @@")
	if !found {
		return
	}
	var ok1, ok2 bool
	oldStart, oldCount, ok1 = parseRange(r1)
	newStart, newCount, ok2 = parseRange(r2)
	if !ok1 || !ok2 {
		return
	}
	return oldStart, oldCount, newStart, newCount, strings.TrimSpace(rest), true
}
func parseRange(s string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := atoi(a)
	if err != nil {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, err = atoi(b); err != nil {
			return 0, 0, false
		}
	}
	return start, count, true
}

func atoi(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.Atoi(s)
}

const devNull = "/dev/null"

// headerName extracts the file name from what follows "--- ", "+++ ",
// "rename from " and the like: a C-quoted name, or the text up to a tab
// (diff -u puts a timestamp after one).
func headerName(s string) string {
	if strings.HasPrefix(s, `"`) {
		if name, _, ok := unquotePrefix(s); ok {
			return name
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ")
}

// unquotePrefix unquotes the C-style quoted string s starts with (as git
// writes unusual names) and returns the rest.
func unquotePrefix(s string) (string, string, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			u, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", s, false
			}
			return u, s[i+1:], true
		}
	}
	return "", s, false
}

// gitNames splits the names of "diff --git a/x b/x".
func gitNames(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		a, rest, ok := unquotePrefix(s)
		if !ok {
			return "", ""
		}
		return a, headerName(strings.TrimPrefix(rest, " "))
	}
	// Unquoted: equal names are the common case ("a/N b/N"); try the
	// middle split first, then the first " b/" (or the last space).
	if n := len(s); n%2 == 1 {
		h := n / 2
		if s[h] == ' ' && strings.HasPrefix(s, "a/") && s[h+1:h+3] == "b/" && s[2:h] == s[h+3:] {
			return s[:h], s[h+1:]
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return s[:i], s[i+1:]
	}
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		if strings.HasPrefix(s[i+1:], `"`) {
			return s[:i], headerName(s[i+1:])
		}
		return s[:i], s[i+1:]
	}
	return "", ""
}

type unifiedFile struct {
	f                    File
	git                  bool
	gitOld, gitNew       string
	oldName, newName     string
	hasNames             bool
	renameFrom, renameTo string
	newFile, deletedFile bool
	// What finish needs of the hunks, gathered as they are read: the
	// lines of the first and second hunks, whether the first has old
	// lines, the line of the first hunk with new lines, and an Add's
	// content (its single hunk's new side).
	firstLine, secondLine, firstNewLine int
	firstHasOld                         bool
	content                             []byte
	strip                               int // -p: components to strip; < 0, the a/ b/ rule
}

func parseUnified(c cursor, strip int) ([]File, error) {
	var files []File
	var h Hunk
	for c.more() {
		l := c.peek()
		t := l.text
		u := unifiedFile{strip: strip}
		switch {
		case strings.HasPrefix(t, "diff --git "):
			u.git = true
			u.f.Line = l.num
			u.gitOld, u.gitNew = gitNames(t[len("diff --git "):])
			c.next()
			if err := gitExtended(&c, &u); err != nil {
				return nil, err
			}
			if c.peek2("--- ", "+++ ") {
				u.oldName = headerName(c.next().text[4:])
				u.newName = headerName(c.next().text[4:])
				u.hasNames = true
			}
		case c.peek2("--- ", "+++ "):
			u.f.Line = l.num
			u.oldName = headerName(c.next().text[4:])
			u.newName = headerName(c.next().text[4:])
			u.hasNames = true
		default:
			c.next() // prose
			continue
		}
		op := u.op()
		u.f.src, u.f.unified = c.s, true
		body := section{off: c.off, num: c.num}
		err := unifiedHunks(&c, &h, func(h *Hunk) error {
			u.note(h, op)
			return nil
		})
		if err != nil {
			return nil, err
		}
		body.end = c.off
		if !u.git && u.f.stats.hunks == 0 {
			return nil, perr(u.f.Line, "file header (\"--- %s\", \"+++ %s\") with no \"@@ -l,s +l,s @@\" hunk after it", u.oldName, u.newName)
		}
		if err := u.finish(); err != nil {
			return nil, err
		}
		if u.f.Op == Update {
			u.f.body = body
		} else {
			u.f.stats = hunkStats{}
		}
		files = append(files, u.f)
	}
	return files, nil
}

// note takes in one hunk of a file whose operation will be op.
func (u *unifiedFile) note(h *Hunk, op Op) {
	switch u.f.stats.hunks {
	case 0:
		u.firstLine, u.firstHasOld = h.Line, len(h.Old) > 0
		if op == Add {
			// A new file is its single hunk's new side.
			var b strings.Builder
			eol := "\n"
			if h.CRLF {
				eol = "\r\n" // git diff of a CRLF file: keep its endings
			}
			for i, l := range h.New {
				b.WriteString(l)
				if i < len(h.New)-1 || !h.NewNoEOL {
					b.WriteString(eol)
				}
			}
			u.content = []byte(b.String())
		}
	case 1:
		u.secondLine = h.Line
	}
	if u.firstNewLine == 0 && len(h.New) > 0 {
		u.firstNewLine = h.Line
	}
	u.f.stats.add(h)
}

func gitExtended(c *cursor, u *unifiedFile) error {
	for ; c.more(); c.next() {
		l := c.peek()
		t := l.text
		switch {
		case strings.HasPrefix(t, "old mode "):
			u.f.OldMode = strings.TrimSpace(t[len("old mode "):])
		case strings.HasPrefix(t, "new mode "):
			u.f.NewMode = strings.TrimSpace(t[len("new mode "):])
		case strings.HasPrefix(t, "new file mode "):
			u.newFile = true
			u.f.NewMode = strings.TrimSpace(t[len("new file mode "):])
		case strings.HasPrefix(t, "deleted file mode "):
			u.deletedFile = true
			u.f.OldMode = strings.TrimSpace(t[len("deleted file mode "):])
		case strings.HasPrefix(t, "rename from "):
			u.renameFrom = headerName(t[len("rename from "):])
		case strings.HasPrefix(t, "rename to "):
			u.renameTo = headerName(t[len("rename to "):])
		case strings.HasPrefix(t, "copy from "), strings.HasPrefix(t, "copy to "):
			return perr(l.num, "git copies (%q) are not supported; write the copy as a new file", t)
		case strings.HasPrefix(t, "Binary files "), t == "GIT binary patch":
			return perr(l.num, "binary patches are not supported")
		case strings.HasPrefix(t, "similarity index "), strings.HasPrefix(t, "dissimilarity index "),
			strings.HasPrefix(t, "index "):
		default:
			return nil
		}
	}
	return nil
}

// unifiedHunks reads the "@@" hunks starting at c's next line, calling fn
// with each as it is complete; h is the one Hunk they are all read into.
func unifiedHunks(c *cursor, h *Hunk, fn func(*Hunk) error) error {
	for c.more() && strings.HasPrefix(c.peek().text, "@@ ") {
		hl := c.next()
		oldStart, oldCount, _, newCount, heading, ok := parseRanges(hl.text)
		if !ok {
			return perr(hl.num, "bad unified hunk header %q (expected \"@@ -l,s +l,s @@\")", hl.text)
		}
		resetHunk(h, hl.num)
		h.OldStart, h.HasRange, h.Heading = oldStart, true, heading
		oldLeft, newLeft := oldCount, newCount
		last := byte(0) // kind of the previous body line
		bodyLines, crlfLines := 0, 0
		// A line marked "\ No newline at end of file" has no ending: it
		// does not count for CRLF (a CRLF file's one-line side would
		// otherwise make its hunk LF).
		lastCRLF, uncounted := false, false
		short := func() error {
			if oldLeft > 0 {
				return perr(hl.num, "unified hunk says %d old lines but has %d", oldCount, oldCount-oldLeft)
			}
			return perr(hl.num, "unified hunk says %d new lines but has %d", newCount, newCount-newLeft)
		}
		marker := func() {
			if !lastCRLF && !uncounted && bodyLines > 0 {
				bodyLines--
				uncounted = true
			}
			switch last {
			case ' ':
				h.OldNoEOL, h.NewNoEOL = true, true
			case '-':
				h.OldNoEOL = true
			case '+':
				h.NewNoEOL = true
			}
		}
		for oldLeft > 0 || newLeft > 0 {
			if !c.more() {
				return short()
			}
			l := c.peek()
			t := l.text
			kind := byte(' ')
			if t != "" {
				kind = t[0]
			}
			switch {
			case kind == ' ' && oldLeft > 0 && newLeft > 0:
				s := ""
				if t != "" {
					s = t[1:]
				}
				h.Old = append(h.Old, s)
				h.New = append(h.New, s)
				oldLeft--
				newLeft--
			case kind == '-' && oldLeft > 0:
				h.Old = append(h.Old, t[1:])
				oldLeft--
			case kind == '+' && newLeft > 0:
				h.New = append(h.New, t[1:])
				newLeft--
			case kind == '\\' && last != 0:
				marker()
				c.next()
				continue
			default:
				return short()
			}
			last = kind
			bodyLines++
			lastCRLF, uncounted = l.crlf, false
			if l.crlf {
				crlfLines++
			}
			c.next()
		}
		if c.more() && strings.HasPrefix(c.peek().text, "\\") && last != 0 {
			marker()
			c.next()
		}
		if c.more() {
			l := c.peek()
			t := l.text
			if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && t != "-- " && t != "--" && !c.peek2("--- ", "+++ ") {
				side := "new"
				n := newCount
				if t[0] == '-' {
					side, n = "old", oldCount
				}
				return perr(hl.num, "unified hunk says %d %s lines but has more (line %d)", n, side, l.num)
			}
		}
		h.CRLF = bodyLines > 0 && crlfLines == bodyLines
		if err := fn(h); err != nil {
			return err
		}
	}
	return nil
}

func stripPrefix(name, prefix string) (string, bool) {
	if name == devNull {
		return name, true
	}
	return strings.CutPrefix(name, prefix)
}

// names are the file's old and new names, -p1 applied.
func (u *unifiedFile) names() (string, string) {
	oldName, newName := u.oldName, u.newName
	if !u.hasNames {
		oldName, newName = u.gitOld, u.gitNew
		if u.newFile {
			oldName = devNull
		}
		if u.deletedFile {
			newName = devNull
		}
	}
	if u.strip >= 0 {
		return stripN(oldName, u.strip), stripN(newName, u.strip)
	}
	// -p1: strip a/ and b/ when both sides carry them. With /dev/null on
	// one side that is only trusted from git, whose header has both.
	if o, ok1 := stripPrefix(oldName, "a/"); ok1 {
		if n, ok2 := stripPrefix(newName, "b/"); ok2 {
			both := oldName != devNull && newName != devNull
			gitOK := u.git && strings.HasPrefix(u.gitOld, "a/") && strings.HasPrefix(u.gitNew, "b/")
			if both || gitOK {
				oldName, newName = o, n
			}
		}
	}
	return oldName, newName
}

// stripN is name without its first n components ("" when that leaves
// nothing); /dev/null stays.
func stripN(name string, n int) string {
	if name == devNull {
		return name
	}
	for ; n > 0; n-- {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return ""
		}
		name = strings.TrimLeft(name[i+1:], "/")
	}
	return name
}

// op is the file's operation, as its names and git's lines say ("" when
// both sides are /dev/null, which finish refuses).
func (u *unifiedFile) op() Op {
	oldName, newName := u.names()
	switch {
	case oldName == devNull && newName == devNull:
		return ""
	case oldName == devNull || u.newFile:
		return Add
	case newName == devNull || u.deletedFile:
		return Delete
	}
	return Update
}

// finish works out the file's operation and paths.
func (u *unifiedFile) finish() error {
	f := &u.f
	oldName, newName := u.names()
	if u.strip >= 0 && (oldName == "" || newName == "") {
		return perr(f.Line, "-p %d leaves nothing of the file's name (%s, %s)", u.strip, u.oldName, u.newName)
	}
	switch u.op() {
	case "":
		return perr(f.Line, "both sides are %s", devNull)
	case Add:
		f.Op, f.Path = Add, newName
		if f.stats.hunks > 1 {
			return perr(u.secondLine, "a new file (%s) must have a single hunk", newName)
		}
		if f.stats.hunks == 1 {
			if u.firstHasOld {
				return perr(u.firstLine, "a new file (%s) has old lines", newName)
			}
			f.Content = u.content
		} else {
			f.Content = []byte{}
		}
	case Delete:
		f.Op, f.Path = Delete, oldName
		if u.firstNewLine != 0 {
			return perr(u.firstNewLine, "a deleted file (%s) has new lines", oldName)
		}
	default:
		f.Op = Update
		switch {
		case u.renameFrom != "" || u.renameTo != "":
			if u.renameFrom == "" || u.renameTo == "" {
				return perr(f.Line, "%q needs both \"rename from\" and \"rename to\"", "diff --git")
			}
			f.Path, f.MoveTo = u.renameFrom, u.renameTo
		case u.git || oldName == newName:
			f.Path = oldName
		default:
			f.Path = pickName(oldName, newName)
		}
		if f.stats.hunks == 0 && f.MoveTo == "" && f.OldMode == f.NewMode {
			return perr(f.Line, "%s has no hunks", f.Path)
		}
	}
	return nil
}

// pickName chooses between differing old and new names of a plain
// diff -u (as in "--- x.c.orig" "+++ x.c"), much as GNU patch does without
// looking at the file system: fewest path components, then the shortest
// base name, then the shortest name, then the new name.
func pickName(o, n string) string {
	co, cn := strings.Count(o, "/"), strings.Count(n, "/")
	if co != cn {
		if co < cn {
			return o
		}
		return n
	}
	bo, bn := len(o)-strings.LastIndexByte(o, '/'), len(n)-strings.LastIndexByte(n, '/')
	if bo != bn {
		if bo < bn {
			return o
		}
		return n
	}
	if len(o) < len(n) {
		return o
	}
	return n
}
