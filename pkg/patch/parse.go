package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// pline is one line of the patch text, without its line ending.
type pline struct {
	text string
	crlf bool // ended with "\r\n"
	num  int  // 1-based
}

func splitPatch(text []byte) []pline {
	s := string(text)
	var ls []pline
	num := 0
	for len(s) > 0 {
		num++
		i := strings.IndexByte(s, '\n')
		var l string
		crlf := false
		if i < 0 {
			l, s = s, ""
		} else {
			l, s = s[:i], s[i+1:]
			if strings.HasSuffix(l, "\r") {
				l = l[:len(l)-1]
				crlf = true
			}
		}
		if i < 0 && strings.HasSuffix(l, "\r") { // a final line "x\r"
			l = l[:len(l)-1]
			crlf = true
		}
		ls = append(ls, pline{text: l, crlf: crlf, num: num})
	}
	return ls
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
// the package doc) and returns its files in order.
func Parse(text []byte) ([]File, error) {
	ls := splitPatch(text)
	first := -1
	for i, l := range ls {
		if strings.TrimSpace(l.text) != "" {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, perr(0, "empty patch")
	}
	var files []File
	var err error
	if strings.TrimSpace(ls[first].text) == beginPatch {
		files, err = parseEnvelope(ls, first)
	} else {
		files, err = parseUnified(ls)
		if err == nil && len(files) == 0 {
			for _, l := range ls {
				if strings.TrimSpace(l.text) == beginPatch {
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

func parseEnvelope(ls []pline, begin int) ([]File, error) {
	var files []File
	i := begin + 1
	for {
		if i >= len(ls) {
			return nil, perr(ls[len(ls)-1].num, "missing %q at the end of the patch", endPatch)
		}
		l := ls[i]
		t := strings.TrimRight(l.text, " \t")
		if t == endPatch {
			for _, r := range ls[i+1:] {
				if strings.TrimSpace(r.text) != "" {
					return nil, perr(r.num, "text after %q", endPatch)
				}
			}
			if len(files) == 0 {
				return nil, perr(l.num, "empty patch: no file operations between %q and %q", beginPatch, endPatch)
			}
			return files, nil
		}
		if t == "" {
			i++
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
		j := i + 1
		for j < len(ls) && !isSectionEnd(ls[j].text) {
			j++
		}
		body := ls[i+1 : j]
		// Bare empty lines at the end of a section separate it from the
		// next one; they are not content.
		for len(body) > 0 && body[len(body)-1].text == "" {
			body = body[:len(body)-1]
		}
		f := File{Op: op, Path: path, Line: l.num}
		if path == "" {
			return nil, perr(l.num, "path empty in %q", t)
		}
		var err error
		switch op {
		case Add:
			err = envAdd(&f, body)
		case Delete:
			if len(body) > 0 {
				err = perr(body[0].num, "%s %s takes no content, got %q", deleteFile, path, body[0].text)
			}
		case Update:
			err = envUpdate(&f, body)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		i = j
	}
}

func envAdd(f *File, body []pline) error {
	var b strings.Builder
	for _, l := range body {
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

func envUpdate(f *File, body []pline) error {
	if len(body) > 0 {
		if p, ok := opPath(strings.TrimRight(body[0].text, " \t"), moveTo); ok {
			if p == "" {
				return perr(body[0].num, "path empty in %q", body[0].text)
			}
			f.MoveTo = p
			body = body[1:]
		}
	}
	var cur *Hunk
	bodyLines, changes, crlfLines := 0, 0, 0
	finish := func(num int) error {
		if bodyLines == 0 {
			return perr(cur.Line, "hunk header with no lines after it")
		}
		if changes == 0 {
			return perr(cur.Line, "hunk has no '+' or '-' lines")
		}
		cur.CRLF = crlfLines == bodyLines
		f.Hunks = append(f.Hunks, *cur)
		cur = nil
		bodyLines, changes, crlfLines = 0, 0, 0
		return nil
	}
	for _, l := range body {
		t := l.text
		switch {
		case isHeader(t):
			if cur != nil && bodyLines > 0 {
				if err := finish(l.num); err != nil {
					return err
				}
			}
			if cur == nil {
				cur = &Hunk{Line: l.num}
			}
			a := strings.TrimSpace(t[2:])
			if start, ok := unifiedRangeAnchor(a); ok {
				// "@@ -l,s +l,s @@" in an envelope: a position, not an anchor.
				cur.OldStart, cur.HasRange = start, true
			} else if a != "" {
				cur.Anchors = append(cur.Anchors, a)
			}
		case strings.TrimRight(t, " \t") == endOfFile:
			if cur == nil || bodyLines == 0 {
				return perr(l.num, "%q must come right after a hunk's lines", endOfFile)
			}
			cur.EOF = true
			if err := finish(l.num); err != nil {
				return err
			}
		case strings.HasPrefix(t, moveTo):
			return perr(l.num, "%q must directly follow %q", moveTo, updateFile)
		case t == "" || t[0] == ' ' || t[0] == '+' || t[0] == '-':
			if cur == nil {
				cur = &Hunk{Line: l.num}
			}
			bodyLines++
			if l.crlf {
				crlfLines++
			}
			if t == "" {
				t = " " // a bare empty line is an empty context line
			}
			switch t[0] {
			case ' ':
				cur.Old = append(cur.Old, t[1:])
				cur.New = append(cur.New, t[1:])
			case '-':
				cur.Old = append(cur.Old, t[1:])
				changes++
			case '+':
				cur.New = append(cur.New, t[1:])
				changes++
			}
		default:
			return perr(l.num, "hunk line must start with ' ', '+' or '-' (got %q)", t)
		}
	}
	if cur != nil {
		if err := finish(0); err != nil {
			return err
		}
	}
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return perr(f.Line, "%s %s has no hunks and no %q", updateFile, f.Path, moveTo)
	}
	return nil
}

// unifiedRangeAnchor recognises "-l,s +l,s @@ heading" after an envelope
// "@@" and returns l.
func unifiedRangeAnchor(a string) (int, bool) {
	if !strings.HasPrefix(a, "-") {
		return 0, false
	}
	oldStart, _, _, _, _, ok := parseRanges("@@ " + a)
	return oldStart, ok
}

// ---- unified ----

// parseRanges parses "@@ -l[,s] +l[,s] @@[ heading]".
func parseRanges(t string) (oldStart, oldCount, newStart, newCount int, heading string, ok bool) {
	rest, found := strings.CutPrefix(t, "@@ -")
	if !found {
		return
	}
	var r1, r2 string
	r1, rest, found = strings.Cut(rest, " +")
	if !found {
		return
	}
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
}

func parseUnified(ls []pline) ([]File, error) {
	var files []File
	i := 0
	for i < len(ls) {
		t := ls[i].text
		var u unifiedFile
		switch {
		case strings.HasPrefix(t, "diff --git "):
			u.git = true
			u.f.Line = ls[i].num
			u.gitOld, u.gitNew = gitNames(t[len("diff --git "):])
			i++
			var err error
			if i, err = gitExtended(ls, i, &u); err != nil {
				return nil, err
			}
			if i+1 < len(ls) && strings.HasPrefix(ls[i].text, "--- ") && strings.HasPrefix(ls[i+1].text, "+++ ") {
				u.oldName = headerName(ls[i].text[4:])
				u.newName = headerName(ls[i+1].text[4:])
				u.hasNames = true
				i += 2
			}
		case strings.HasPrefix(t, "--- ") && i+1 < len(ls) && strings.HasPrefix(ls[i+1].text, "+++ "):
			u.f.Line = ls[i].num
			u.oldName = headerName(t[4:])
			u.newName = headerName(ls[i+1].text[4:])
			u.hasNames = true
			i += 2
		default:
			i++ // prose
			continue
		}
		var err error
		if i, err = unifiedHunks(ls, i, &u.f); err != nil {
			return nil, err
		}
		if !u.git && len(u.f.Hunks) == 0 {
			return nil, perr(u.f.Line, "file header (\"--- %s\", \"+++ %s\") with no \"@@ -l,s +l,s @@\" hunk after it", u.oldName, u.newName)
		}
		if err := u.finish(); err != nil {
			return nil, err
		}
		files = append(files, u.f)
	}
	return files, nil
}

func gitExtended(ls []pline, i int, u *unifiedFile) (int, error) {
	for ; i < len(ls); i++ {
		t := ls[i].text
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
			return i, perr(ls[i].num, "git copies (%q) are not supported; write the copy as a new file", t)
		case strings.HasPrefix(t, "Binary files "), t == "GIT binary patch":
			return i, perr(ls[i].num, "binary patches are not supported")
		case strings.HasPrefix(t, "similarity index "), strings.HasPrefix(t, "dissimilarity index "),
			strings.HasPrefix(t, "index "):
		default:
			return i, nil
		}
	}
	return i, nil
}

// unifiedHunks reads the "@@" hunks starting at ls[i].
func unifiedHunks(ls []pline, i int, f *File) (int, error) {
	for i < len(ls) && strings.HasPrefix(ls[i].text, "@@ ") {
		hl := ls[i]
		oldStart, oldCount, _, newCount, heading, ok := parseRanges(hl.text)
		if !ok {
			return i, perr(hl.num, "bad unified hunk header %q (expected \"@@ -l,s +l,s @@\")", hl.text)
		}
		h := Hunk{OldStart: oldStart, HasRange: true, Heading: heading, Line: hl.num}
		i++
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
			if i >= len(ls) {
				return i, short()
			}
			l := ls[i]
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
				i++
				continue
			default:
				return i, short()
			}
			last = kind
			bodyLines++
			lastCRLF, uncounted = l.crlf, false
			if l.crlf {
				crlfLines++
			}
			i++
		}
		if i < len(ls) && strings.HasPrefix(ls[i].text, "\\") && last != 0 {
			marker()
			i++
		}
		if i < len(ls) {
			t := ls[i].text
			if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && t != "-- " && t != "--" &&
				!(strings.HasPrefix(t, "--- ") && i+1 < len(ls) && strings.HasPrefix(ls[i+1].text, "+++ ")) {
				side := "new"
				n := newCount
				if t[0] == '-' {
					side, n = "old", oldCount
				}
				return i, perr(hl.num, "unified hunk says %d %s lines but has more (line %d)", n, side, ls[i].num)
			}
		}
		h.CRLF = bodyLines > 0 && crlfLines == bodyLines
		f.Hunks = append(f.Hunks, h)
	}
	return i, nil
}

func stripPrefix(name, prefix string) (string, bool) {
	if name == devNull {
		return name, true
	}
	return strings.CutPrefix(name, prefix)
}

// finish works out the file's operation and paths.
func (u *unifiedFile) finish() error {
	f := &u.f
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
	switch {
	case oldName == devNull && newName == devNull:
		return perr(f.Line, "both sides are %s", devNull)
	case oldName == devNull || u.newFile:
		f.Op, f.Path = Add, newName
		if len(f.Hunks) > 1 {
			return perr(f.Hunks[1].Line, "a new file (%s) must have a single hunk", newName)
		}
		if len(f.Hunks) == 1 {
			h := f.Hunks[0]
			if len(h.Old) > 0 {
				return perr(h.Line, "a new file (%s) has old lines", newName)
			}
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
			f.Content = []byte(b.String())
		} else {
			f.Content = []byte{}
		}
		f.Hunks = nil
	case newName == devNull || u.deletedFile:
		f.Op, f.Path = Delete, oldName
		for _, h := range f.Hunks {
			if len(h.New) > 0 {
				return perr(h.Line, "a deleted file (%s) has new lines", oldName)
			}
		}
		f.Hunks = nil
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
		if len(f.Hunks) == 0 && f.MoveTo == "" && f.OldMode == f.NewMode {
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
