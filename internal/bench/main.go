//go:build unix

// Command bench times whole fsbox processes against the Unix tools they
// stand in for, as `make bench` runs it:
//
//	go run ./internal/bench -fsbox bin/fsbox -data /tmp/fsbox-bench [-quick] [-only REGEX] [-json] [-shell] [-baseline BIN]
//
// It generates its data deterministically in -data (about 1 GiB; reused
// when present with the right size and generator version), then runs each
// comparison of the table below: both commands in the data directory with
// stdout to /dev/null, a warm-up run first, then interleaved runs until
// each side has had its time budget and at least the minimum number of
// runs. It prints the median wall time of each side, the ratio
// fsbox/rival and fsbox's peak RSS, with PASS/MISS against the targets.
//
// The hostile-* rows (issue 12) feed fsbox inputs an attacker can build
// with fsbox itself: a 2,000-deep directory chain, a 1 MiB .gitignore, a
// 256 MiB line, a 20 GiB sparse file and the like (about 320 MiB on disk
// in all). They have no rival: fsbox is timed alone, against a target on
// its own median wall time besides its peak RSS.
//
// Every run is killed, with its process group, when it outlives -timeout
// (60s) or its resident set passes -max-rss (half the memory), as a
// hostile row before its fix may: the row then reports how long it ran
// and a MISS, and gets no further runs. A side whose runs add up to more
// than -timeout stops after fewer than the minimum number of runs (at
// least one).
//
// A missed target never makes the exit status non-zero: timings are not
// pass/fail. The exit status is 1 only when a command could not run (a
// non-zero exit not listed as fine for the row, a rival that had to be
// killed, or different output where the row asks for the same), and 2 for
// bad flags or data that cannot be generated.
//
// fsbox runs under its built-in default policy (workdir = the data
// directory, max_read_bytes = 1 MiB) unless a row names a policy, which is
// written beside the data directory (outside it, as fsbox requires) and
// passed with --config: FSBOX_* variables are removed from its environment
// and XDG_CONFIG_HOME points where no config.toml lies. Commands are
// exec'd directly (no shell in between) unless a row's rival is itself an
// sh -c pipeline.
//
// It touches the filesystem with package os directly, not through
// pkg/sandbox: it is the harness around fsbox (it generates the data,
// times processes, reads /proc for load and memory), not a part of
// fsbox, and sandboxing it would measure the harness instead.
//
// The mcp-* rows (mcp.go) time `fsbox mcp` as an MCP server over stdio
// against the reference MCP filesystem server where node and npm are
// installed (npm installs the server into DATA/mcp-peer on first use;
// without them, or offline, the peer is reported as skipped). A session
// of each is open at once and their starts and calls alternate one for
// one, so that the ratios hold however the machine's speed drifts. The
// rows and their targets:
//
//	mcp-startup     process start to the initialize reply (under 20 ms)
//	mcp-stat        per-call round trip of a stat of a 10 KiB file (<= 0.7× the peer's median)
//	mcp-read-10KiB  of a read of that file whole (<= 0.7×)
//	mcp-ls          of a listing of 18 entries (<= 0.7×)
//	mcp-find-go     of a search for **/*.go in 3 Go packages (<= 1.0×)
//	mcp-edit        of an edit of a 10 KiB file, fsbox journaling it, on disk (<= 1.0×)
//	mcp-edit-tmpfs  the same with the workdir and the journal on a tmpfs (<= 0.6×): $TMPDIR's,
//	                else /tmp's or the runtime directory's if one is (not /dev/shm: fsbox refuses /dev)
//	mcp-rss-idle    fsbox's resident set after initialize (under 30 MiB)
//	mcp-rss-1000    and after 1,000 mixed calls (under 60 MiB)
//
// The grep-pages-* rows (pages.go) page a grep of 100,000 matches by a
// 64 KiB max_result_bytes with --cursor: the 100th page against the
// first, and all pages against the unbounded grep plus a process start
// per page, with the pages checked to put together to the whole.
//
// -baseline BIN times every row that runs fsbox (the whole-process rows,
// their NAME·sh twins under -shell, and the mcp-* rows) a second time
// with BIN, an earlier build, in place of -fsbox, and reports whether the
// current build got slower:
//
//	go run ./internal/bench -fsbox bin/fsbox -baseline /tmp/oldbin/fsbox -data /tmp/fsbox-bench -shell
//
// (make bench-baseline BASELINE=/tmp/oldbin/fsbox.) BIN runs exactly as
// -fsbox does: the same arguments, policy, environment, stdin and setup,
// in the same loop, run for run interleaved with the current binary (the
// two take turns going first), so that machine noise hits both alike; the
// pair keeps going until each has had its budget and -min-runs, and both
// get the same number of runs unless one of them reaches -timeout. The
// MCP rows run a session of each side at once and alternate their starts
// and calls. BIN's companion, fsbox-mcp (the MCP server), is the one
// beside BIN, as fsbox itself looks it up (a baseline built before
// fsbox-mcp has fsbox-full there, which also ran --jq). A row whose rival is fsbox
// under another policy (rivalPolicy: the journal rows) gets a twin row
// NAME[POLICY] that times that policy against BIN too. The baseline table
// gives per row the median of each side, the ratio current/baseline, the
// change, and a verdict: REGRESSION when the current build is slower by
// more than 5 % of the baseline's median and more than 0.2 ms (the larger
// of the two), faster when it is quicker by as much, else ok. A command
// BIN cannot run (a command or flag it predates) is reported as the
// baseline's error on that row and does not change the exit status.
// -baseline-only (the default with -baseline; -baseline-only=false to
// turn it off) leaves the rivals (rg, the GNU tools, the MCP peer) out,
// which saves their share of the run time (a third of the sides), and
// prints the baseline table alone; with the rivals, the usual table
// comes first.
//
// To add a comparison, add a row to comparisons; to add data, add a
// generator to datasets and name it in the row's needs.
package main

// This driver generates data and starts processes; it is a measuring tool
// beside fsbox, not part of it, so it uses the os package directly rather
// than the sandbox (which would confine the very files it must create).

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	wordgen "github.com/fsbox/fsbox/internal/words"
)

// ---------------------------------------------------------------------------
// The data. Names are relative to -data, where every command runs.

const (
	fileSmall = "small.txt"     // a few lines, for stat and other per-call overheads
	fileText  = "text-1MiB.txt" // exactly 1 MiB = the default max_read_bytes, so read takes it whole
	fileLog   = "log-1GiB.log"  // exactly 1 GiB of varied log lines (about 8.7 million)
)

// genVersion changes whenever a generator's output changes, so stale data
// is regenerated rather than reused.
const genVersion = 1

// dataset is one generated file. gen writes the file at path (of exactly
// size bytes unless size is 0) and returns its line count.
type dataset struct {
	name string
	size int64
	gen  func(path string, size int64) (lines int64, err error)
}

const (
	fileWords = "words-100MB.txt" // one word a line, for sort
	fileNums  = "nums-30MB.txt"   // signed decimals, for sort -n
	fileTSV   = "table-200MB.tsv" // five tab-separated columns, for cut
	fileBlob  = "blob-100MiB.bin" // random bytes, fed to write on stdin
	fileEdit  = "edit-50MB.txt"   // text with one MARKER line, for edit
	fileSed   = "sed-50MB.txt"    // the same, for sed -i
	dirTree   = "gotree"          // a copy of the Go source tree, for grep and find
)

// Short words from common syllables, for sort: many repeated, sharing
// prefixes (genSyllables).
const fileSyllables = "syllables-100MiB.txt"

// fileLine50 is one 50 MiB line of those words, space-separated, with
// lineNeedle once in its middle: minified text, as a bundle or a dump is.
const (
	fileLine50 = "line-50MiB.txt"
	lineNeedle = "ZZTOP_NEEDLE"
)

var datasets = []dataset{
	{fileSmall, 0, genSmall},
	{fileText, 1 << 20, genText},
	{fileLog, 1 << 30, genLog},
	{fileWords, 100_000_000, genWords},
	{fileSyllables, 100 << 20, genSyllables},
	{fileLine50, 50 << 20, genLine},
	{fileNums, 30_000_000, genNums},
	{fileTSV, 200_000_000, genTSV},
	{fileBlob, 100 << 20, genBlob},
	{fileEdit, 50_000_000, genEdit},
	{fileSed, 50_000_000, genEdit},
	{dirTree, 0, genTree},

	{dirDeep, 0, genDeep},
	{dirIgnore, 0, genIgnore},
	{fileHint200k, 0, genHint(200_000)},
	{fileHint400k, 0, genHint(400_000)},
	{fileA1MiB, 1 << 20, genRepeat('a', "")},
	{fileA16MiB, 16 << 20, genRepeat('a', "")},
	{fileMarks, 4 << 20, genMarks},
	{filePeriod, 4 << 20, genPeriod},
	{fileEmpty, 16 << 20, genEmpty},
	{fileLongLine, 256<<20 + int64(len(longLineTail)), genRepeat('a', longLineTail)},
	{fileSparse, 20 << 30, genSparse},

	{dirMCP, 0, genMCP},           // the MCP rows' workdir (mcp.go)
	{dirPatch, 0, genPatch},       // the patch row's files and patch (patch.go)
	{dirCopyTree, 0, genCopyTree}, // the cp -r row's tree (cptree.go)
	{dirPages, 0, genPages},       // the grep-pages rows' tree (pages.go)
	{dirJournal, 0, genJournalDir},
	// The prepared journals (journal.go): made by fsbox, so run by -fsbox.
	{journalHist10k, 0, genJournal(journalHist10k, 10_000)},
	{journalHist100k, 0, genJournal(journalHist100k, 100_000)},
	{journalUndo10k, 0, genJournal(journalUndo10k, 10_000)},
}

// The hostile-size data (issue 12): what an attacker can build with fsbox
// itself under the default policy, about 320 MiB on disk in all.
const (
	dirDeep      = "hostile-deep"                // a chain of deepLevels directories d/d/d/…, leaf.txt and secret.txt at the bottom
	dirIgnore    = "hostile-ignore"              // 2,000 small files under a 1 MiB .gitignore of about 78k rules
	fileHint200k = "hostile-hint-200k.txt"       // 200,000 short lines all like edit's old text, none holding it
	fileHint400k = "hostile-hint-400k.txt"       // the same, 400,000 lines
	fileA1MiB    = "hostile-a-1MiB.txt"          // 'a' × 1 MiB, no newline
	fileA16MiB   = "hostile-a-16MiB.txt"         // 'a' × 16 MiB, no newline
	fileMarks    = "hostile-marks-4MiB.txt"      // text with markEdits unique marker lines @0000…, for --edits-json
	filePeriod   = "hostile-period-4MiB.txt"     // periodText over and over, no newline, for periodJSON
	fileEmpty    = "hostile-empty-16MiB.txt"     // 16 Mi empty lines
	fileLongLine = "hostile-longline-256MiB.txt" // one 256 MiB line of 'a', then longLineTail
	fileSparse   = "hostile-sparse-20GiB.bin"    // 20 GiB of NUL bytes in a sparse file: no disk

	deepLevels   = 2000
	hintOld      = "zzzz qqq" // edit's old text in the hint rows: in no line, and like every line
	longLineTail = "\nneedle\n"
	markEdits    = 3000
)

// ---------------------------------------------------------------------------
// The comparisons. A later command adds one row.

type comparison struct {
	name     string
	needs    []string // datasets it reads (only those are generated)
	fsbox    []string // fsbox's arguments
	rival    []string // the rival's argv; rival[0] may list alternatives: "fd|fdfind"; nil for none
	requires []string // further programs the rival needs (e.g. both ends of an sh -c pipeline)
	env      []string // extra environment for both sides, e.g. "LC_ALL=C"
	okExit   []int    // exit codes besides 0 that mean success (grep's 1)

	maxRatio   float64 // target: median(fsbox) / median(rival) <= maxRatio; 0 = none
	maxSeconds float64 // target: median(fsbox) < maxSeconds; 0 = none
	maxRSSKiB  int64   // target: fsbox's peak RSS < maxRSSKiB; 0 = none
	same       bool    // both sides must print the same bytes (checked on the warm-up run)

	// bytes, when set, is how many bytes the command must get through;
	// the time per GiB is reported.
	bytes func(dir string) (int64, error)

	policy policy // fsbox's policy; the zero value is the built-in default
	stdin  string // a data file fed to both sides on stdin
	pipe   bool   // through a pipe (the bench copies the file into it), not as the file
	// setup, when set, runs (untimed) before every run of either side:
	// for rows whose command changes their data.
	setup func(dir string) error
	// viaShell: both sides run as sh -c 'CMD | cat >/dev/null' (-shell).
	viaShell bool
	// bin, when set, is the binary beside fsbox (and beside the
	// baseline) that runs in its place, with the same arguments: the s3
	// rows' fsbox-s3.
	bin string
	// rivalPolicy, when set with rival ["fsbox", ...], makes the rival
	// this same fsbox under another policy: a row that measures what a
	// policy setting costs (the journal).
	rivalPolicy policy
}

// policy is a policy file for the rows that need one: text is what follows
// its workdir line (the data directory). It is written beside the data
// directory as DATA.NAME.toml (see writePolicy).
// A text that starts with "workdir =" is the whole policy (the s3 rows',
// whose workdir is a bucket).
type policy struct{ name, text string }

// bigLimits raises the limits that would cut the output: max_results and
// the size caps, so fsbox does the same work as the rival.
var bigLimits = policy{"big-limits", "[limits]\nmax_read_bytes = 2147483648\nmax_write_bytes = 2147483648\nmax_results = 1000000000\nmax_sort_bytes = 2147483648\n"}

// denyRules is the default policy with deny rules, which every path a walk
// meets is checked against: the cost grows with the path's depth.
var denyRules = policy{"hostile-deny", `[paths]
deny = ["**/secret*"]
deny_regex = ['(^|/)\.ssh$']
`}

// bigWrite lets edit write (and so --dry-run get through) what 'a' -> 'bb'
// makes of 16 MiB: 32 MiB, over the default max_write_bytes of 16 MiB,
// which would make it too_large.
var bigWrite = policy{"hostile-big-write", "[limits]\nmax_write_bytes = 67108864\n"}

const pageOffset = 5_000_000

var comparisons = []comparison{
	{
		// What the journal costs a write: the same 1 MiB write with the
		// journal on (default) and off; the setup gives the file fresh
		// content before every run, so the journal always has new prior
		// content to keep.
		name: "journal-write-1MiB", needs: []string{dirJournal, fileText}, setup: freshJournalFile("big.txt", 1<<20),
		fsbox: []string{"write", dirJournal + "/big.txt"}, stdin: fileText,
		rival: []string{"fsbox", "write", dirJournal + "/big.txt"}, rivalPolicy: noJournal,
		maxRatio: 1.3,
	},
	{
		name: "journal-edit-10MB", needs: []string{dirJournal}, setup: freshJournalFile("ten.txt", 10_000_000),
		policy: bigWrite,
		fsbox:  []string{"edit", dirJournal + "/ten.txt", "--old", "TOKEN", "--new", "tokens"},
		rival:  []string{"fsbox", "edit", dirJournal + "/ten.txt", "--old", "TOKEN", "--new", "tokens"}, rivalPolicy: noJournalBig,
		maxRatio: 1.5,
	},
	{
		// history over 10,000 recorded changes (a journal prepared beside
		// the data), printed whole.
		name: "history-10k", needs: []string{journalHist10k}, policy: hist10k,
		fsbox:      []string{"history"},
		maxSeconds: 0.05,
	},
	{
		// The newest 10 of 100,000 changes: read from the list's end, so
		// it should not cost more than a short journal's history.
		name: "history-limit-100k", needs: []string{journalHist100k}, policy: hist100k,
		fsbox:      []string{"history", "--limit", "10"},
		maxSeconds: 0.02,
	},
	{
		// undo of the newest change of a journal of 10,000 and more
		// (two more each run): the setup has fsbox write undoFile anew,
		// a real change whose prior content the journal keeps, which the
		// undo restores.
		name: "undo-newest-10k", needs: []string{dirJournal, journalUndo10k}, policy: undo10k, setup: freshUndoChange,
		fsbox:      []string{"undo"},
		maxSeconds: 0.05,
	},
	{
		// A 50-file, 200-hunk unified diff; git apply does not fsync, fsbox
		// patch syncs every file and directory and commits all or nothing.
		name: "patch-50-files", needs: []string{dirPatch}, setup: resetPatch,
		fsbox:    []string{"patch", "--patch-file", dirPatch + "/fix.patch"},
		rival:    []string{"git", "apply", dirPatch + "/fix.patch"},
		maxRatio: 3,
	},
	{
		// cp -r of a 1,000-file tree, one process, all or nothing, the
		// journal on, every file and directory synced; the rival syncs
		// its file system after cp (cptree.go). Target: within 1.5×.
		name: "cp-r-1000-files", needs: []string{dirCopyTree}, setup: resetCopyTree,
		fsbox:    []string{"cp", "-r", dirCopyTree + "/src", dirCopyTree + "/dst"},
		rival:    []string{"sh", "-c", "cp -r " + dirCopyTree + "/src " + dirCopyTree + "/dst && sync -f " + dirCopyTree + "/dst"},
		requires: []string{"cp", "sync"},
		maxRatio: 1.5,
	},
	{
		name:  "stat",
		needs: []string{fileSmall},
		fsbox: []string{"stat", fileSmall},
		rival: []string{"stat", fileSmall},

		maxRatio: 2,
	},
	{
		name:  "read-1MiB",
		needs: []string{fileText},
		fsbox: []string{"read", "--format", "text", fileText},
		rival: []string{"cat", fileText},

		maxRatio: 2, same: true,
	},
	{
		// --format text so the ten lines can be checked against tail's;
		// encoding ten lines as JSON instead costs microseconds.
		name:     "read-page-5M",
		needs:    []string{fileLog},
		fsbox:    []string{"read", "--offset", strconv.Itoa(pageOffset), "--limit", "10", "--format", "text", fileLog},
		rival:    []string{"sh", "-c", fmt.Sprintf("tail -n +%d %s | head -n 10", pageOffset+1, fileLog)},
		requires: []string{"tail", "head"},

		maxRSSKiB: 32 << 10, same: true,
		bytes: lineOffset(fileLog, pageOffset),
	},
	{
		name: "wc-1GiB", needs: []string{fileLog},
		fsbox: []string{"wc", fileLog}, rival: []string{"wc", "-l", "-w", "-c", fileLog},
		maxRatio: 1, maxRSSKiB: 32 << 10,
	},
	{
		name: "slice-window-5M", needs: []string{fileLog},
		fsbox:    []string{"slice", fileLog, strconv.Itoa(pageOffset), strconv.Itoa(pageOffset + 10), "--format", "text"},
		rival:    []string{"sh", "-c", fmt.Sprintf("tail -n +%d %s | head -n 10", pageOffset+1, fileLog)},
		requires: []string{"tail", "head"}, maxRatio: 1, maxRSSKiB: 32 << 10, same: true,
	},
	{
		// The tail of a pipe (issue 28): ten lines of memory, as tail's.
		name: "slice-last-10-pipe", needs: []string{fileLog}, stdin: fileLog, pipe: true,
		fsbox: []string{"slice", "-", "-10", "--format", "text"}, rival: []string{"tail", "-n", "10"},
		maxRatio: 1.1, maxRSSKiB: 32 << 10, same: true,
	},
	{
		// A literal in one 50 MiB line (issue 28): no line is skipped.
		name: "grep-line-50MiB", needs: []string{fileLine50},
		fsbox: []string{"grep", "-c", lineNeedle, fileLine50, "--format", "text"}, rival: []string{"rg", "-c", lineNeedle, fileLine50},
		maxRatio: 1.2, maxRSSKiB: 64 << 10, same: true,
	},
	{
		name: "slice-last-10", needs: []string{fileLog},
		fsbox: []string{"slice", fileLog, "-10", "--format", "text"}, rival: []string{"tail", "-n", "10", fileLog},
		same: true, maxRSSKiB: 32 << 10,
	},
	{
		name: "sort-100MB", needs: []string{fileWords}, policy: bigLimits,
		fsbox: []string{"sort", fileWords, "--format", "text"}, rival: []string{"sort", fileWords}, env: []string{"LC_ALL=C"},
		maxRatio: 1, same: true,
	},
	{
		// The random letters above are nearly all distinct and share few
		// prefixes; these words (14.4 M lines, 4.6 M distinct) repeat
		// and share prefixes, as text does: the data, where the
		// compact path's comparisons made sort 4× slower than GNU's. Run
		// as the issue did, under the built-in default policy; its targets.
		name: "sort-syllables-100MiB", needs: []string{fileSyllables},
		fsbox: []string{"sort", fileSyllables, "--format", "text"}, rival: []string{"sort", fileSyllables}, env: []string{"LC_ALL=C"},
		maxRatio: 1.1, maxRSSKiB: holdCap(100 << 20), same: true,
	},
	{
		name: "sort-n", needs: []string{fileNums}, policy: bigLimits,
		fsbox: []string{"sort", "-n", fileNums, "--format", "text"}, rival: []string{"sort", "-n", fileNums}, env: []string{"LC_ALL=C"},
		maxRatio: 1, same: true,
	},
	{
		name: "cut-f1,3-200MB", needs: []string{fileTSV}, policy: bigLimits,
		fsbox: []string{"cut", fileTSV, "-f", "1,3", "--format", "text"}, rival: []string{"cut", "-f1,3", fileTSV},
		maxRatio: 1, maxRSSKiB: 32 << 10, same: true,
	},
	// Filters on standard input (the data file is their stdin; no path).
	{
		name: "grep-stdin-1GiB", needs: []string{fileLog}, okExit: []int{1}, stdin: fileLog,
		fsbox: []string{"grep", "-c", "ZZTOP_NEEDLE"}, rival: []string{"rg", "-c", "ZZTOP_NEEDLE"},
		maxRatio: 1.2, maxRSSKiB: 32 << 10,
	},
	{
		name: "wc-stdin-1GiB", needs: []string{fileLog}, stdin: fileLog,
		fsbox: []string{"wc"}, rival: []string{"wc", "-l", "-w", "-c"},
		maxRatio: 1, maxRSSKiB: 32 << 10,
	},
	{
		name: "cut-stdin-200MB", needs: []string{fileTSV}, policy: bigLimits, stdin: fileTSV,
		fsbox: []string{"cut", "-f", "1,3", "--format", "text"}, rival: []string{"cut", "-f1,3"},
		maxRatio: 1, maxRSSKiB: 32 << 10, same: true,
	},
	{
		name: "sort-stdin-100MB", needs: []string{fileWords}, policy: bigLimits, stdin: fileWords,
		fsbox: []string{"sort", "--format", "text"}, rival: []string{"sort"}, env: []string{"LC_ALL=C"},
		maxRatio: 1, same: true,
	},
	{
		name: "grep-tree-literal-rg", needs: []string{dirTree}, policy: bigLimits, okExit: []int{1},
		fsbox: []string{"grep", "-n", "func main", dirTree, "--no-ignore", "--hidden", "--format", "text"},
		rival: []string{"rg", "-n", "-uuu", "func main", dirTree}, maxRatio: 1,
	},
	{
		name: "grep-tree-literal-grep", needs: []string{dirTree}, policy: bigLimits, okExit: []int{1},
		fsbox: []string{"grep", "-n", "func main", dirTree, "--no-ignore", "--hidden", "--format", "text"},
		rival: []string{"grep", "-rn", "func main", dirTree}, maxRatio: 1,
	},
	{
		name: "grep-tree-regex-rg", needs: []string{dirTree}, policy: bigLimits, okExit: []int{1},
		fsbox: []string{"grep", "-n", `fmt\.Errorf\("[a-z]+`, dirTree, "--no-ignore", "--hidden", "--format", "text"},
		rival: []string{"rg", "-n", "-uuu", `fmt\.Errorf\("[a-z]+`, dirTree}, maxRatio: 1,
	},
	{
		name: "grep-tree-i-rg", needs: []string{dirTree}, policy: bigLimits, okExit: []int{1},
		fsbox: []string{"grep", "-n", "-i", "func main", dirTree, "--no-ignore", "--hidden", "--format", "text"},
		rival: []string{"rg", "-n", "-i", "-uuu", "func main", dirTree}, maxRatio: 1,
	},
	{
		name: "grep-log-rare-literal", needs: []string{fileLog}, okExit: []int{1},
		fsbox: []string{"grep", "-c", "ZZTOP_NEEDLE", fileLog}, rival: []string{"rg", "-c", "ZZTOP_NEEDLE", fileLog},
		maxRatio: 1, maxRSSKiB: 32 << 10,
	},
	{
		// Page-cache read throughput: the same search against dd reading
		// the file in 1 MiB blocks (and doing nothing with them); issue 18
		// asks for "close to" dd: within 10 %.
		name: "grep-log-vs-dd", needs: []string{fileLog}, okExit: []int{1},
		fsbox: []string{"grep", "-c", "ZZTOP_NEEDLE", fileLog}, rival: []string{"dd", "if=" + fileLog, "of=/dev/null", "bs=1M", "status=none"},
		maxRatio: 1.1, maxRSSKiB: 32 << 10,
	},
	{
		name: "grep-log-regex", needs: []string{fileLog}, policy: bigLimits, okExit: []int{1},
		fsbox: []string{"grep", "-c", "latency_ms=[0-9]{3}", fileLog}, rival: []string{"rg", "-c", "latency_ms=[0-9]{3}", fileLog},
		maxRatio: 1.2, maxRSSKiB: 32 << 10,
	},
	{
		name: "grep-log-i-literal", needs: []string{fileLog}, okExit: []int{1},
		fsbox: []string{"grep", "-c", "-i", "zztop_needle", fileLog}, rival: []string{"rg", "-c", "-i", "zztop_needle", fileLog},
		maxRatio: 1,
	},
	{
		name: "find-all", needs: []string{dirTree}, policy: bigLimits,
		fsbox: []string{"find", dirTree, "--no-ignore", "--hidden", "--format", "text"}, rival: []string{"find", dirTree},
		maxRatio: 1,
	},
	{
		name: "find-go-glob", needs: []string{dirTree}, policy: bigLimits,
		fsbox: []string{"find", dirTree, "**/*.go", "--no-ignore", "--hidden", "--format", "text"},
		rival: []string{"find", dirTree, "-name", "*.go"}, maxRatio: 1,
	},
	{
		name: "find-all-fd", needs: []string{dirTree}, policy: bigLimits,
		fsbox: []string{"find", dirTree, "--no-ignore", "--hidden", "--format", "text"}, rival: []string{"fd|fdfind", "-uu", ".", dirTree},
		maxRatio: 1,
	},
	{
		name: "write-100MiB-stdin", needs: []string{fileBlob}, policy: bigLimits, stdin: fileBlob,
		fsbox: []string{"write", "out-fsbox.bin"}, rival: []string{"dd", "of=out-dd.bin", "bs=1M", "conv=fsync", "status=none"},
		maxRatio: 1.5,
	},
	{
		name: "edit-one-line-50MB", needs: []string{fileEdit, fileSed}, policy: bigLimits,
		fsbox: []string{"edit", fileEdit, "--old", "MARKER_LINE", "--new", "MARKER_LINE"},
		rival: []string{"sed", "-i", "s/MARKER_LINE/MARKER_LINE/", fileSed}, maxRatio: 1.5,
	},

	// Hostile sizes (issue 12). No tool does what fsbox does here (a deny
	// policy, the edit hint, a JSON cut at max_line_bytes), and a stand-in
	// such as cat of the same file would time the page cache, not a rival:
	// so these rows have none, and fsbox is held to its own wall time
	// (maxSeconds: well under a second, unless said otherwise) and peak RSS
	// (64 MiB where it holds little; holdCap of what it must hold where it
	// holds the file). Each ran for seconds to minutes, or took gigabytes,
	// before the fixes of issue 12.
	{
		name: "hostile-deep-find", needs: []string{dirDeep}, policy: denyRules,
		fsbox:      []string{"find", dirDeep},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		name: "hostile-deep-grep", needs: []string{dirDeep}, policy: denyRules,
		fsbox:      []string{"grep", "x", dirDeep},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		name: "hostile-ignore-find", needs: []string{dirIgnore},
		fsbox:      []string{"find", dirIgnore},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		name: "hostile-ignore-grep", needs: []string{dirIgnore},
		fsbox:      []string{"grep", "x", dirIgnore},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		// text_not_found (exit 5), with the closest lines as a hint.
		name: "hostile-edit-hint-200k", needs: []string{fileHint200k}, okExit: []int{5},
		fsbox:      []string{"edit", fileHint200k, "--old", hintOld, "--new", "y"},
		maxSeconds: 1, maxRSSKiB: holdCap(3 << 20), // the file is 2.6 MiB
	},
	{
		name: "hostile-edit-hint-400k", needs: []string{fileHint400k}, okExit: []int{5},
		fsbox:      []string{"edit", fileHint400k, "--old", hintOld, "--new", "y"},
		maxSeconds: 1, maxRSSKiB: holdCap(6 << 20), // the file is 5.2 MiB
	},
	{
		// A million replacements, all on one line.
		name: "hostile-edit-all-1MiB", needs: []string{fileA1MiB},
		fsbox:      []string{"edit", fileA1MiB, "--old", "a", "--new", "bb", "--all", "--dry-run"},
		maxSeconds: 1, maxRSSKiB: holdCap(1<<20 + 2<<20),
	},
	{
		// 16 times the row above: its diff alone is a 16 MiB '-' line and a
		// 32 MiB '+' line, some 50 MB of JSON to write, so it gets a few
		// seconds rather than one.
		name: "hostile-edit-all-16MiB", needs: []string{fileA16MiB}, policy: bigWrite,
		fsbox:      []string{"edit", fileA16MiB, "--old", "a", "--new", "bb", "--all", "--dry-run"},
		maxSeconds: 3, maxRSSKiB: holdCap(16<<20 + 32<<20),
	},
	{
		// --dry-run: a real edit would change the file under the next run;
		// the dry run does all the work but the atomic write, which
		// edit-one-line-50MB times.
		name: "hostile-edit-3000", needs: []string{fileMarks},
		fsbox:      []string{"edit", fileMarks, "--edits-json", marksJSON, "--dry-run"},
		maxSeconds: 1, maxRSSKiB: holdCap(4<<20 + 4<<20),
	},
	{
		// The same with "all" (issue 39): 3,000 edits, each byte of the
		// file ending 9 of their occurrences, refused with too_large when
		// the matches pass their budget. It held 34M of them, 1 GiB,
		// before.
		name: "hostile-edit-3000-all", needs: []string{filePeriod}, okExit: []int{6},
		fsbox:      []string{"edit", filePeriod, "--edits-json", periodJSON, "--dry-run"},
		maxSeconds: 1, maxRSSKiB: holdCap(4<<20 + 4<<20),
	},
	{
		// Under the built-in default policy, which since issue 28 prints
		// all 16 Mi lines as JSON strings (about 2.7 s on a busy 2-core
		// machine, the encoding most of it; it used to stop at 10,000).
		// The memory target, 4× the input + 32 MiB.
		name: "hostile-sort-n-empty", needs: []string{fileEmpty},
		fsbox:      []string{"sort", "-n", fileEmpty},
		maxSeconds: 4, maxRSSKiB: holdCap(16 << 20),
	},
	{
		// The same sort in the text form, against GNU sort -n (which
		// takes 7 s and 1 GiB here).
		name: "sort-n-empty-text", needs: []string{fileEmpty},
		fsbox: []string{"sort", "-n", fileEmpty, "--format", "text"}, rival: []string{"sort", "-n", fileEmpty}, env: []string{"LC_ALL=C"},
		maxRatio: 1, maxRSSKiB: holdCap(16 << 20), same: true,
	},
	{
		// A line too long to hold: read past in pieces, never held or
		// mapped whole; the needle on the next line is found.
		name: "hostile-longline-grep", needs: []string{fileLongLine},
		fsbox:      []string{"grep", "needle", fileLongLine},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		// too_large (exit 6) once the line passes the 16 MiB fsbox holds,
		// so it may hold that much: holdCap(16 MiB).
		name: "hostile-longline-cut", needs: []string{fileLongLine}, okExit: []int{6},
		fsbox:      []string{"cut", "-f1", fileLongLine},
		maxSeconds: 1, maxRSSKiB: holdCap(16 << 20),
	},
	{
		// JSON: the line cut at max_line_bytes (text_truncated).
		name: "hostile-longline-slice", needs: []string{fileLongLine},
		fsbox:      []string{"slice", fileLongLine},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
	{
		// Binary (a NUL byte) at once: no match, exit 1.
		name: "hostile-sparse-grep", needs: []string{fileSparse}, okExit: []int{1},
		fsbox:      []string{"grep", "x", fileSparse},
		maxSeconds: 1, maxRSSKiB: 64 << 10,
	},
}

// holdCap is the peak RSS target, in KiB, of a command that must hold n
// bytes: 4n + 32 MiB (the target issue 12 sets for sort).
func holdCap(n int64) int64 { return (4*n + 32<<20) >> 10 }

// marksJSON is hostile-edit-3000's --edits-json: each marker line @NNNN of
// fileMarks becomes #NNNN, every edit matching once. edit has no file form
// of --edits-json, so it is one command-line argument, and Linux caps one
// argument at 128 KiB (MAX_ARG_STRLEN) whatever ARG_MAX says: this is
// 90,001 bytes.
var marksJSON = func() string {
	b := []byte{'['}
	for i := range markEdits {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"old":"@%04d","new":"#%04d"}`, i, i)
	}
	return string(append(b, ']'))
}()

// periodText is the period of filePeriod: 333 random lowercase letters.
var periodText = func() string {
	r := &rng{s: 0x5eed39}
	b := make([]byte, 333)
	for i := range b {
		b[i] = 'a' + byte(r.intn(26))
	}
	return string(b)
}()

// periodJSON is hostile-edit-3000-all's --edits-json: every substring of
// periodText of 4 to 12 bytes, at each of its offsets (2,997 edits, then
// three that match nothing), each with "all" and new text "yy". 122,989
// bytes, under MAX_ARG_STRLEN as marksJSON is.
var periodJSON = func() string {
	twice := periodText + periodText
	b := []byte{'['}
	add := func(old string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"old":%q,"new":"yy","all":true}`, old)
	}
	for n := 4; n <= 12; n++ {
		for o := range periodText {
			add(twice[o : o+n])
		}
	}
	for i := range 3 {
		add(fmt.Sprintf("zzzz%d", i+1))
	}
	return string(append(b, ']'))
}()

// ---------------------------------------------------------------------------

type config struct {
	fsbox   string
	data    string
	only    *regexp.Regexp
	quick   bool
	json    bool
	budget  time.Duration // per side
	guard   guard         // per run
	minRuns int
	maxRuns int
	// shell: every row is measured a second time the way users start
	// commands, forked by sh -c with its stdout piped to a reader.
	shell bool
	// baseline: an earlier fsbox build timed beside fsbox in every row
	// that runs fsbox (absolute once run has checked it); "" for none.
	baseline string
	// baselineOnly: with baseline, run no rivals.
	baselineOnly bool
	// s3raw: the s3 rows' rival binary; "" to build it (s3.go).
	s3raw string
}

func main() {
	closeInherited()
	var cfg config
	var only, kernel string
	flag.StringVar(&cfg.fsbox, "fsbox", "bin/fsbox", "the fsbox binary to time")
	flag.StringVar(&cfg.data, "data", filepath.Join(os.TempDir(), "fsbox-bench"), "directory for the generated data (about 1 GiB)")
	flag.StringVar(&kernel, "kernel", "", "an extracted Linux kernel source tree: adds the grep-kernel-* rows, ripgrep's kernel pattern set against rg (none without it)")
	flag.StringVar(&only, "only", "", "run only the comparisons whose name matches this regular expression")
	flag.BoolVar(&cfg.quick, "quick", false, "fewer runs: a quick look, not figures to quote")
	flag.BoolVar(&cfg.json, "json", false, "print the results as JSON on stdout (the table goes to stderr)")
	flag.BoolVar(&cfg.shell, "shell", false, "also measure every row under sh -c with a pipe reader (CMD | cat >/dev/null), as users and exec tools start it; those rows are named NAME·sh")
	flag.DurationVar(&cfg.budget, "budget", 0, "time each side gets (default 1.5s, 0.3s with -quick)")
	flag.IntVar(&cfg.minRuns, "min-runs", 0, "runs each side gets at least (default 9, 3 with -quick)")
	flag.DurationVar(&cfg.guard.timeout, "timeout", 60*time.Second, "kill a run (and its process group) that takes longer; 0 for no limit")
	maxRSS := flag.Int64("max-rss", procStatusKiB("/proc/meminfo", "MemTotal:")>>11, "kill a run whose RSS passes this many MiB (default: half the memory); 0 for no limit")
	flag.StringVar(&cfg.baseline, "baseline", "", "also time every row that runs fsbox with this binary (an earlier build, its fsbox-mcp, or an older build's fsbox-full, beside it) in place of -fsbox, interleaved run for run, and report current/baseline with a REGRESSION verdict past max(5 %, 0.2 ms)")
	flag.BoolVar(&cfg.baselineOnly, "baseline-only", false, "with -baseline, run no rivals (rg, GNU tools, the MCP peer): fsbox and the baseline only (default true when -baseline is given)")
	flag.StringVar(&cfg.s3raw, "s3raw", "", "the s3-* rows' rival, a build of internal/bench/s3raw (default: built into DATA.s3raw)")
	list := flag.Bool("list", false, "list the comparisons and exit")
	flag.Parse()
	baselineOnlySet := false
	flag.Visit(func(f *flag.Flag) { baselineOnlySet = baselineOnlySet || f.Name == "baseline-only" })
	if !baselineOnlySet {
		cfg.baselineOnly = cfg.baseline != ""
	}
	if cfg.baseline == "" {
		cfg.baselineOnly = false
	}
	cfg.guard.rssKiB = *maxRSS << 10
	if flag.NArg() > 0 {
		fatalf(2, "unexpected argument %q", flag.Arg(0))
	}
	if *list {
		for _, c := range comparisons {
			fmt.Printf("%-16s fsbox %s\n%-16s vs %s\n", c.name, showArgv(c.fsbox), "", rivalText(c.rival))
		}
		for _, n := range mcpRowNames {
			fsboxCmd, peer := mcpListing(n)
			fmt.Printf("%-16s %s\n%-16s vs %s\n", n, fsboxCmd, "", peer)
		}
		for _, n := range s3Names() {
			fmt.Printf("%-16s fsbox on s3://%s/%s (versitygw) vs the raw SDK (s3.go)\n", n, s3Bucket, s3Tenant)
		}
		for _, n := range pagesRowNames {
			fmt.Printf("%-16s fsbox grep -n %s %s, paged by max_result_bytes = %d (pages.go)\n", n, pagesNeedle, dirPages, pagesBudget)
		}
		return
	}
	if kernel != "" {
		d, err := kernelDir(kernel)
		if err != nil {
			fatalf(2, "%v", err)
		}
		comparisons = append(comparisons, kernelRows(d)...)
	}
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			fatalf(2, "-only: %v", err)
		}
		cfg.only = re
	}
	if cfg.budget <= 0 {
		cfg.budget = 1500 * time.Millisecond
		if cfg.quick {
			cfg.budget = 300 * time.Millisecond
		}
	}
	if cfg.minRuns <= 0 {
		cfg.minRuns = 9
		if cfg.quick {
			cfg.minRuns = 3
		}
	}
	cfg.maxRuns = 5000
	if cfg.quick {
		cfg.maxRuns = 500
	}
	os.Exit(run(cfg))
}

func fatalf(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(code)
}

// progress goes to stderr, so stdout holds only the table or the JSON.
func progress(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func run(cfg config) int {
	fsbox, err := filepath.Abs(cfg.fsbox)
	if err != nil {
		fatalf(2, "%v", err)
	}
	if fi, err := os.Stat(fsbox); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		fatalf(2, "-fsbox %s: not an executable file (build it first: make build)", cfg.fsbox)
	}
	if cfg.baseline != "" {
		b, err := filepath.Abs(cfg.baseline)
		if err != nil {
			fatalf(2, "%v", err)
		}
		if fi, err := os.Stat(b); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			fatalf(2, "-baseline %s: not an executable file", cfg.baseline)
		}
		if b == fsbox {
			progress("-baseline is -fsbox itself: the rows time the same binary twice (a check of the harness's noise)")
		}
		if companionBeside(b) == "" {
			progress("-baseline %s has neither fsbox-mcp nor (an older build's) fsbox-full beside it: its MCP runs (and an older build's --jq) will fail", cfg.baseline)
		}
		cfg.baseline = b
	}
	dir, err := filepath.Abs(cfg.data)
	if err != nil {
		fatalf(2, "%v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf(2, "-data: %v", err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		fatalf(2, "-data: %v", err)
	}

	// The s3 rows (s3.go): a server started and seeded now.
	var s3e *s3Env
	var s3Skipped string
	if s3Wanted(cfg) {
		var err error
		if s3e, s3Skipped, err = s3Setup(cfg, dir); err != nil {
			fatalf(2, "s3 rows: %v", err)
		}
		if s3e != nil {
			defer s3e.stop()
			comparisons = append(comparisons, s3Rows(s3e)...)
		}
	}
	var s3MCP []string
	if s3e != nil {
		s3MCP = s3MCPSelected(cfg)
	}

	var selected []comparison
	need := map[string]bool{}
	for _, c := range comparisons {
		if cfg.only != nil && !cfg.only.MatchString(c.name) {
			continue
		}
		selected = append(selected, c)
		for _, n := range c.needs {
			need[n] = true
		}
		if cfg.baseline != "" && c.rival != nil && c.rivalPolicy != (policy{}) {
			// The rival is fsbox under another policy: a twin row times
			// that policy against the baseline too.
			v := c
			v.name = c.name + "[" + c.rivalPolicy.name + "]"
			v.policy, v.fsbox = c.rivalPolicy, c.rival[1:]
			v.rival, v.rivalPolicy, v.maxRatio = nil, policy{}, 0
			selected = append(selected, v)
		}
	}
	if cfg.shell {
		// Each row again, both sides forked by sh -c with a pipe reader,
		// right after its direct run (the same load for both).
		var both []comparison
		for _, c := range selected {
			sh := c
			sh.name, sh.viaShell, sh.maxRSSKiB, sh.same = c.name+"·sh", true, 0, false
			both = append(both, c, sh)
		}
		selected = both
	}
	mcpRows := mcpSelected(cfg)
	if len(mcpRows) > 0 {
		need[dirMCP] = true
	}
	pagesRows := pagesSelected(cfg)
	if len(pagesRows) > 0 {
		need[dirPages] = true
	}
	if len(selected) == 0 && len(mcpRows) == 0 && len(pagesRows) == 0 && len(s3MCP) == 0 && s3Skipped == "" {
		fatalf(2, "-only %q matches no comparison (see -list)", cfg.only)
	}
	// The default policy's journal (the write and edit rows) lives beside
	// the data, outside it (a journal inside the workdir is off), never in
	// the state directory of whoever runs the bench.
	fsboxEnv := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, ".no-xdg-config"), "XDG_STATE_HOME=" + dir + ".state"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FSBOX_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			fsboxEnv = append(fsboxEnv, kv)
		}
	}
	// fsbox makes the prepared journals and the undo row's changes.
	fsboxTool.path, fsboxTool.env = fsbox, fsboxEnv
	man, err := prepare(dir, need)
	if err != nil {
		fatalf(2, "generating data: %v", err)
	}

	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fatalf(2, "%v", err)
	}
	defer devnull.Close()

	rssRuns := 3
	if cfg.quick {
		rssRuns = 1
	}
	rss := newRSSMeter(rssRuns)
	defer rss.close()
	if rss.time == "" {
		progress("GNU time (/usr/bin/time) is not installed: peak RSS is the timed runs' ru_maxrss, which includes the driver's own peak (an upper bound)")
	}

	rep := report{
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Fsbox: fsbox, Data: dir, Quick: cfg.quick, BudgetMs: ms(cfg.budget), MinRuns: cfg.minRuns, TimeoutMs: ms(cfg.guard.timeout), MaxRSSKiB: cfg.guard.rssKiB,
		Files: man.Files, LoadStart: loadavg(), RSSMethod: "GNU time %M (ru_maxrss of a fork()ed child), max of 3 runs",
		FsboxVersion: version(fsbox),
	}
	if cfg.baseline != "" {
		rep.Baseline, rep.BaselineVersion, rep.BaselineOnly = cfg.baseline, version(cfg.baseline), cfg.baselineOnly
	}
	if cfg.quick {
		rep.RSSMethod = "GNU time %M (ru_maxrss of a fork()ed child), 1 run"
	}
	if rss.time == "" {
		rep.RSSMethod = "ru_maxrss of the timed runs (an upper bound: it includes the driver's own peak)"
	}
	// baseFailed: the direct rows whose command the baseline could not
	// run. Their ·sh twins leave it out: sh -c 'CMD | cat' exits with
	// cat's status, so a failing baseline would look like a quick one.
	baseFailed := map[string]string{}
	for _, c := range selected {
		progress("== %s", c.name)
		ccfg := cfg
		direct := strings.TrimSuffix(c.name, "·sh")
		if c.viaShell && baseFailed[direct] != "" {
			ccfg.baseline = ""
		}
		r := measure(ccfg, c, dir, fsbox, fsboxEnv, devnull, rss)
		switch {
		case c.viaShell && baseFailed[direct] != "":
			r.BaselineError = "baseline: not run (it failed in " + direct + ")"
		case !c.viaShell && r.BaselineError != "":
			baseFailed[c.name] = r.BaselineError
		}
		if r.Skipped != "" {
			progress("   %s", r.Skipped)
		}
		if r.Error != "" {
			progress("   error: %s", r.Error)
		}
		rep.Results = append(rep.Results, r)
	}
	if len(pagesRows) > 0 {
		for _, r := range benchPages(cfg, dir, fsbox, fsboxEnv, devnull, rss, pagesRows) {
			if r.Error != "" {
				progress("   %s: error: %s", r.Name, r.Error)
			}
			rep.Results = append(rep.Results, r)
		}
	}
	if len(mcpRows) > 0 {
		for _, r := range benchMCP(cfg, dir, fsbox, fsboxEnv, mcpRows) {
			if r.Skipped != "" {
				progress("   %s: %s", r.Name, r.Skipped)
			}
			if r.Error != "" {
				progress("   %s: error: %s", r.Name, r.Error)
			}
			rep.Results = append(rep.Results, r)
		}
	}

	if len(s3MCP) > 0 {
		for _, r := range benchS3MCP(cfg, dir, fsbox, fsboxEnv, s3e, s3MCP) {
			if r.Error != "" {
				progress("   %s: error: %s", r.Name, r.Error)
			}
			rep.Results = append(rep.Results, r)
		}
	}
	if s3Skipped != "" {
		progress("%s", s3Skipped)
		for _, n := range s3Names() {
			if cfg.only == nil || cfg.only.MatchString(n) {
				rep.Results = append(rep.Results, result{Name: n, Skipped: s3Skipped})
			}
		}
	}

	rep.LoadEnd = loadavg()

	tableOut := io.Writer(os.Stdout)
	if cfg.json {
		tableOut = os.Stderr
	}
	if rep.Baseline == "" || !rep.BaselineOnly {
		printTable(tableOut, rep)
	}
	if rep.Baseline != "" {
		printBaselineTable(tableOut, rep)
	}
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fatalf(2, "%v", err)
		}
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			return 1
		}
	}
	return 0
}

// ---------------------------------------------------------------------------
// Running and timing.

type proc struct {
	path  string   // absolute
	argv  []string // argv[0] as the program sees it
	dir   string
	env   []string
	stdin string                 // file fed on stdin, relative to dir ("" for none)
	pipe  bool                   // stdin is a pipe the file is copied into
	setup func(dir string) error // the row's setup, run before each run (untimed)
}

// underShell is p run the way a shell pipeline runs it: sh -c forks it
// with its stdout piped to cat, which writes to /dev/null.
func (p proc) underShell() proc {
	words := []string{shQuote(p.path)}
	for _, a := range p.argv[1:] {
		words = append(words, shQuote(a))
	}
	q := p
	q.path = "/bin/sh"
	q.argv = []string{"sh", "-c", strings.Join(words, " ") + " | cat >/dev/null"}
	return q
}

// shQuote quotes a word for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type sample struct {
	wall   time.Duration
	rssKiB int64
	killed string // "" or why the guard killed the run: "time" or "RSS"
}

// guard bounds each run: past timeout, or once its resident set passes
// rssKiB, it is killed with its process group. 0 is no bound.
type guard struct {
	timeout time.Duration
	rssKiB  int64
}

// errKilled is run's error for a process the guard killed; the sample
// says why.
var errKilled = errors.New("killed")

// run runs p once with the given stdout and stderr and waits for it, but
// only as long as g allows: then it kills p's process group (p leads one
// of its own, so an sh -c pipeline dies whole) and returns errKilled with
// the sample.
func (p proc) run(stdout, stderr io.Writer, okExit []int, g guard) (sample, error) {
	if p.setup != nil {
		if err := p.setup(p.dir); err != nil {
			return sample{}, fmt.Errorf("setup: %v", err)
		}
	}
	cmd := &exec.Cmd{Path: p.path, Args: p.argv, Dir: p.dir, Env: p.env, Stdout: stdout, Stderr: stderr}
	if p.stdin != "" {
		f, err := os.Open(filepath.Join(p.dir, p.stdin))
		if err != nil {
			return sample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
		if p.pipe {
			cmd.Stdin = struct{ io.Reader }{f} // not an *os.File: exec makes a pipe
		}
	}
	s, err := g.run(cmd)
	if s.killed != "" {
		return s, errKilled
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && slices.Contains(okExit, ee.ExitCode()) {
		err = nil
	}
	return s, err
}

// run runs cmd in a process group of its own and kills the group when cmd
// outlives g.timeout or its leader's resident set (VmRSS, polled every
// 100ms after the first, on systems with /proc) passes g.rssKiB.
func (g guard) run(cmd *exec.Cmd) (s sample, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	done := make(chan struct{})
	why := make(chan string, 1)
	go func() {
		var deadline <-chan time.Time
		if g.timeout > 0 {
			t := time.NewTimer(g.timeout)
			defer t.Stop()
			deadline = t.C
		}
		var poll <-chan time.Time
		if g.rssKiB > 0 {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			poll = t.C
		}
		for {
			select {
			case <-done:
				why <- ""
				return
			case <-deadline:
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				why <- "time"
				return
			case <-poll:
				if vmRSSKiB(cmd.Process.Pid) > g.rssKiB {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					why <- "RSS"
					return
				}
			}
		}
	}()
	err = cmd.Wait()
	s.wall = time.Since(t0)
	close(done)
	s.killed = <-why
	if cmd.ProcessState != nil {
		s.rssKiB = maxRSSKiB(cmd.ProcessState)
	}
	return s, err
}

// vmRSSKiB is a running process's resident set in KiB, 0 if unknown.
func vmRSSKiB(pid int) int64 {
	return procStatusKiB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
}

// procStatusKiB reads one "Key:   N kB" line of a /proc status file.
func procStatusKiB(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// maxRSSKiB is ru_maxrss of a finished child: KiB on Linux and the BSDs,
// bytes on macOS.
func maxRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}

// Peak RSS. The ru_maxrss of a child the driver starts itself is not the
// child's own: Go starts children with clone(CLONE_VM|CLONE_VFORK), and at
// execve Linux folds the high-water mark of the address space being left
// -- the driver's -- into the new program's ru_maxrss. So the peak is
// taken from extra runs under GNU time, whose fork()ed child starts from
// time's own small image: time's %M is then the command's own ru_maxrss
// (for sh -c, the largest of sh and the children it waited for). Without
// GNU time, the rusage of the timed runs is reported, and it is exact only
// when it is above the driver's own high-water mark.
type rssMeter struct {
	time string // GNU time, or "" when there is none
	out  string // its -o file
	runs int
}

func newRSSMeter(runs int) *rssMeter {
	m := &rssMeter{runs: runs}
	bin, err := exec.LookPath("time")
	if err != nil {
		return m
	}
	f, err := os.CreateTemp("", "fsbox-bench-rss-*")
	if err != nil {
		return m
	}
	f.Close()
	m.out = f.Name()
	t, _ := exec.LookPath("true")
	if t == "" {
		return m
	}
	// busybox and BSD time have no -f/-o: only GNU time passes this.
	if err := exec.Command(bin, "-f", "%M", "-o", m.out, t).Run(); err == nil {
		if _, err := m.read(); err == nil {
			m.time = bin
		}
	}
	return m
}

func (m *rssMeter) close() {
	if m.out != "" {
		os.Remove(m.out)
	}
}

// read parses time's -o file: the last line is %M (a line before it may
// say the command exited with a non-zero status).
func (m *rssMeter) read() (int64, error) {
	b, err := os.ReadFile(m.out)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
}

// peak runs p runs times under GNU time and returns its largest ru_maxrss.
// A run the guard kills ends the series: the runs before it count.
func (m *rssMeter) peak(p proc, devnull *os.File, okExit []int, runs int, g guard) (int64, error) {
	var top int64
	for range runs {
		if p.setup != nil {
			if err := p.setup(p.dir); err != nil {
				return 0, fmt.Errorf("setup: %v", err)
			}
		}
		argv := append([]string{"time", "-f", "%M", "-o", m.out, p.path}, p.argv[1:]...)
		cmd := &exec.Cmd{Path: m.time, Args: argv, Dir: p.dir, Env: p.env, Stdout: devnull, Stderr: devnull}
		if p.stdin != "" { // as the timed runs get it (write reads no terminal and no /dev/null)
			f, err := os.Open(filepath.Join(p.dir, p.stdin))
			if err != nil {
				return 0, err
			}
			cmd.Stdin = f
			if p.pipe {
				cmd.Stdin = struct{ io.Reader }{f}
			}
			defer f.Close()
		}
		s, err := g.run(cmd)
		if s.killed != "" {
			if top > 0 {
				break
			}
			return 0, fmt.Errorf("time %s: %w", showArgv(p.argv), errKilled)
		}
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && slices.Contains(okExit, ee.ExitCode())) {
			return 0, fmt.Errorf("time %s: %v", showArgv(p.argv), err)
		}
		k, err := m.read()
		if err != nil {
			return 0, fmt.Errorf("time %s: %v", showArgv(p.argv), err)
		}
		top = max(top, k)
	}
	return top, nil
}

// ownHWM is the driver's own high-water mark (VmHWM) in KiB, 0 if unknown.
func ownHWM() int64 { return procStatusKiB("/proc/self/status", "VmHWM:") }

// warmup runs p once, capturing its output, and fails on a bad exit; its
// error wraps errKilled, with the sample, when the guard killed p.
func (p proc) warmup(okExit []int, g guard) ([]byte, sample, error) {
	var out, errb bytes.Buffer
	s, err := p.run(&out, &errb, okExit, g)
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return nil, s, fmt.Errorf("%s: %w: %s", showArgv(p.argv), err, msg)
	}
	return out.Bytes(), s, nil
}

type stats struct {
	Runs         int     `json:"runs"`
	MedianMs     float64 `json:"median_ms"`
	MinMs        float64 `json:"min_ms"`
	P25Ms        float64 `json:"p25_ms"`
	P75Ms        float64 `json:"p75_ms"`
	P90Ms        float64 `json:"p90_ms,omitempty"` // the MCP rows' per-call round trips
	MaxMs        float64 `json:"max_ms"`
	PerGiBMs     float64 `json:"ms_per_gib,omitempty"`
	PeakRSSKiB   int64   `json:"peak_rss_kib"`
	RSSExact     bool    `json:"rss_exact"`      // false: an upper bound (see rssMeter)
	DirectRSSKiB int64   `json:"direct_rss_kib"` // largest ru_maxrss of the timed runs
	// Killed says why the guard killed the run, "time" or "RSS" (runs is
	// 0, the times are how long it ran, the peak RSS its peak until then).
	Killed string `json:"killed,omitempty"`
}

func summarize(ss []sample) *stats {
	walls := make([]time.Duration, len(ss))
	var rss int64
	for i, s := range ss {
		walls[i] = s.wall
		rss = max(rss, s.rssKiB)
	}
	slices.Sort(walls)
	q := func(f float64) float64 { return ms(quantile(walls, f)) }
	return &stats{Runs: len(ss), MedianMs: q(0.5), MinMs: ms(walls[0]), P25Ms: q(0.25), P75Ms: q(0.75),
		MaxMs: ms(walls[len(walls)-1]), DirectRSSKiB: rss}
}

// quantile interpolates linearly between the sorted samples.
func quantile(sorted []time.Duration, f float64) time.Duration {
	pos := f * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + time.Duration(frac*float64(sorted[i+1]-sorted[i]))
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

type result struct {
	Name         string   `json:"name"`
	FsboxArgv    []string `json:"fsbox_argv"`
	RivalArgv    []string `json:"rival_argv"`        // null: no rival
	Skipped      string   `json:"skipped,omitempty"` // why the rival was not run
	Error        string   `json:"error,omitempty"`
	Fsbox        *stats   `json:"fsbox,omitempty"`
	Rival        *stats   `json:"rival,omitempty"`
	Ratio        float64  `json:"ratio,omitempty"` // median fsbox / median rival
	RatioTarget  float64  `json:"ratio_target,omitempty"`
	RatioPass    *bool    `json:"ratio_pass,omitempty"`
	TimeTargetMs float64  `json:"time_target_ms,omitempty"` // median fsbox < this
	TimePass     *bool    `json:"time_pass,omitempty"`
	RSSTargetKiB int64    `json:"rss_target_kib,omitempty"`
	RSSPass      *bool    `json:"rss_pass,omitempty"` // absent when an upper bound cannot tell
	Bytes        int64    `json:"bytes,omitempty"`    // bytes the command gets through
	SameOutput   *bool    `json:"same_output,omitempty"`
	Note         string   `json:"note,omitempty"` // what the MCP rows measure, their p90s

	// With -baseline: the same command run with the baseline binary.
	Baseline        *stats  `json:"baseline,omitempty"`
	BaselineRatio   float64 `json:"baseline_ratio,omitempty"`    // median fsbox / median baseline
	BaselineDeltaMs float64 `json:"baseline_delta_ms,omitempty"` // median fsbox - median baseline
	BaselineVerdict string  `json:"baseline_verdict,omitempty"`  // "REGRESSION", "faster", "ok" or "both killed" (see baselineVerdict)
	BaselineError   string  `json:"baseline_error,omitempty"`    // why the baseline could not run the command
	BaselineSame    *bool   `json:"baseline_same_output,omitempty"`
}

// rivalPath finds the rival's program and the programs it requires; ""
// and the missing name when one is absent.
func rivalPath(c comparison) (path, missing string) {
	for _, alt := range strings.Split(c.rival[0], "|") {
		if p, err := exec.LookPath(alt); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		return "", c.rival[0]
	}
	for _, r := range c.requires {
		if _, err := exec.LookPath(r); err != nil {
			return "", r
		}
	}
	return path, ""
}

func measure(cfg config, c comparison, dir, fsbox string, fsboxEnv []string, devnull *os.File, rss *rssMeter) result {
	res := result{Name: c.name, FsboxArgv: shortArgv(append([]string{"fsbox"}, c.fsbox...)), RivalArgv: c.rival,
		RatioTarget: c.maxRatio, TimeTargetMs: c.maxSeconds * 1000, RSSTargetKiB: c.maxRSSKiB}
	args := c.fsbox
	if c.policy != (policy{}) {
		args = append([]string{"--config", writePolicy(dir, c.policy)}, args...)
	}
	fpath := fsbox
	if c.bin != "" {
		fpath = filepath.Join(filepath.Dir(fsbox), c.bin)
		res.FsboxArgv[0] = c.bin
	}
	fp := proc{path: fpath, argv: append([]string{fpath}, args...), dir: dir, env: append(slices.Clone(fsboxEnv), c.env...), stdin: c.stdin, pipe: c.pipe, setup: c.setup}
	procs := []proc{fp}
	// bi and ri are the baseline's and the rival's places in procs; -1
	// for none.
	bi, ri := -1, -1
	if cfg.baseline != "" {
		bp := fp
		bpath := cfg.baseline
		if c.bin != "" {
			bpath = filepath.Join(filepath.Dir(bpath), c.bin)
		}
		bp.path, bp.argv = bpath, append([]string{bpath}, args...)
		bi, procs = len(procs), append(procs, bp)
	}
	switch {
	case c.rival == nil || cfg.baselineOnly:
	case c.rivalPolicy != (policy{}):
		argv := append([]string{fsbox, "--config", writePolicy(dir, c.rivalPolicy)}, c.rival[1:]...)
		ri, procs = len(procs), append(procs, proc{path: fsbox, argv: argv, dir: dir, env: append(slices.Clone(fsboxEnv), c.env...), stdin: c.stdin, pipe: c.pipe, setup: c.setup})
	default:
		rpath, missing := rivalPath(c)
		if missing != "" {
			res.Skipped = fmt.Sprintf("rival %q is not installed: skipped, timing fsbox alone", missing)
		} else {
			argv := slices.Clone(c.rival)
			argv[0] = filepath.Base(rpath)
			ri, procs = len(procs), append(procs, proc{path: rpath, argv: argv, dir: dir, env: append(os.Environ(), c.env...), stdin: c.stdin, pipe: c.pipe, setup: c.setup})
		}
	}
	if c.viaShell {
		for i := range procs {
			procs[i] = procs[i].underShell()
		}
	}
	if c.bytes != nil {
		n, err := c.bytes(dir)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		res.Bytes = n
	}

	// active: still in the loop. The baseline leaves it when it cannot run
	// the command or the guard kills it; the row goes on without it.
	active := make([]bool, len(procs))
	samples := make([][]sample, len(procs))
	warm := make([]sample, len(procs))
	var baseKilled *sample
	baseline := func() *stats {
		switch {
		case bi < 0 || res.BaselineError != "":
			return nil
		case baseKilled != nil:
			return killedStats(*baseKilled)
		case len(samples[bi]) > 0:
			return summarize(samples[bi])
		case active[bi]:
			return summarize(warm[bi : bi+1])
		}
		return nil
	}
	baseFailed := func(err error) {
		res.BaselineError = "baseline: " + err.Error()
		progress("   %s", res.BaselineError)
		active[bi] = false
	}
	baseWasKilled := func(s sample) {
		if s.killed == "time" {
			progress("   the baseline did not finish within %v: killed, with its process group; no further runs", cfg.guard.timeout)
		} else {
			progress("   the baseline passed -max-rss (%s) after %v: killed, with its process group; no further runs", kib(cfg.guard.rssKiB), s.wall.Round(time.Millisecond))
		}
		baseKilled, active[bi] = &s, false
	}

	// Warm-up, which also warms the page cache and runs the checks. When
	// fsbox is killed, the baseline still gets its warm-up run (its time
	// for the verdict), the rival none.
	outs := make([][]byte, len(procs))
	var curKilled *sample
	for i, p := range procs {
		if curKilled != nil && i != bi {
			continue
		}
		out, s, err := p.warmup(c.okExit, cfg.guard)
		switch {
		case i == bi && errors.Is(err, errKilled):
			baseWasKilled(s)
		case i == bi && err != nil:
			baseFailed(err)
		case i == 0 && errors.Is(err, errKilled):
			curKilled = &s
		case err != nil:
			res.Error = err.Error()
			return res
		default:
			outs[i], warm[i], active[i] = out, s, true
		}
	}
	if curKilled != nil {
		res = killed(cfg, c, res, *curKilled)
		res.Baseline = baseline()
		compareBaseline(&res)
		return res
	}
	if c.same && ri >= 0 {
		same := bytes.Equal(outs[0], outs[ri])
		res.SameOutput = &same
		if !same {
			res.Error = fmt.Sprintf("outputs differ: fsbox printed %d bytes (%q...), the rival %d (%q...)",
				len(outs[0]), head(outs[0]), len(outs[ri]), head(outs[ri]))
			return res
		}
	}
	if c.same && bi >= 0 && active[bi] {
		same := bytes.Equal(outs[0], outs[bi])
		res.BaselineSame = &same
	}

	// Interleaved runs until each side has had its budget and its minimum,
	// or, when its runs are slow, the timeout (one run at least). fsbox and
	// the baseline are a pair: they take turns going first, and both run
	// in a round while either needs more runs, so both get as many (unless
	// one reaches the timeout or leaves the loop: the other goes on alone).
	timeout := cfg.guard.timeout
	spent := make([]time.Duration, len(procs))
	stopped := func(i int) bool {
		n := len(samples[i])
		return !active[i] || n >= cfg.maxRuns || (n > 0 && timeout > 0 && spent[i] >= timeout)
	}
	done := func(i int) bool { return len(samples[i]) >= cfg.minRuns && spent[i] >= cfg.budget }
	order := make([]int, len(procs))
	due := make([]bool, len(procs))
	for round := 0; ; round++ {
		for i := range order {
			order[i] = i
			due[i] = !stopped(i) && !done(i)
		}
		if bi >= 0 && !stopped(0) && !stopped(bi) {
			due[0] = !done(0) || !done(bi)
			due[bi] = due[0]
		}
		if bi >= 0 && round%2 == 1 {
			order[0], order[bi] = bi, 0
		}
		busy := false
		for _, i := range order {
			if !due[i] || !active[i] {
				continue
			}
			busy = true
			s, err := procs[i].run(devnull, devnull, c.okExit, cfg.guard)
			switch {
			case i == 0 && errors.Is(err, errKilled):
				res = killed(cfg, c, res, s)
				res.Baseline = baseline()
				compareBaseline(&res)
				return res
			case i == bi && errors.Is(err, errKilled):
				baseWasKilled(s)
				continue
			case i == bi && err != nil:
				baseFailed(fmt.Errorf("%s: %v", showArgv(procs[i].argv), err))
				continue
			case err != nil:
				res.Error = fmt.Sprintf("%s: %v", showArgv(procs[i].argv), err)
				return res
			}
			samples[i] = append(samples[i], s)
			spent[i] += s.wall
		}
		if !busy {
			break
		}
	}

	res.Fsbox = summarize(samples[0])
	if ri >= 0 {
		res.Rival = summarize(samples[ri])
	}
	res.Baseline = baseline()
	hwm := ownHWM()
	for _, side := range []struct {
		st *stats
		i  int
	}{{res.Fsbox, 0}, {res.Rival, ri}, {res.Baseline, bi}} {
		st := side.st
		if st == nil || st.Killed != "" {
			continue
		}
		if rss.time == "" {
			st.PeakRSSKiB, st.RSSExact = st.DirectRSSKiB, hwm > 0 && st.DirectRSSKiB > hwm
			continue
		}
		// As many runs as fit in the timeout, one at least.
		runs := rss.runs
		if med := time.Duration(st.MedianMs * 1e6); timeout > 0 && med > 0 {
			runs = max(1, min(runs, int(timeout/med)))
		}
		k, err := rss.peak(procs[side.i], devnull, c.okExit, runs, cfg.guard)
		if errors.Is(err, errKilled) {
			st.PeakRSSKiB, st.RSSExact = st.DirectRSSKiB, hwm > 0 && st.DirectRSSKiB > hwm
			continue
		}
		if err != nil && side.i == bi {
			baseFailed(err)
			res.Baseline = nil
			continue
		}
		if err != nil {
			res.Error = err.Error()
			return res
		}
		st.PeakRSSKiB, st.RSSExact = k, true
	}
	if res.Rival != nil {
		res.Ratio = math.Round(res.Fsbox.MedianMs/res.Rival.MedianMs*1000) / 1000
		if c.maxRatio > 0 {
			pass := res.Ratio <= c.maxRatio
			res.RatioPass = &pass
		}
	}
	if c.maxSeconds > 0 {
		pass := res.Fsbox.MedianMs < res.TimeTargetMs
		res.TimePass = &pass
	}
	if c.maxRSSKiB > 0 {
		if pass := res.Fsbox.PeakRSSKiB < c.maxRSSKiB; pass || res.Fsbox.RSSExact {
			res.RSSPass = &pass
		}
	}
	if res.Bytes > 0 {
		gib := float64(res.Bytes) / (1 << 30)
		for _, s := range []*stats{res.Fsbox, res.Rival, res.Baseline} {
			if s != nil {
				s.PerGiBMs = math.Round(s.MedianMs/gib*1000) / 1000
			}
		}
	}
	compareBaseline(&res)
	return res
}

// killed completes res for a row whose fsbox run s the guard killed. Its
// time and peak RSS until then are lower bounds of the whole run's (the
// RSS when it is above the driver's own high-water mark: see rssMeter),
// so they can tell a MISS but not a PASS.
func killed(cfg config, c comparison, res result, s sample) result {
	if s.killed == "time" {
		progress("   fsbox did not finish within %v: killed, with its process group; no further runs", cfg.guard.timeout)
	} else {
		progress("   fsbox passed -max-rss (%s) after %v: killed, with its process group; no further runs", kib(cfg.guard.rssKiB), s.wall.Round(time.Millisecond))
	}
	res.Fsbox = killedStats(s)
	if c.maxSeconds > 0 && res.Fsbox.MedianMs >= res.TimeTargetMs {
		pass := false
		res.TimePass = &pass
	}
	if c.maxRSSKiB > 0 && res.Fsbox.RSSExact && s.rssKiB >= c.maxRSSKiB {
		pass := false
		res.RSSPass = &pass
	}
	return res
}

// killedStats are the figures of a run the guard killed: how long it ran
// and its peak RSS until then (exact only when above the driver's own
// high-water mark).
func killedStats(s sample) *stats {
	hwm := ownHWM()
	return &stats{MedianMs: ms(s.wall), MinMs: ms(s.wall), P25Ms: ms(s.wall), P75Ms: ms(s.wall), MaxMs: ms(s.wall),
		PeakRSSKiB: s.rssKiB, RSSExact: hwm > 0 && s.rssKiB > hwm, DirectRSSKiB: s.rssKiB, Killed: s.killed}
}

// The regression rule against a baseline: the current build's median may
// exceed the baseline's by at most the larger of regressFrac of the
// baseline's median and regressMs.
const (
	regressFrac = 0.05
	regressMs   = 0.2
)

// compareBaseline sets a row's ratio, change and verdict against the
// baseline, when both sides have a time.
func compareBaseline(r *result) {
	cur, base := r.Fsbox, r.Baseline
	if cur == nil || base == nil || cur.MedianMs <= 0 || base.MedianMs <= 0 {
		return
	}
	r.BaselineRatio = math.Round(cur.MedianMs/base.MedianMs*1000) / 1000
	r.BaselineDeltaMs = math.Round((cur.MedianMs-base.MedianMs)*1000) / 1000
	r.BaselineVerdict = baselineVerdict(cur, base)
}

// baselineVerdict is "REGRESSION" when cur is slower than base by more
// than max(regressFrac of base, regressMs), "faster" when quicker by as
// much, else "ok". A killed side's time is a lower bound: the side the
// guard killed is the slower one (or the one that took too much memory).
func baselineVerdict(cur, base *stats) string {
	switch {
	case cur.Killed != "" && base.Killed != "":
		return "both killed"
	case cur.Killed != "":
		return "REGRESSION"
	case base.Killed != "":
		return "faster"
	}
	tol := max(regressFrac*base.MedianMs, regressMs)
	switch d := cur.MedianMs - base.MedianMs; {
	case d > tol:
		return "REGRESSION"
	case -d > tol:
		return "faster"
	}
	return "ok"
}

// version is the first line of bin --version, "" when it says nothing.
func version(bin string) string {
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+os.DevNull)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return firstLine(strings.TrimSpace(string(out)))
}

// showArgv joins argv for a message, each very long argument (such as an
// --edits-json) shortened.
func showArgv(argv []string) string { return strings.Join(shortArgv(argv), " ") }

func shortArgv(argv []string) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if len(a) > 100 {
			out[i] = fmt.Sprintf("%s…(%d bytes)", a[:60], len(a))
		}
	}
	return out
}

// rivalText is a row's rival for the listing.
func rivalText(rival []string) string {
	if rival == nil {
		return "(no rival: fsbox alone, against its own targets)"
	}
	return strings.Join(rival, " ")
}

func head(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// ---------------------------------------------------------------------------
// The report.

type report struct {
	Go        string               `json:"go"`
	OS        string               `json:"os"`
	Arch      string               `json:"arch"`
	CPUs      int                  `json:"cpus"`
	Fsbox     string               `json:"fsbox"`
	Data      string               `json:"data"`
	Quick     bool                 `json:"quick"`
	BudgetMs  float64              `json:"budget_ms"`
	MinRuns   int                  `json:"min_runs"`
	TimeoutMs float64              `json:"timeout_ms,omitempty"`  // a run is killed past it
	MaxRSSKiB int64                `json:"max_rss_kib,omitempty"` // or once its RSS passes this
	Files     map[string]fileEntry `json:"files"`
	RSSMethod string               `json:"rss_method"`
	LoadStart string               `json:"loadavg_start,omitempty"` // /proc/loadavg: 1, 5, 15 minutes
	LoadEnd   string               `json:"loadavg_end,omitempty"`
	Results   []result             `json:"results"`

	// FsboxVersion and BaselineVersion are the binaries' --version lines.
	FsboxVersion    string `json:"fsbox_version,omitempty"`
	Baseline        string `json:"baseline,omitempty"` // -baseline
	BaselineVersion string `json:"baseline_version,omitempty"`
	BaselineOnly    bool   `json:"baseline_only,omitempty"` // no rivals were run
}

func printTable(w io.Writer, rep report) {
	rows := [][]string{{"comparison", "fsbox", "target", "", "rival", "ratio", "target", "", "fsbox RSS", "target", "", "runs", "time per GiB (fsbox / rival), or notes"}}
	for _, r := range rep.Results {
		row := []string{r.Name, "-", "-", "", "-", "-", "-", "", "-", "-", "", "-", ""}
		if r.TimeTargetMs > 0 {
			row[2] = "< " + dur(r.TimeTargetMs)
		}
		if r.RatioTarget > 0 {
			row[6] = fmt.Sprintf("<= %gx", r.RatioTarget)
		}
		if r.RSSTargetKiB > 0 {
			row[9] = "< " + kib(r.RSSTargetKiB)
		}
		switch {
		case r.Error != "":
			row[1] = "ERROR"
		case r.Fsbox != nil && r.Fsbox.Killed != "":
			row[1] = "> " + dur(r.Fsbox.MedianMs)
			row[3] = verdict(r.TimePass)
			row[8] = "-"
			if r.Fsbox.RSSExact {
				row[8] = ">= " + kib(r.Fsbox.PeakRSSKiB)
			}
			row[10] = verdict(r.RSSPass)
			row[11] = "killed (" + r.Fsbox.Killed + ")"
		case r.Fsbox != nil:
			if r.Fsbox.MaxMs > 0 { // else a memory-only row
				row[1] = dur(r.Fsbox.MedianMs)
			}
			row[3] = verdict(r.TimePass)
			if r.Fsbox.PeakRSSKiB > 0 { // else not measured (mcp-startup)
				row[8] = kib(r.Fsbox.PeakRSSKiB)
				if !r.Fsbox.RSSExact {
					row[8] = "<= " + row[8]
				}
			}
			row[10] = verdict(r.RSSPass)
			row[11] = strconv.Itoa(r.Fsbox.Runs)
			if r.Rival != nil {
				row[4] = dur(r.Rival.MedianMs)
				row[5] = fmt.Sprintf("%.2fx", r.Ratio)
				row[7] = verdict(r.RatioPass)
				row[11] += "/" + strconv.Itoa(r.Rival.Runs)
			} else if r.RivalArgv != nil {
				row[4] = "skipped"
			}
			if r.Fsbox.PerGiBMs > 0 {
				row[12] = dur(r.Fsbox.PerGiBMs)
				if r.Rival != nil {
					row[12] += " / " + dur(r.Rival.PerGiBMs)
				}
				row[12] += fmt.Sprintf(" (%.0f MiB skipped)", float64(r.Bytes)/(1<<20))
			}
			if r.Note != "" {
				row[12] = r.Note
			}
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	quick := ""
	if rep.Quick {
		quick = " (-quick: rough figures)"
	}
	fmt.Fprintf(w, "\nfsbox %s vs the rivals; %s/%s, %d CPUs, %s; median wall time per run, stdout to /dev/null%s\n\n",
		rep.Fsbox, rep.OS, rep.Arch, rep.CPUs, rep.Go, quick)
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 1 || i == 4 || i == 5 || i == 8 || i == 11 {
				fmt.Fprintf(&b, "%*s", widths[i], cell) // numbers right-aligned
			} else {
				fmt.Fprintf(&b, "%-*s", widths[i], cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintln(w)
	if rep.LoadStart != "" {
		fmt.Fprintf(w, "Load average %s at the start, %s at the end", rep.LoadStart, rep.LoadEnd)
		if busy(rep.LoadStart, rep.CPUs) || busy(rep.LoadEnd, rep.CPUs) {
			fmt.Fprintf(w, ": the machine was busy, so the figures are skewed (most against fsbox, whose runtime starts several threads)")
		}
		fmt.Fprintln(w, ".")
		fmt.Fprintln(w)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(w, "  %-14s %s\n  %-14s vs %s\n", r.Name, strings.Join(r.FsboxArgv, " "), "", rivalText(r.RivalArgv))
		if r.Skipped != "" {
			fmt.Fprintf(w, "  %-14s %s\n", "", r.Skipped)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "  %-14s ERROR: %s\n", "", r.Error)
		}
	}
	fmt.Fprintf(w, "\nPeak RSS: %s.\n", rep.RSSMethod)
	mcpFooter(w, rep)
	for _, r := range rep.Results {
		if r.Fsbox != nil && r.Fsbox.Killed != "" {
			fmt.Fprintf(w, "killed: the run passed -timeout (%s) or -max-rss (%s) and was killed with its process group;\n", dur(rep.TimeoutMs), kib(rep.MaxRSSKiB))
			fmt.Fprintln(w, "its time is how long it ran, its RSS (>=) its peak until then, shown when above the driver's own.")
			break
		}
	}
	fmt.Fprintln(w, "PASS/MISS compare with the targets; a MISS is a finding to look into, not a failure.")
}

// printBaselineTable prints the rows against the baseline: each side's
// median, the ratio, the change and the verdict, both peak RSSes, and
// the row's own targets. Alone (-baseline-only) it ends with the rows'
// commands and the notes printTable would print.
func printBaselineTable(w io.Writer, rep report) {
	rows := [][]string{{"comparison", "fsbox", "baseline", "ratio", "change", "verdict", "fsbox RSS", "baseline RSS", "runs", "targets, notes"}}
	rssCell := func(st *stats) string {
		switch {
		case st == nil || st.PeakRSSKiB <= 0:
			return "-"
		case st.Killed != "" && st.RSSExact:
			return ">= " + kib(st.PeakRSSKiB)
		case st.Killed != "":
			return "-"
		case !st.RSSExact:
			return "<= " + kib(st.PeakRSSKiB)
		}
		return kib(st.PeakRSSKiB)
	}
	timeCell := func(st *stats) string {
		switch {
		case st == nil || st.MaxMs <= 0:
			return "-"
		case st.Killed != "":
			return "> " + dur(st.MedianMs)
		}
		return dur(st.MedianMs)
	}
	regressions := 0
	for _, r := range rep.Results {
		row := []string{r.Name, timeCell(r.Fsbox), timeCell(r.Baseline), "-", "-", r.BaselineVerdict, rssCell(r.Fsbox), rssCell(r.Baseline), "-", ""}
		if r.Error != "" {
			row[1] = "ERROR"
		}
		if r.BaselineError != "" {
			row[2] = "ERROR"
		}
		if r.BaselineRatio > 0 {
			row[3] = fmt.Sprintf("%.3fx", r.BaselineRatio)
			row[4] = fmt.Sprintf("%+.2fms %+.1f%%", r.BaselineDeltaMs, (r.BaselineRatio-1)*100)
			if r.Fsbox.MedianMs >= 10 && r.Baseline.MedianMs >= 10 {
				row[4] = fmt.Sprintf("%+.1fms %+.1f%%", r.BaselineDeltaMs, (r.BaselineRatio-1)*100)
			}
		}
		if r.BaselineVerdict == "REGRESSION" {
			regressions++
		}
		if r.Fsbox != nil && r.Fsbox.Killed == "" && r.Fsbox.Runs > 0 {
			row[8] = strconv.Itoa(r.Fsbox.Runs)
			if r.Baseline != nil && r.Baseline.Killed == "" {
				row[8] += "/" + strconv.Itoa(r.Baseline.Runs)
			}
		}
		var notes []string
		for _, t := range []struct {
			name string
			pass *bool
		}{{"time", r.TimePass}, {"RSS", r.RSSPass}, {"ratio", r.RatioPass}} {
			if t.pass != nil {
				notes = append(notes, t.name+" "+verdict(t.pass))
			}
		}
		if r.BaselineSame != nil && !*r.BaselineSame {
			notes = append(notes, "output differs from the baseline's")
		}
		row[9] = strings.Join(notes, ", ")
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	quick := ""
	if rep.Quick {
		quick = " (-quick: rough figures)"
	}
	named := func(path, version string) string {
		if version == "" {
			return path
		}
		return path + " (" + version + ")"
	}
	fmt.Fprintf(w, "\nfsbox %s\n  vs baseline %s;\n  %s/%s, %d CPUs, %s; median wall time per run, the two interleaved run for run, stdout to /dev/null%s\n\n",
		named(rep.Fsbox, rep.FsboxVersion), named(rep.Baseline, rep.BaselineVersion), rep.OS, rep.Arch, rep.CPUs, rep.Go, quick)
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i >= 1 && i <= 4 || i >= 6 && i <= 8 {
				b.WriteString(pad + cell) // numbers right-aligned
			} else {
				b.WriteString(cell + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "REGRESSION: fsbox's median is above the baseline's by more than %.0f %% of it and more than %.1f ms (whichever is larger);\n", regressFrac*100, regressMs)
	fmt.Fprintf(w, "faster: below it by as much; ok: within. %d regression(s) in %d rows.\n", regressions, len(rep.Results))
	if rep.Quick {
		fmt.Fprintln(w, "With -quick the medians rest on a few runs: confirm a REGRESSION without it.")
	}
	if !rep.BaselineOnly {
		for _, r := range rep.Results {
			if r.BaselineError != "" {
				fmt.Fprintf(w, "  %-*s  %s\n", widths[0], r.Name, r.BaselineError)
			}
		}
		return
	}
	fmt.Fprintln(w)
	if rep.LoadStart != "" {
		fmt.Fprintf(w, "Load average %s at the start, %s at the end", rep.LoadStart, rep.LoadEnd)
		if busy(rep.LoadStart, rep.CPUs) || busy(rep.LoadEnd, rep.CPUs) {
			fmt.Fprintf(w, ": the machine was busy, so the figures are noisy (the two sides are interleaved, so both take it alike)")
		}
		fmt.Fprintln(w, ".")
		fmt.Fprintln(w)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(w, "  %-*s  %s\n", widths[0], r.Name, strings.Join(r.FsboxArgv, " "))
		if r.Error != "" {
			fmt.Fprintf(w, "  %-*s  ERROR: %s\n", widths[0], "", r.Error)
		}
		if r.BaselineError != "" {
			fmt.Fprintf(w, "  %-*s  ERROR: %s\n", widths[0], "", r.BaselineError)
		}
	}
	fmt.Fprintf(w, "\nRivals not run (-baseline-only). Peak RSS: %s.\n", rep.RSSMethod)
	mcpFooter(w, rep)
	for _, r := range rep.Results {
		if (r.Fsbox != nil && r.Fsbox.Killed != "") || (r.Baseline != nil && r.Baseline.Killed != "") {
			fmt.Fprintf(w, "killed: the run passed -timeout (%s) or -max-rss (%s) and was killed with its process group;\n", dur(rep.TimeoutMs), kib(rep.MaxRSSKiB))
			fmt.Fprintln(w, "its time is how long it ran, its RSS (>=) its peak until then, shown when above the driver's own.")
			break
		}
	}
	fmt.Fprintln(w, "PASS/MISS compare fsbox with the row's targets; a MISS is a finding to look into, not a failure.")
}

// loadavg is the 1, 5 and 15 minute load averages, "" where unknown.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// busy reports whether a load average's one-minute figure says something
// besides the benchmark (which itself keeps about one CPU busy) used more
// than half the other CPUs.
func busy(load string, cpus int) bool {
	f, err := strconv.ParseFloat(strings.Fields(load + " x")[0], 64)
	return err == nil && f > 1+float64(cpus-1)/2
}

func verdict(p *bool) string {
	switch {
	case p == nil:
		return ""
	case *p:
		return "PASS"
	}
	return "MISS"
}

func dur(msv float64) string {
	switch {
	case msv >= 1000:
		return fmt.Sprintf("%.2fs", msv/1000)
	case msv >= 10:
		return fmt.Sprintf("%.1fms", msv)
	}
	return fmt.Sprintf("%.2fms", msv)
}

func kib(k int64) string {
	if k >= 1024 {
		return fmt.Sprintf("%.1f MiB", float64(k)/1024)
	}
	return fmt.Sprintf("%d KiB", k)
}

// ---------------------------------------------------------------------------
// Data generation.

type fileEntry struct {
	Version int   `json:"version"`
	Size    int64 `json:"size"`
	Lines   int64 `json:"lines"`
}

type manifest struct {
	Files map[string]fileEntry `json:"files"`
}

const manifestName = "bench-manifest.json"

// prepare makes sure every needed dataset is in dir: a file is reused when
// the manifest has it at this generator version and its size matches.
func prepare(dir string, need map[string]bool) (*manifest, error) {
	mpath := filepath.Join(dir, manifestName)
	man := &manifest{}
	if b, err := os.ReadFile(mpath); err == nil {
		json.Unmarshal(b, man) // a bad manifest just means regenerating
	}
	if man.Files == nil {
		man.Files = map[string]fileEntry{}
	}
	for _, d := range datasets {
		if !need[d.name] {
			continue
		}
		path := filepath.Join(dir, d.name)
		e, ok := man.Files[d.name]
		if fi, err := os.Stat(path); ok && err == nil && e.Version == genVersion && fi.Size() == e.Size && (d.size == 0 || fi.Size() == d.size) {
			check := journalChecks[d.name]
			if check == nil {
				continue
			}
			err := check(dir)
			if err == nil {
				continue
			}
			progress("%s: %v: made again", d.name, err)
		}
		delete(man.Files, d.name)
		if d.size > 0 {
			progress("generating %s (%s) ...", path, sizeName(d.size))
		} else {
			progress("generating %s ...", path)
		}
		t0 := time.Now()
		tmp := path + ".tmp"
		lines, err := d.gen(tmp, d.size)
		if err != nil {
			os.Remove(tmp)
			return nil, err
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			return nil, err
		}
		if d.size > 0 && fi.Size() != d.size {
			return nil, fmt.Errorf("%s: generated %d bytes, want %d", d.name, fi.Size(), d.size)
		}
		if fi.IsDir() {
			// A stale tree: rename does not replace a non-empty directory.
			if err := os.RemoveAll(path); err != nil {
				return nil, err
			}
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		progress("   %d bytes, %d lines in %v", fi.Size(), lines, el.Round(time.Millisecond))
		man.Files[d.name] = fileEntry{Version: genVersion, Size: fi.Size(), Lines: lines}
		b, _ := json.MarshalIndent(man, "", "  ")
		if err := os.WriteFile(mpath, append(b, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	if e, ok := man.Files[fileLog]; ok && need[fileLog] && e.Lines < pageOffset*3/2 {
		return nil, fmt.Errorf("%s has only %d lines; the paging comparison wants well over %d", fileLog, e.Lines, pageOffset)
	}
	return man, nil
}

func sizeName(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.4g GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
}

// rng is splitmix64: fast, and the same sequence everywhere for a seed.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

func (r *rng) pick(l []string) string { return l[r.intn(len(l))] }

// writeLines writes lines from gen to path, in 8 MiB blocks, until the file
// has exactly size bytes: the last line is cut short to fit and still ends
// in a newline.
func writeLines(path string, size int64, gen func(dst []byte) []byte) (lines int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	const block = 8 << 20
	buf := make([]byte, 0, block+64<<10)
	var written int64
	for written+int64(len(buf)) < size {
		start := len(buf)
		buf = gen(buf)
		if rem := size - written - int64(start); int64(len(buf)-start) > rem {
			buf = append(buf[:start+int(rem)-1], '\n')
		}
		lines++
		if len(buf) >= block {
			if _, err := f.Write(buf); err != nil {
				return 0, err
			}
			written += int64(len(buf))
			buf = buf[:0]
		}
	}
	if _, err := f.Write(buf); err != nil {
		return 0, err
	}
	return lines, f.Close()
}

var words = strings.Fields(`the a of to and in is it that for on with as was at by from this be or are
an not have but had they which one you were all we can her has there been if more when will would who so
no file line read write sandbox policy root path error value request response cache server client user
session token query index buffer stream block page offset limit result timeout retry connection handler
config worker queue job task event message payload header status latency upstream downstream replica
shard partition commit rollback snapshot checkpoint migration schema table column record batch`)

func genSmall(path string, _ int64) (int64, error) {
	return 3, os.WriteFile(path, []byte("alpha\nbeta\ngamma\n"), 0o644)
}

// genText writes prose-like lines of up to about 100 bytes, and now and
// then an empty one.
func genText(path string, size int64) (int64, error) {
	r := &rng{s: 0x7e57}
	return writeLines(path, size, func(b []byte) []byte {
		n := 1 + r.intn(15)
		if r.intn(10) == 0 {
			n = 0
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ' ')
			}
			w := r.pick(words)
			if i == 0 {
				b = append(b, w[0]-'a'+'A')
				w = w[1:]
			}
			b = append(b, w...)
		}
		if n > 0 {
			b = append(b, '.')
		}
		return append(b, '\n')
	})
}

var (
	levels   = []string{"DEBUG", "INFO ", "INFO ", "INFO ", "INFO ", "INFO ", "WARN ", "WARN ", "ERROR"}
	services = []string{"api", "auth", "billing", "checkout", "search", "storage", "gateway", "scheduler"}
	methods  = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	routes   = []string{"/v1/items/", "/v1/orders/", "/v1/users/", "/v2/search?q=", "/healthz", "/v1/files/"}
	statuses = []string{"200", "200", "200", "200", "201", "204", "304", "400", "404", "500", "503"}
)

const hexDigits = "0123456789abcdef"

// genLog writes log lines of about 120 bytes: an RFC 3339 timestamp, a
// level, a service, a 16-digit hex request id, method and path,
// status=NNN, latency_ms=NNN (a long slow tail), a few words of message,
// and one line in a hundred with a long stack-ish trace.
func genLog(path string, size int64) (int64, error) {
	r := &rng{s: 0x10961061}
	tms := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var sec int64 = -1
	var stamp []byte
	return writeLines(path, size, func(b []byte) []byte {
		tms += int64(r.intn(40))
		if s := tms / 1000; s != sec {
			sec = s
			stamp = time.Unix(s, 0).UTC().AppendFormat(stamp[:0], "2006-01-02T15:04:05")
		}
		b = append(b, stamp...)
		m := tms % 1000
		b = append(b, '.', byte('0'+m/100), byte('0'+m/10%10), byte('0'+m%10), 'Z', ' ')
		b = append(b, r.pick(levels)...)
		b = append(b, " ["...)
		b = append(b, r.pick(services)...)
		b = append(b, "] req="...)
		id := r.next()
		for i := 60; i >= 0; i -= 4 {
			b = append(b, hexDigits[id>>uint(i)&15])
		}
		b = append(b, ' ')
		b = append(b, r.pick(methods)...)
		b = append(b, ' ')
		route := r.pick(routes)
		b = append(b, route...)
		if route != "/healthz" {
			b = strconv.AppendInt(b, int64(r.intn(100000)), 10)
		}
		b = append(b, " status="...)
		b = append(b, r.pick(statuses)...)
		lat := r.intn(120)
		if r.intn(16) == 0 {
			lat = 120 + r.intn(9880) // the slow tail
		}
		b = append(b, " latency_ms="...)
		b = strconv.AppendInt(b, int64(lat), 10)
		for i, n := 0, r.intn(5); i < n; i++ {
			b = append(b, ' ')
			b = append(b, r.pick(words)...)
		}
		if r.intn(100) == 0 {
			b = append(b, " trace:"...)
			for i, n := 0, 3+r.intn(20); i < n; i++ {
				b = append(b, " at "...)
				b = append(b, r.pick(services)...)
				b = append(b, '.')
				b = append(b, r.pick(words)...)
				b = append(b, "(+0x"...)
				b = strconv.AppendUint(b, r.next()&0xffff, 16)
				b = append(b, ')')
			}
		}
		return append(b, '\n')
	})
}

// lineOffset returns a bytes function: the byte offset where line n
// (0-based) of the named file starts, which is how much a reader paging
// to line n must get through.
func lineOffset(name string, n int64) func(dir string) (int64, error) {
	return func(dir string) (int64, error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		buf := make([]byte, 1<<20)
		var off, seen int64
		for {
			k, err := f.Read(buf)
			chunk := buf[:k]
			if c := int64(bytes.Count(chunk, []byte{'\n'})); seen+c < n {
				seen += c
				off += int64(k)
			} else {
				for seen < n {
					i := bytes.IndexByte(chunk, '\n')
					off += int64(i + 1)
					chunk = chunk[i+1:]
					seen++
				}
				return off, nil
			}
			if err == io.EOF {
				return 0, fmt.Errorf("%s has only %d lines, fewer than %d", name, seen, n)
			}
			if err != nil {
				return 0, err
			}
		}
	}
}

// writePolicy writes (once) policy p beside the data directory dir, with
// dir as its workdir, and returns its path. It lies outside the workdir,
// as fsbox requires. JOURNAL_DIR in its text becomes journalBase of its
// name: each journal policy has a journal of its own.
func writePolicy(dir string, pol policy) string {
	p := dir + "." + pol.name + ".toml"
	text := fmt.Sprintf("workdir = %q\n", dir) + strings.ReplaceAll(pol.text, "JOURNAL_DIR", journalBase(dir, pol.name))
	if strings.HasPrefix(pol.text, "workdir =") {
		text = pol.text
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != text {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			fatalf(2, "writing %s: %v", p, err)
		}
	}
	return p
}

// genWords writes one lowercase word a line (3 to 12 letters).
func genWords(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed01}
	return writeLines(path, size, func(b []byte) []byte {
		for i, n := 0, 3+r.intn(10); i < n; i++ {
			b = append(b, byte('a'+r.intn(26)))
		}
		return append(b, '\n')
	})
}

// genSyllables writes short pronounceable words, one a line (package
// words says how; the sort tests take the same bytes).
func genSyllables(path string, size int64) (int64, error) {
	return writeLines(path, size, wordgen.NewSyllables().Append)
}

// genLine writes one line of size bytes: syllable words joined by spaces,
// lineNeedle in the middle, and a newline.
func genLine(path string, size int64) (int64, error) {
	w := wordgen.NewSyllables()
	buf := make([]byte, 0, size+64)
	for int64(len(buf)) < size/2 {
		buf = w.Append(buf)
		buf[len(buf)-1] = ' '
	}
	buf = append(buf, lineNeedle+" "...)
	for int64(len(buf)) < size-1 {
		buf = w.Append(buf)
		buf[len(buf)-1] = ' '
	}
	buf = append(buf[:size-1], '\n')
	return 1, os.WriteFile(path, buf, 0o644)
}

// genNums writes signed decimals, as sort -n meets them.
func genNums(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed02}
	return writeLines(path, size, func(b []byte) []byte {
		b = strconv.AppendInt(b, int64(r.intn(2_000_001))-1_000_000, 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(10+r.intn(90)), 10)
		return append(b, '\n')
	})
}

// genTSV writes five tab-separated columns.
func genTSV(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed03}
	return writeLines(path, size, func(b []byte) []byte {
		b = strconv.AppendInt(b, int64(r.intn(1_000_000_000)), 10)
		for i := 0; i < 4; i++ {
			b = append(b, '\t')
			b = append(b, r.pick(words)...)
		}
		return append(b, '\n')
	})
}

// genBlob writes random bytes (no lines to speak of).
func genBlob(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed04}
	return writeLines(path, size, func(b []byte) []byte {
		for i := 0; i < 4096; i += 8 {
			v := r.next()
			for k := 0; k < 8; k++ {
				b = append(b, byte(v>>(8*k)))
			}
		}
		return b
	})
}

// genEdit writes text with MARKER_LINE once, about a third of the way in.
func genEdit(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed05}
	var n int64
	return writeLines(path, size, func(b []byte) []byte {
		n++
		if n == 300_000 {
			return append(b, "MARKER_LINE\n"...)
		}
		b = append(b, r.pick(words)...)
		b = append(b, ' ')
		b = append(b, r.pick(words)...)
		return append(b, '\n')
	})
}

// genTree copies the Go source tree that built this program.
func genTree(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(runtime.GOROOT(), "src"), path).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("copying the Go tree: %v: %s", err, out)
	}
	return 0, nil
}

// genDeep makes a chain of deepLevels directories d/d/d/… (about 4,000
// bytes of path, near PATH_MAX, with the data directory before it), and at
// its bottom leaf.txt, which holds an x, and secret.txt, which the deny
// rules hide. Each directory is made relative to its parent's descriptor
// (os.Root), so no call gets a long path.
func genDeep(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		return 0, err
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return 0, err
	}
	for range deepLevels {
		err = r.Mkdir("d", 0o755)
		var next *os.Root
		if err == nil {
			next, err = r.OpenRoot("d")
		}
		r.Close()
		if err != nil {
			return 0, err
		}
		r = next
	}
	defer r.Close()
	if err := r.WriteFile("leaf.txt", []byte("x marks the bottom\n"), 0o644); err != nil {
		return 0, err
	}
	return 0, r.WriteFile("secret.txt", []byte("x\n"), 0o644)
}

// genIgnore writes 2,000 small Go files, src/dirK/xN.go (40 directories
// of 50), each holding an x, under a .gitignore of exactly 1 MiB: about
// 78k rules, in turn a literal name (nameN.txt), an extension (*.extN), a
// directory (dirN/) and a path glob (src/**/xN*.go), N drawn below 100,000,
// so that a few of the directories and files are ignored.
func genIgnore(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	for n := range 2000 {
		d := filepath.Join(path, "src", fmt.Sprintf("dir%d", n/50))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
		text := fmt.Sprintf("package dir%d\n\n// x%d is file %d of 2000.\nvar x%d = %d\n", n/50, n, n, n, n)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("x%d.go", n)), []byte(text), 0o644); err != nil {
			return 0, err
		}
	}
	r := &rng{s: 0x5eed07}
	var k int
	return writeLines(filepath.Join(path, ".gitignore"), 1<<20, func(b []byte) []byte {
		n := r.intn(100_000)
		k++
		switch k % 4 {
		case 0:
			return fmt.Appendf(b, "name%d.txt\n", n)
		case 1:
			return fmt.Appendf(b, "*.ext%d\n", n)
		case 2:
			return fmt.Appendf(b, "dir%d/\n", n)
		}
		return fmt.Appendf(b, "src/**/x%d*.go\n", n)
	})
}

// genHint returns a generator of n short lines "zzzz qqN", all sharing a
// long run with hintOld (so every one is a candidate for edit's closest
// lines) and none holding it.
func genHint(n int) func(string, int64) (int64, error) {
	return func(path string, _ int64) (int64, error) {
		f, err := os.Create(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		var b []byte
		for i := range n {
			b = fmt.Appendf(b, "zzzz qq%d\n", i)
		}
		if _, err := f.Write(b); err != nil {
			return 0, err
		}
		return int64(n), f.Close()
	}
}

// genRepeat returns a generator of size bytes: the byte fill over and
// over, then tail.
func genRepeat(fill byte, tail string) func(string, int64) (int64, error) {
	return func(path string, size int64) (int64, error) {
		f, err := os.Create(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		block := bytes.Repeat([]byte{fill}, 1<<20)
		for left := size - int64(len(tail)); left > 0; {
			n := min(left, int64(len(block)))
			if _, err := f.Write(block[:n]); err != nil {
				return 0, err
			}
			left -= n
		}
		if _, err := f.WriteString(tail); err != nil {
			return 0, err
		}
		lines := int64(strings.Count(tail, "\n"))
		if !strings.HasSuffix(tail, "\n") {
			lines++ // a last line without a newline is a line
		}
		return lines, f.Close()
	}
}

// genMarks writes text (two words a line) with the markEdits marker lines
// @0000, @0001, … one in 100 lines, none of them anywhere else.
func genMarks(path string, size int64) (int64, error) {
	r := &rng{s: 0x5eed06}
	var n, marks int64
	lines, err := writeLines(path, size, func(b []byte) []byte {
		n++
		if n%100 == 50 && marks < markEdits {
			b = fmt.Appendf(b, "@%04d\n", marks)
			marks++
			return b
		}
		b = append(b, r.pick(words)...)
		b = append(b, ' ')
		b = append(b, r.pick(words)...)
		return append(b, '\n')
	})
	if err == nil && n < 100*markEdits {
		err = fmt.Errorf("%s: room for %d of the %d marker lines only", path, marks, markEdits)
	}
	return lines, err
}

// genPeriod writes periodText over and over, cut at size bytes.
func genPeriod(path string, size int64) (int64, error) {
	b := bytes.Repeat([]byte(periodText), int(size)/len(periodText)+1)[:size]
	return 1, os.WriteFile(path, b, 0o644)
}

// genEmpty writes empty lines.
func genEmpty(path string, size int64) (int64, error) {
	return writeLines(path, size, func(b []byte) []byte { return append(b, '\n') })
}

// genSparse makes a file of size NUL bytes that takes no disk.
func genSparse(path string, size int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return 0, err
	}
	return 0, f.Close()
}

// companionBeside is the name of the MCP server's binary beside the fsbox
// binary bin: fsbox-mcp, or for a build from before it fsbox-full (which
// ran --jq too); "" when neither is there.
func companionBeside(bin string) string {
	for _, name := range []string{"fsbox-mcp", "fsbox-full"} {
		if fi, err := os.Stat(filepath.Join(filepath.Dir(bin), name)); err == nil && !fi.IsDir() {
			return name
		}
	}
	return ""
}
