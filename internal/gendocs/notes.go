package gendocs

// manNotes is appended to fsbox.1: the contract points a user of the Unix
// tools would otherwise have to guess. Keep it in step with README.md.
const manNotes = `.SH OUTPUT
JSON by default: one object on stdout ending in a newline.
.B --format ndjson
prints list items one per line (a last line {"truncated":true,...} when a limit cut the list);
.B --format text
prints what the Unix tool would: raw bytes for read, one name a line for ls.
Paths inside the workdir are printed relative to it; paths under a read root are absolute.
.SH EXIT STATUS
0 success; 1 no_match (grep); 2 usage; 3 denied; 4 not_found, not_a_file, not_a_dir;
5 conflict, exists, text_not_found, ambiguous; 6 too_large, binary; 7 io; 8 config.
On failure stdout is empty and stderr holds one line
{"error":{"code":...,"message":...,"path":...,"rule":...}}.
.SH POLICY
The policy comes from $FSBOX_CONFIG, else --config, else $XDG_CONFIG_HOME/fsbox/config.toml
(or ~/.config/fsbox/config.toml), else the built-in default: the current directory is the workdir,
no other roots, every command but rm on.
Unknown keys, bad globs or regexes and missing roots are config errors naming the line.
A policy file inside its own workdir, or inside the current directory when FSBOX_CONFIG is unset,
is refused.
Deny patterns match case-insensitively, against the path as written and as resolved, and deny
everything below a denied directory; allow patterns match files exactly and leave directories
traversable.
FIFOs, sockets, devices and anything under /proc, /sys and /dev are never opened.
Landlock is not applied by this build: landlock = "required" and a non-empty [audit] log are
refused as config errors.
.SH READ
read pages with --offset (0-based line) and --limit; a file over max_read_bytes must be paged.
sha256 and eol cover the whole file when it fits in max_read_bytes; otherwise sha256 is null
(use stat --sha256). A UTF-8 BOM is reported as bom and left out of content.
.SH SEE ALSO
README.md in the fsbox source for the full contract.
`
