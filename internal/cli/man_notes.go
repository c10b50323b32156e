package cli

// manNotes is appended to fsbox.1: the contract points a user of the Unix
// tools would otherwise have to guess. Keep it in step with README.md.
const manNotes = `.SH OUTPUT
JSON by default: one object on stdout ending in a newline.
.B --format ndjson
prints list items one per line, then one last line {"summary":{...}}: the result without its items
(count, truncated, limit, skipped, ...), the same for every list command;
.B --format text
prints what the Unix tool would: raw bytes for read, one name a line for ls.
On a terminal the text form (and a text error line on a terminal stderr) shows as \\xNN whatever
a terminal could obey: control bytes but tab and line ends, DEL, C1 controls (U+0080 to U+009F)
and bytes that are not valid UTF-8; in names, paths and link targets a newline and a CR as well.
Into a pipeline the bytes are unchanged. JSON on a terminal writes C1 controls as \\u0080 to \\u009f.
Paths inside the workdir are printed relative to it; paths under a write root or a read root are
absolute.
.SS Shaping and pipelines
\-\-fields a,b keeps only those keys (of each item for list commands); \-\-jq EXPR runs a jq
program over the JSON result (built in; strings print raw). grep, wc, sort and cut read standard
input when the path is \-, or when no path is given and stdin is a pipe or a file (ripgrep's
rule); a terminal or /dev/null is no stdin. On a terminal grep colours matches and ls and find
colour names by type (GNU ls's colours, or LS_COLORS); NO_COLOR turns \-\-color auto off.
.SH ERRORS
On failure stdout is empty and stderr holds one line
{"error":{"code":...,"message":...,"path":...,"rule":...}} (indented when stderr is a terminal);
EXIT STATUS below maps each code to its status. An empty path is usage (ls '' is usage; ls alone lists the workdir). When stdout is
a pipe whose reader left early (fsbox grep x . | head \-1) the call stops quietly, nothing on
stderr, as a pipeline stage ended by SIGPIPE would, after its audit record: exit 141. A command
that only reads notices the reader's exit within 0.2 s whether or not it has more to write (on
Linux by polling the pipe for POLLERR; elsewhere at the next write), and stops its search; a
change runs to its end. Into a pipe, grep and find pass on what they found whenever their search
waits, not only when 64 KiB are held, so head \-1 gets the first match as soon as it is found.
.SH HELP
\-\-help is always help, as is fsbox help COMMAND; \-h is help too, except where GNU gives it a
meaning: grep \-h is \-\-no\-filename (and \-H \-\-with\-filename), sort \-h is GNU's
human\-numeric sort, which fsbox refuses (usage) rather than sort differently. fsbox with no
command is usage (exit 2). \-\-version prints the version, the commit and the Go version.
.SH MCP SERVER
fsbox mcp DIR... serves the enabled commands as MCP tools over stdio (\-\-http 127.0.0.1:PORT:
streamable HTTP, loopback only, every request with FSBOX_MCP_TOKEN as a bearer token). It never
serves the built\-in default policy alone: it needs FSBOX_CONFIG, \-\-config or directories
(the first the workdir, the rest read roots, or under \-\-profile reference write roots, as the
reference server lets every directory it is given be written; without a policy they are the roots
of the agent preset). With a policy the directories only narrow it: they add a bound and never
replace its roots. The server reaches only them, relative paths resolve under the first and
print relative to it, roots and list_allowed_directories report them, and every rule keeps the
anchor the policy gives it (deny = ["secret/**"] still denies W/secret from fsbox mcp W/sub,
and .git/config stays write\-denied from fsbox mcp W/.git). A directory a deny rule matches is
config at start, naming the rule; under \-\-profile reference, which serves each directory whole,
so is one a write_deny rule matches or a deny or write_deny rule holds (a glob whose literal
prefix lies below or above it; one that begins with a wildcard holds nothing it does not match),
and each must lie in one of the policy's writable roots. Roots a client
announces narrow the served roots, never widen them. \-\-profile reference offers the reference
filesystem server's tool names and arguments.
.SH JOURNAL
Each writable root has its own journal, a subdirectory of [journal] dir (default
$XDG_STATE_HOME/fsbox/journal) named by a hash of the root's canonical path and of its identity
(st_dev, st_ino, birth time), which identity.json records. A subdirectory whose record does not
match its root, the journal of an earlier directory at a root's path, and an old\-layout journal
straight in an explicit dir are neither read nor applied; roots lists them (journal.ignored), and
tenants sharing one dir never see each other's changes. write, append, edit,
cp, patch, mv, rm (\-r too), mkdir and undo keep what each name held before the change and
record it (change_id in the results of write, edit and patch; PREFIX:N in a write root's journal).
history lists the changes newest first (\-\-limit N reads only the journal's end),
only the paths the policy in force may read (hidden counts the rest; a move with one hidden end
shows as an add or a delete; history of a denied path is denied);
undo restores a change's paths all or nothing if they still hold what it left (conflict
otherwise, \-\-force anyway), by default the newest change not yet undone, and is denied as a whole
when the policy may not write one of its paths now (explain undo ID says so first).
[journal] max_bytes (at least 64 KiB) bounds all a root's journal holds on disk (file sizes plus
4 KiB per file or directory); whole changes are evicted, oldest first; a change too large to keep
is recorded with kept false (undo refuses it), or without its paths (omitted) when its record
alone is too large. Deleted content lives on until evicted or purged. purge
is off unless the policy turns it on, is not undoable, and forgets only the changes whose every
path the policy in force may write (explain purge counts them).
A multi\-file patch interrupted by a crash is finished by the next change of a policy that may
write all its paths; one the policy in force may not finish is left untouched (roots:
recovery_pending), and a change overlapping it is conflict.
.SH FSBOX-MCP
The MCP server is its own binary, fsbox\-mcp, installed beside fsbox (make install and
go install ./cmd/... install both): fsbox does not link the MCP SDK, whose package inits (about
0.9 ms) every call would pay. A host may run fsbox\-mcp [flags] [DIR...] directly, the same as
fsbox mcp, which replaces its process with the fsbox\-mcp beside it, same arguments, before any
root is opened (without fsbox\-mcp, fsbox mcp exits with config). \-\-jq is built into fsbox.
fsbox\-mcp runs before Landlock, with the caller's rights, so fsbox never runs one whose name
beside fsbox, or the file it resolves to, lies (itself or a directory above it) in a writable
root of the policy in force (the workdir, write_roots; every one of them, whatever directories
fsbox mcp serves), by canonical path or by identity (st_dev, st_ino: a writable root
bind\-mounted elsewhere counts): such a call is denied (exit 3); install fsbox outside every
writable root. A policy that does not load is
reported, not handed over. On Linux fsbox runs the descriptor it checked. fsbox's own
executables and the name fsbox\-mcp beside them, existing or not, are never written, renamed or
removed through fsbox.
.SH POLICY
The policy comes from $FSBOX_CONFIG, else --config, else $XDG_CONFIG_HOME/fsbox/config.toml
(or ~/.config/fsbox/config.toml), else the built-in default: the current directory is the workdir,
no other roots, every command but rm, purge and store on.
links creates a directory and files, so it is denied (rule command) unless links, mkdir and write
are all switched on.
Unknown keys, bad globs or regexes and missing roots are config errors naming the line.
A policy fsbox writes or could have written is refused (config), whatever workdir it names: one
inside its own workdir or write roots (whatever directories fsbox mcp
serves), or inside the current directory when FSBOX_CONFIG is
unset; and for --config, one inside a writable root of the policy that applies without it (the
workdir and write_roots of the user's config.toml, else the current directory), inside the
directory of that policy's or its own audit log or [journal] dir, or inside fsbox's state
directory ($XDG_STATE_HOME/fsbox or ~/.local/state/fsbox).
Paths are compared with symlinks resolved and at every step the name passes through, and by
identity (st_dev, st_ino of the directories above the file; on Linux the file's other names
through bind mounts). A policy file with more than one hard link is refused: copy it, never link.
An empty --config is usage. The fallback's workdir is protected even when the fallback no longer
loads; a policy must be a regular file (not a pipe, a device, or under /proc, /dev, /sys). With
FSBOX_CONFIG unset, --config trusts any other readable regular file: a host with several policies
sets FSBOX_CONFIG. A glob's leading / or ./, empty and . components and trailing / are dropped
("secrets/" names the directory); in allow, "docs/" means the files below docs; ".." is config.
Deny patterns match case-insensitively, against the path as written and as resolved, and deny
everything below a denied directory (deny_regex too); a missing path below a denied directory is
denied, not not_found, and so is a symlink whose last step leads into a denied directory,
whatever lies there. When roots overlap, a path below both obeys the deny rules of each.
A path's .. is resolved on its spelling, relative to its root, before any rule or open (as the
reference MCP server does, unlike POSIX): link/../x is x, and secret/sub/../../a.txt is a.txt
whatever secret/sub is, so no answer tells what lies in a denied directory; a .. that climbs out
of its root is denied (rule root).
A deny or write_deny glob that begins with **/ also sees the root's own name (.git/config for a
workdir that is .git, which so stays write\-denied); the directories above a root never decide,
and allow rules and regexes never see the name.
Allow patterns match files exactly and leave directories traversable.
Missing parents are made one at a time, never through a symlink. A walk does not enter a path
over 4096 bytes (skipped.long_paths); rm \-r and mv refuse a tree holding one (too_large).
With deny_hardlinks, mv and rm refuse a name of a file with several links too. Either way nothing
is changed in place on an inode with more than one link: write \-\-append there is denied (rule
hardlink, checked on the opened descriptor under the lock); write, edit and cp replace the name.
write_roots = [DIR...] (absolute, ~/ and ${VAR} as for workdir) are writable exactly as the
workdir is: every rule, Landlock, the locks and fsbox's own files cover each. They must exist and
be disjoint from each other and from the workdir (config). A read root inside a writable root is
writable with it. Roots, read or writable, may overlap only as their canonical paths show: one
that is another root or a directory above one under another name (same device and inode), or
that shows at itself or at a mount inside it (/proc/self/mountinfo) a directory lying in or
holding another root, is config (a bind mount); read_roots = ["~"] with the workdir below it
nests as before. mv between roots on one file system works; across file systems it is io.
fsbox's own files (the policy file, rule config_file; its executables and the companion's names,
the journal and the audit log, rule own_file) are never written, renamed or removed through
fsbox, nor is a directory that holds one moved or removed. $XDG_STATE_HOME, [journal] dir and
[audit] log are followed component by component, symlinks included, before fsbox decides they
lie outside every root.
fsbox's state is never read through fsbox, under any policy (rule own_file, as /proc): nothing
below a directory holding FSBOX-JOURNAL.TAG (every journal fsbox makes, and their base, holds
one), below the default journal base ($XDG_STATE_HOME/fsbox/journal), the [journal] dir or fsbox's
configuration directory ($XDG_CONFIG_HOME/fsbox or ~/.config/fsbox), nor the audit log itself,
by path, by identity (a bind mount) or by marker; a missing name there is denied, not not_found.
ls and walks list such a directory empty and count its entries in skipped.denied: with a root of
~, ~/.local/state/fsbox/journal and ~/.config/fsbox read as empty.
Rules follow content, not names: mv refuses (denied) unless the moved entry and everything below
it is writable at its old place and at its new one; rm -r checks the whole tree through
descriptors first and then removes exactly the objects it checked (conflict if one was swapped).
Every change (undo and crash recovery too) runs through one door that takes an exclusive flock
on each writable root it touches and a shared flock on each of their ancestors, each directory
once and in one order by identity (device, inode), never by path, so policies whose roots nest
still change one file at a time and two names of one directory are one lock; waiting for a lock
honours the deadline (timeout, exit 9, nothing changed); it re-checks each pinned directory first;
write --no-clobber and cp without --force never replace a file that appeared meanwhile (exists).
Existing files are opened without following symlinks and checked like reads, deny_hardlinks
included. --mode sets permission bits only.
FIFOs, sockets, devices and anything under /proc, /sys and /dev are never opened.
After loading the policy fsbox confines itself with Landlock (read roots read-only, the workdir
and write roots read-write); landlock = "required" refuses to run without it.
Four defences depend on the platform, and roots reports each under guarantees:
descriptor_path_check (rules checked on the opened descriptor's path: /proc/self/fd on Linux,
fcntl F_GETPATH on macOS), dir_lock (flock), no_follow (O_NOFOLLOW and O_NONBLOCK on every open)
and no_replace_rename (renameat2 RENAME_NOREPLACE on Linux, renameatx_np RENAME_EXCL on macOS).
Linux and macOS give all four, Windows none. [sandbox] require (all four by default) lists those
fsbox refuses to run without (config); a policy accepts a weaker sandbox only by leaving them out.
The macOS layer is built and vetted by make cross but not run in this project's CI.
[audit] log = PATH (absolute, ~/ and ${VAR} expanded, outside the workdir) appends one JSON line
per call: time, pid, policy, command, paths (each argument and the real path it reached), verdict
(ok, no_match, denied or error), exit, error {code, rule, path}, bytes_read, bytes_written and
duration_ms. The log is opened (created 0600, never through a symlink) before Landlock; if it
cannot be, the call is refused as config. Each record is one write(2) on an O_APPEND descriptor,
so concurrent calls never interleave. A record that cannot be written turns the call's exit into
io (7) with an error line, since the call's output was already printed.
A call whose stdout or stderr pipe closes early is recorded too (a closed stdout as verdict error,
code io, exit 141).
.SH HOSTILE SIZES
Every limit accepts 1 to 2^63-1 and works there. max_line_bytes (default 65536) cuts a line's JSON
and NDJSON text at a UTF-8 boundary: grep marks the match text_truncated with text_bytes, its
text being the window around the first match (text_offset: where it starts in the line); context
lines are cut from their start (context_truncated); slice, sort and cut report text_truncated and cut_lines. The text form prints
lines whole. No command holds more than 16 MiB of one line in memory: grep searches a longer line
of a file through a mapping and prints it whole, and one on a stream as it passes, giving its first
16 MiB with a note; the text form of slice, and cut, are too_large. No command holds more than 4 GiB of one file (read unpaged, edit, sort,
write \-\-append): above that, too_large (hold_cap), whatever the policy allows.
.SH DEADLINE
Each call has a deadline: [limits] max_call_seconds (integer seconds, default 86400), lowered by
\-\-timeout DUR (a Go duration such as 1.5s or 2m, or a number of seconds; 0, a negative value or
no duration is usage; a larger value is silently the policy's, as \-\-limit past max_results) and
by an MCP tool call's timeout argument (seconds). Past it grep, find, ls, history, and wc or stat
of several paths print what they found by then with truncated, limit "timeout" and cuts
["timeout"], and exit 9 (the text form notes the cut on stderr); a deadline already past when a
walk starts (it ran out while the policy loaded) prints the empty part, as one a moment later
does. A count (grep \-c, grep \-l, wc) names only what it finished: the counts of the files read
to the end, count (wc: total) their sum, partial: true, files_searched, and next_cursor at the
first file not finished, so the pages' counts add up to the whole; when max_results or
max_result_bytes cut a count's list first and the deadline then stopped its counting, limit is
"timeout", cuts names both in order (["max_result_bytes","timeout"]), and the count is that of
the files before the list's cut, where the next page starts. One path (a file, stdin) cut in its
middle fails with timeout (stdout empty). sort, and a change not yet committed, fail with timeout
(exit 9, stdout empty). A change (write, edit, patch, cp, mv, rm, mkdir, undo) checks the deadline
once its input is in, under its locks, just before it commits, never halfway: a write fed by a pipe
that ends after the deadline writes nothing, and write stops reading a pipe that trickles on past
it. The part is printed by the deadline plus 100 ms; grep does not wait for a read stuck in the
kernel (a hard NFS mount), which may still delay the process's exit; find, ls, wc and stat wait for
such a read to return. \-\-jq runs under the deadline plus 100 ms: past it a call that changed
nothing fails with timeout (stdout empty), and one whose change was made prints its result without
the \-\-jq shaping, with truncated and limit "timeout", and exits 9.
.SH PAGES
A list result (ls, grep, find, slice, sort, cut, history, stat or wc of several paths) stops at
max_results items and at [limits] max_result_bytes bytes (default 1 GiB), counted once as fsbox's
JSON of its items in every format (in the text form a line counts its bytes and quotes, without
escapes); a page holds at least one item, a line over the budget is cut to fit (text_truncated).
A cut by the budget has limit "max_result_bytes" and exits 9. Every cut (max_results,
max_result_bytes, the deadline, \-\-limit) carries next_cursor (in NDJSON's summary; in the text
form on a hint line on stderr): the same command with the same arguments and \-\-cursor CURSOR
(an MCP tool's cursor argument) gives the items after the cut. A cursor is at most 4 KiB and is
only compared with the items the call produces, never opened: a page is a suffix of the call's
whole answer; a cursor made for another command, other arguments, policy or format, or that does
not decode, is usage. find and grep resume in walk order without reading the directories before
the cursor; grep searches the cursor's file again and drops what was given, and restarts a file
that changed (restarted: true), but resumes after a file it searched to the end without reading it
again, so a page the deadline stops moves on even where nothing matched; slice, sort and cut count
items, re-reading their input; wc resumes at the first path it did not count.
.SH WRITE
write takes its content from --content (literally: '' is an empty file, \- a dash) or from stdin.
Without --content, stdin is read only when it is a pipe, a socket or a regular file; a terminal or
/dev/null is usage and the file is left alone. PATH followed by \- reads stdin whatever it is.
--mode takes permission bits only, octal 0 to 0777 (644, 0644 or 0o644); setuid, setgid and
sticky (4000, 2000, 1000) are usage, with --append too.
.SH PRECONDITIONS
Under [write] require_precondition = true every change names what it replaces, else
precondition_required (exit 5) naming the flag: write over a file, write \-\-append, edit and rm
of a file take \-\-expect\-sha256 of that file; a new file \-\-expect\-absent (= \-\-no\-clobber);
patch \-\-expect\-sha256 PATH=HEX for every updated, deleted or moved\-from path; cp and mv
\-\-force over a file \-\-expect\-sha256 of the file replaced (without \-\-force nothing); rm \-r only
an empty directory; mkdir nothing; undo \-\-force is refused. A denied path is denied first, and
no refusal gives the current sha256. The hash is checked under the lock at the moment of the
change: no update is lost among fsbox calls, a writer that replaces the file by rename is
detected, an in\-place writer outside fsbox during the commit can be lost.
.SH RULE SETS AND THE AGENT PRESET
Two rule sets are built in and match as [paths] rules do. agent_config (write_deny **/.git/**,
**/.claude/**, **/.codex/**, **/.cursor/**, **/.gemini/**, **/.agents/**, **/.windsurf/**)
applies to every policy. secrets (deny **/.env and **/.env.* but *.example, *.sample, *.template;
**/*.pem, **/*.key, **/id_rsa*, **/id_ed25519*, **/id_ecdsa*, **/.ssh/**, **/.aws/credentials,
**/.config/gcloud/**, **/.azure/**, **/.docker/config.json, **/.npmrc, **/.pypirc, **/.netrc,
**/.git\-credentials) applies under preset = "agent" and in fsbox mcp without a policy.
defaults_off = ["secrets"] (or "agent_config") switches a set off; an unknown name is config.
explain names the set (rule default:secrets); roots lists rule_sets, preset and
require_precondition. preset = "agent" fills the keys the file leaves out: the secrets set,
require_precondition = true, max_results = 2000, max_line_bytes = 2000, max_result_bytes = 65536,
max_call_seconds = 30. The reference MCP profile never requires preconditions (a policy that sets
require_precondition itself is config there).
.SH FRESHNESS
read \-\-if\-none\-match SHA answers {path, unchanged: true, sha256} with no content when the
file still hashes to SHA (whatever its size or type), else the normal read; the file is read once.
stat \-\-check PATH=HEX... (HEX: 64 hex digits or absent; split at the last =), or
\-\-check\-file FILE|\-, answers {changed[{path, exists, sha256?}], unchanged[], errors[]}, each file
read once. A denied path answers denied, exactly as a missing one under that policy.
.SH EDIT
edit matches exactly. With \-\-edits\-json each edit is matched against the original text (never
against another's output); edits whose old texts share bytes are usage, naming both; all are
applied together, all or nothing. text_not_found names the closest lines, searched within a fixed
budget; ambiguous lists the first ten lines and how many more. \-\-expect\-count N implies \-\-all and
wants exactly N occurrences: more is ambiguous, fewer text_not_found, with the real count.
Several edits take time linear in the file plus the replacements and memory a small multiple of
the file, applied or refused: more than 8 matches per byte of the file (plus 1 Mi) are too_large.
\-\-sequential takes the edits times the file, in the same memory, checking the deadline between
edits.
.SH READ
read pages with --offset (0-based line) and --limit; a file over max_read_bytes must be paged.
sha256 and eol cover the whole file when it fits in max_read_bytes; otherwise sha256 is null
(use stat --sha256). A UTF-8 BOM is reported as bom and left out of content.
stat given several paths describes each in files[] (a list that max_results cuts) and reports
each path it cannot describe in errors[]; a missing path is exists:false, no failure.
.SH LINE TOOLS
wc counts as GNU coreutils 9.1's wc \-lwmc in a UTF-8 locale (9.5 changed how control and
invalid bytes count; fsbox keeps 9.1's rules) and pads the text form's columns as 9.1 does.
slice has Python's lines[START:END] semantics; a negative bound reads only the end of the file,
so total and line are null unless the whole file was read.
sort orders bytes as LC_ALL=C sort, with GNU's last\-resort whole\-line comparison (none with
\-s); \-k is GNU's: repeatable, F[.C] positions, the key options n, f, r and b (others are usage,
never ignored); \-f folds ASCII letters only. Its memory stays within four times the input plus
a constant, whatever the lines.
cut follows GNU field lists; a line without the delimiter is kept whole; --csv parses RFC 4180;
an empty \-\-output\-delimiter is a NUL (GNU); an open range needs no cap.
.SH GREP AND FIND
Trees are walked depth first in name order, so output is in path order.
.git is never entered; dot-names need --hidden; unless --no-ignore, .ignore applies everywhere,
and .gitignore and .git/info/exclude apply inside a git repository only, as in rg and fd
(--no-require-git applies .gitignore outside one too). A walk is inside one when a .git (a
directory, or a worktree's file) lies in its root, between the root and the start, or in any
directory above the root up to / (an lstat of .git in each, never a read: the one metadata access
outside the roots); a directory holding .git inside the walk is a repository from there down.
Ignore files are read only inside the roots; the global excludes file is not read. When ignore
rules leave out everything a walk met, the text form says so on stderr (skipped.ignored counts
them in JSON). An ignore file reached through a symlink is not
read; only its first MiB is (whole lines), and at most 256 glob rules apply along one path; rules
left out are counted in skipped.ignore_rules.
\-t/\-\-type NAME and \-T/\-\-type\-not NAME select walked files by rg's type names and globs
(\-\-type\-list prints them); \-T wins over \-t; a file named on the command line is searched
whatever its type. find's \-t also takes fd's f, d and l (so d is a directory there, never D
source); a type name selects files and symlinks by name, never directories.
\-0/\-\-null ends each path of find's text form with a NUL, and puts a NUL after each file name
of grep's text form in place of ':' or the newline (grep \-Z, rg \-0).
Symlinks are followed only with -L, never out of their root, never in a loop.
grep uses RE2 syntax, matched line by line: ^ and \\A are a line's start, $ and \\z its end; a
CRLF line matches as if it ended in LF; a file with a NUL byte is binary and skipped in trees.
grep exits 1 when nothing matched and still prints its result.
\-A and \-B above max_results keep max_results lines of context.
Globs of ignore files, \-g and \-E (and find's GLOB) are read gitignore\-style, as git, rg and fd
read them: without '/' a glob matches the base name at any depth, a leading '/' anchors it at
the search's start, a trailing '/' means a directory, and x/** is what lies inside x (policy
patterns keep doublestar's meaning, where x/** is x too). Ignore files follow ripgrep's
precedence: .ignore beats .gitignore beats exclude at every depth; a nested repository stops
the .gitignore rules from above; a UTF\-8 BOM is skipped; a dot\-name a '!' rule whitelists is shown.
\-m 0 prints nothing (exit 1); \-w is rg's rule; a UTF\-8 BOM opening a file is no text.
find \-L lists a symlink dangling inside its root as a symlink.
find \-l describes each entry by one fstatat in the directory the walk holds (a symlink as
itself unless \-L follows it); an entry gone before it is described is left out and counted in
skipped.errors.
.SH OBJECT ROOTS
A root may be an S3 bucket prefix: workdir, write_roots and read_roots accept
s3://BUCKET/PREFIX (with ${VAR} as for paths: a tenant is a prefix), reached through the [store]
table (endpoint, https:// except on loopback; region; path_style; profile; concurrency, 16;
max_requests, 0 = no cap, the agent preset 10000). Credentials come only from the AWS
environment (variables, profile, web identity, instance role), never from the policy. An s3://
argument is always a URL and prints back as one. A path becomes the key PREFIX/ plus the cleaned
relative path, sent verbatim; an empty, . or .. component, invalid UTF\-8, NUL or a key over
1,024 bytes is usage before any request, and a tenant value that is not a safe key component is
config. Rules, rule sets, toggles, limits, cursors, the deadline, explain and audit hold as on a
directory, on the key relative to its root. A file is read as one version (its ETag): a file
replaced meanwhile is conflict. Walks list the subtree flat and read concurrency files at a time,
in the same order as on a disk. A call stops after max_requests requests (truncated, limit
max_requests, exit 9). There are no symlinks, hard links, special files or modes (no mode in ls
and stat; a directory has no size or mtime; an empty directory is a DIR/ marker); .gitignore
applies only inside a git repository, so on a bucket only .ignore does.
Every change on an object root is a conditional request on what was checked (If\-Match of the
version pinned or found to hash as \-\-expect\-sha256 asked; If\-None\-Match: * for a new name),
each PUT carrying the content's sha256: no writer's update is lost, inside fsbox or outside. A
refused condition is conflict (exists for a name taken). mkdir puts a DIR/ marker; cp and mv read
the pinned source and PUT it (never a server\-side copy), mv then deletes the source If\-Match and
is not atomic; rm \-r removes exactly the keys it checked and reports as survived those made
meanwhile. \-\-mode and a directory mv are unsupported (exit 2); mv between a bucket and a local
root is io; cp between them works. max_write_bytes over 5 GiB with a writable object root is
config (one PUT per object). A writable object root needs [journal] dir to be an s3:// URL
outside every root naming the roots' ${VAR}s (one journal per tenant); prior versions are copied
in the store, conditioned on their version; history, undo and purge work as locally. patch, a
multi\-file undo and cp \-r into a bucket check every target, keep each prior version, write their
plan, then make one conditional request per key in path order, taking back those made, newest
first, when one is refused (conflict): never a lost update, all files or none once the call
returns, not isolated (a reader may see a mix during the commit); a crash leaves the plan, and the
next change on the root takes the batch back, restoring only journal copies whose sha256 is the
plan's. roots gives each root's kind and
second_wall: on a bucket none, so scope fsbox's credentials to the tenant's prefix (an IAM
session policy; README shows one).
fsbox store check [URL] (off unless [commands] store = true) probes the server of a writable
object root under a fresh random prefix inside it, removes the prefix after, says whether the
credentials reach outside the policy's roots, and exits 0 whenever the check ran: read ok, or each
probe's ok (fsbox\-store(1) names the probes).
fsbox and fsbox\-mcp do not link the S3 client: a call whose
policy names an s3:// root runs the fsbox\-s3 beside them (checked as fsbox\-mcp is).
.SH SEE ALSO
README.md in the fsbox source for the full contract.
`
