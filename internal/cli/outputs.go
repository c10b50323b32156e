package cli

// outputs says, per command, what it prints: the JSON object and what
// --format text gives instead. fsbox-CMD.1 renders it under OUTPUT; a test
// fails when a command has no entry.
var outputs = map[string]struct{ json, text string }{
	"roots":      {"{workdir, read_roots[], config, audit_log, commands[], disabled[], limits{}, paths{}, landlock{}}", "tab-separated lines: workdir, read_root (one per root), config, audit_log, commands, landlock"},
	"explain":    {"{op, path, allowed, rule, reason, access, root, resolved}; exit 0 whatever the verdict", "one line: allowed|denied, the command, the path, the reason and the rule"},
	"read":       {"{path, size, mtime, encoding, content, offset, lines, eof, next_offset, sha256, eol, bom, lossy, truncated, limit?}", "the selected bytes exactly as the file holds them (BOM and CRLF kept; base64 text with --encoding base64), as cat or sed -n would"},
	"ls":         {"{path, entries[{name, type, size, mtime, mode, target?}], count, skipped{hidden, denied}, truncated}", "one name a line, as ls -1"},
	"stat":       {"{path, exists, type, size, mtime, mode, target?, sha256?}", "one tab-separated line: path type size mode mtime [-> target] [sha256]"},
	"wc":         {"{files[{path, lines, words, bytes, chars}], total{}}", "lines words chars bytes path, one line per file, and a total line for several"},
	"slice":      {"{path, start, end, total, line, lines[], count, truncated}", "the lines exactly as the file holds them"},
	"sort":       {"{path, lines[], count, truncated}", "the sorted lines, each ended by a newline, as GNU sort"},
	"cut":        {"{path, rows[[fields]], count, truncated}", "the fields joined by the delimiter (or --output-delimiter), as cut; CSV re-quoted with --csv"},
	"grep":       {"{pattern, matches[{path, line, column, text, before?, after?}], count, files_searched, files_matched, binary_files?, skipped{}, truncated, limit?}; -c: counts[{path, count}]; -l: paths[]", "path:line:text with -n, path:text without (no path for one named file), context lines with '-', groups split by '--'; -c path:count; -l one path a line; colors on a terminal"},
	"find":       {"{dir, paths[], count, skipped{ignored, hidden, denied, loops, errors}, truncated}", "one path a line, as find or fd"},
	"write":      {"{path, bytes, created, sha256}", "SHA256  PATH, the line sha256sum prints, so sha256sum -c can check it"},
	"edit":       {"{path, replacements, diff, sha256, dry_run}", "the unified diff"},
	"mkdir":      {"{path, created}", "the directory's path, as mkdir -v names it"},
	"mv":         {"{from, to}", "FROM -> TO, as mv -v"},
	"cp":         {"{from, to, bytes, sha256}", "FROM -> TO, as cp -v"},
	"rm":         {"{path, removed, type}", "the removed path, as rm -v names it"},
	"links":      {"{dir, links[{path, target, created}]}", "one link path a line"},
	"tools":      {"{tools[{name, command, description, inputSchema, annotations{}, read_only, destructive, idempotent, args[]}]}", "the same JSON: a tool list is for programs"},
	"completion": {"the completion script (not JSON)", "the completion script"},
	"man":        {"the roff man page (not JSON)", "the roff man page"},
}
