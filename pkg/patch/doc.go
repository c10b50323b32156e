// Package patch parses multi-file patches and applies their hunks to file
// contents in memory. It uses only the standard library and never touches
// the file system: the caller reads, checks and writes files.
//
// # Formats
//
// Parse accepts two formats and tells them apart by the first non-blank
// line. CRLF line endings in the patch text are accepted everywhere (the
// "\r" is not part of any line; Hunk.CRLF records that a hunk's lines all
// had one, not counting a line marked "\ No newline at end of file").
//
// The envelope starts with "*** Begin Patch" (only blank lines may come
// before it) and ends with "*** End Patch" (only blank lines may follow).
// Between them come file sections:
//
//	*** Add File: PATH      then only '+' lines: the whole new content,
//	                        joined with "\n" plus a final newline
//	*** Delete File: PATH   no lines
//	*** Update File: PATH   optionally "*** Move to: NEWPATH" right after,
//	                        then hunks
//
// A hunk is a header "@@" or "@@ ANCHOR" followed by lines starting with
// ' ' (context), '-' (removed) or '+' (added), and optionally a last line
// "*** End of File" (the hunk must match at the end of the file).
// Consecutive "@@ ANCHOR" headers with no lines between them nest: each
// anchor is found after the previous one. The first hunk of a section
// may omit its "@@". A bare empty line inside a hunk is an empty context
// line; bare empty lines at the end of a section are ignored. A header of
// the unified form "@@ -l,s +l,s @@" sets OldStart instead of an anchor.
// An Update needs hunks or a "*** Move to:"; a hunk needs a '+' or '-'
// line; any other "*** " line is an unknown operation.
//
// A unified diff is what diff -u and git diff write: one or more files,
// each "--- OLD" and "+++ NEW" (names end at a tab, or are C-quoted) then
// hunks "@@ -l,s +l,s @@ heading" whose line counts are enforced, with
// "\ No newline at end of file" after the last line of a side. git's
// "diff --git" header and its extended lines are understood: "new file
// mode" and "deleted file mode", "rename from"/"rename to" (a rename, with
// or without hunks), "similarity index" and "index" (ignored), "old
// mode"/"new mode" (recorded in File.OldMode/NewMode; a mode-only change is
// an Update with no hunks). Copies and binary patches are rejected. Text
// before, between and after files (a commit message, "Only in ..." lines, a
// "-- " signature) is skipped. Paths: /dev/null as the old side makes an
// Add (Content is the new side of its single hunk, with a final newline
// unless "\ No newline" follows its last line; its lines end with "\r\n"
// when the hunk's lines all did, as Hunk.CRLF says, else with "\n"), as
// the new side a Delete (its hunk, which must only remove lines, is
// dropped). The a/ and b/
// prefixes are stripped when both sides carry them (git's header vouches
// for the prefix when one side is /dev/null). An Update's Path is the old
// name for git (MoveTo the new one for a rename); for plain diff -u with
// differing names ("x.c.orig" and "x.c") it is the one with fewer path
// components, then the shorter base name, then the shorter name.
//
// Both formats: a path may appear once (as a Path or a MoveTo target), and
// may not be empty. Errors are *ParseError with the patch line.
//
// # Memory
//
// A parsed patch holds no hunk. Parse checks every hunk as it reads it and
// keeps, per file, where its hunks lie in the patch text and a few sums;
// File.EachHunk reads them again, one at a time into one reused Hunk, and
// File.Apply applies them so, writing the new content as it goes. Besides
// the text and the file, Apply holds 12 bytes per line of the file (where
// each starts, and an index of their texts' hashes) and 20 per hunk (where
// it landed, Result.At, and how it matched); File.Placements pairs each
// hunk with its place for a caller that writes a diff. Apply of a slice of
// hunks is the same, for hunks built by hand.
//
// # Applying hunks
//
// Apply treats the file as lines, each with its own ending ("\n" or
// "\r\n"; a lone "\r" is text). A UTF-8 byte order mark at the start is
// kept and is not part of the first line, unless some hunk's first Old
// line starts with one (a unified diff of the file's first lines carries
// the BOM as text, as git diff and diff -u write it): then the BOM is
// text of the file's first line, matched, kept or dropped as such. Lines a hunk adds take the
// dominant ending of the file: "\r\n" if more lines end with "\r\n" than
// with "\n", else "\n" (for a file with no line endings at all, the first
// hunk's CRLF decides). Lines a hunk keeps (equal in Old and New) are
// copied from the file with their own text and ending.
//
// Hunks apply in order. Each is searched for at or after the end of the
// previous hunk's match in the original content, so hunks never overlap.
// Anchors are found first, each after the previous: the first line equal
// to the anchor once trailing whitespace is removed from both, else the
// first line whose text with both ends trimmed equals the trimmed anchor;
// the Old lines are then searched after the last anchor.
//
// The Old lines are matched at three levels, each tried only when the one
// before found nothing:
//
//   - "exact": the line text is equal byte for byte, and the line ends as
//     the patch's line did ("\r\n" when Hunk.CRLF, else "\n");
//   - "trailing_whitespace": equal once trailing spaces and tabs are
//     removed from both, endings as for exact;
//   - "eol": equal once trailing spaces and tabs are removed, whatever the
//     ending (so an LF patch on a CRLF file reports "eol").
//
// A file's last line without a newline counts as ending with the dominant
// ending (above). There is no
// other tolerance: no re-indenting, no ignored context lines.
//
// If the Old lines match in several places at the first level that
// matches, a hunk with anchors takes the first match after its last
// anchor, and a hunk with a unified range takes the match starting
// nearest its OldStart (the earlier one on a tie). Otherwise the result
// is an *AmbiguousError listing every 1-based start line. A hunk with EOF,
// or with OldNoEOL, matches only at the end of the file. When nothing
// matches, the result is a *NotFoundError whose Closest shows the window
// of file lines with the most lines equal to the Old lines after trimming
// both ends (the first on a tie), one per line as "NUMBER| TEXT", with
// tabs shown as "→", trailing spaces as "·" and a carriage return
// (including that of a "\r\n" ending) as "␍". Error hunk numbers in
// messages count from 1; the Hunk fields are 0-based indexes.
//
// A hunk with no Old lines inserts its New lines: at the end of the file
// if it has EOF; else after its last anchor if it has one; else, with a
// unified range, before line OldStart+1 (so "-0,0" means the start of the
// file, and "-5,0" after line 5), never before the previous hunk's end;
// else at the end of the file.
//
// End of file: the file keeps its final-newline state unless a hunk whose
// match reaches the end of the file says otherwise: NewNoEOL drops the
// final newline, else OldNoEOL adds one. A NewNoEOL marker on a hunk that
// does not end at the end of the file is ignored. An empty file counts as
// having a final newline, so lines added to it end with one.
package patch
