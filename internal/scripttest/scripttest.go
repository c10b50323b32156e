//go:build unix

// Package scripttest is the end-to-end golden harness: the
// testscript.Params every golden run uses (testdata/script/*.txtar),
// with its setup, conditions and commands. cmd/fsbox runs the scripts
// with fsbox as the test binary; cmd/fsbox-s3 runs the read-side ones
// again with their workdir in a bucket. Conventions the scripts follow:
//
//   - fixtures live under work/, and scripts `cd work` first, so the
//     built-in default policy's workdir is $WORK/work;
//   - policy files live under policy/ (never inside the directory they
//     open) and say $WORK, which `expandwork` turns into the real path;
//   - expected output lives under want/; `cmp` compares it whole (and
//     `go test ./cmd/fsbox -run TestScript -update` rewrites it), `cmpenv`
//     where it holds $REALWORK;
//   - a failing call is `exitcode N fsbox ...`, which checks the exact exit
//     status, followed by a check of stderr's error object;
//   - `mtime -r TIME DIR` pins times so listings compare byte for byte;
//   - a tree whose .gitignore must apply is a git repository (a .git in
//     it: `mkdir DIR/.git`, or a `-- DIR/.git/HEAD --` file), as fsbox
//     applies .gitignore only inside one; a script that needs a tree
//     outside every repository starts with `[!outside] skip`, for a .git
//     above $WORK (a /tmp/.git, say) would put every tree inside one.
//
// Directory sizes differ between filesystems, so they are matched by regex.
// Only tests import this package: its file access is the harness's.
package scripttest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/internal/jq"
	"github.com/fsbox/fsbox/internal/mcpserver"
	"github.com/fsbox/fsbox/internal/testbin"
)

// Params are the golden run's parameters for the scripts in dir; update
// rewrites their goldens from the output.
func Params(dir string, update bool) testscript.Params {
	// Files extracted from the archives get 0644, directories 0755, on
	// every machine, so modes in goldens are stable.
	syscall.Umask(0o022)
	return testscript.Params{
		Dir:                 dir,
		UpdateScripts:       update,
		RequireExplicitExec: false,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// Never let the host's fsbox settings leak in.
			kept := env.Vars[:0]
			for _, kv := range env.Vars {
				name, _, _ := strings.Cut(kv, "=")
				if (strings.HasPrefix(name, "FSBOX_") && name != "FSBOX_TEST_STDIN") || name == "XDG_CONFIG_HOME" || name == "XDG_STATE_HOME" || name == "HOME" {
					continue
				}
				kept = append(kept, kv)
			}
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			// $REALWORK is $WORK with symlinks resolved: fsbox prints real paths.
			real, err := filepath.EvalSymlinks(env.WorkDir)
			if err != nil {
				return err
			}
			env.Vars = append(kept, "HOME="+home, "REALWORK="+real)
			workInRepo.Store(testbin.RepoAbove(real))
			if os.Getenv("GORACE") == "" {
				// A race-enabled fsbox would sleep 1s at every exit.
				env.Vars = append(env.Vars, "GORACE=atexit_sleep_ms=0")
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root": // permission bits do not bind root
				return os.Geteuid() == 0, nil
			case "mountns": // unshare -rm makes a mount namespace where mount --bind works
				return canMountNS(), nil
			case "outside": // no directory above $WORK holds .git: a tree there is outside any repository
				return !workInRepo.Load(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":   cmdExitcode,
			"mkfifo":     cmdMkfifo,
			"mtime":      cmdMtime,
			"hardlink":   cmdHardlink,
			"writebytes": cmdWritebytes,
			"repeat":     cmdRepeat,
			"expandwork": cmdExpandwork,
			"cursor":     cmdCursor,
			"holdlock":   cmdHoldlock,
		},
	}
}

// workInRepo: a directory above $WORK (the temporary directory every
// script's $WORK lies in, or one above it) holds .git, so every tree of a
// script is inside a git repository, where .gitignore applies, as rg and
// fsbox look up to /. Scripts that need a tree outside any repository
// skip then ([!outside]).
var workInRepo atomic.Bool

// exitcode N PROG [ARGS...] runs PROG like exec and checks that it exits
// with status N; stdout and stderr are kept for the next stdout, stderr or
// cmp command.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// mkfifo PATH... creates named pipes.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mkfifo path...")
	}
	for _, a := range args {
		ts.Check(syscall.Mkfifo(ts.MkAbs(a), 0o644))
	}
}

// mtime [-r] RFC3339 PATH... sets the modification (and access) time of
// each path, without following a final symlink; -r also sets it on
// everything below each path.
func cmdMtime(ts *testscript.TestScript, neg bool, args []string) {
	recursive := len(args) > 0 && args[0] == "-r"
	if recursive {
		args = args[1:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mtime [-r] 2006-01-02T15:04:05Z path...")
	}
	t, err := time.Parse(time.RFC3339, args[0])
	ts.Check(err)
	tv := []unix.Timeval{unix.NsecToTimeval(t.UnixNano()), unix.NsecToTimeval(t.UnixNano())}
	set := func(p string) error { return unix.Lutimes(p, tv) }
	for _, a := range args[1:] {
		p := ts.MkAbs(a)
		if !recursive {
			ts.Check(set(p))
			continue
		}
		// Children first, so setting a directory's time is the last change in it.
		var paths []string
		ts.Check(filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
			paths = append(paths, q)
			return err
		}))
		for i := len(paths) - 1; i >= 0; i-- {
			ts.Check(set(paths[i]))
		}
	}
}

// hardlink NEW -> OLD makes NEW a hard link to OLD.
func cmdHardlink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || args[1] != "->" {
		ts.Fatalf("usage: hardlink new -> old")
	}
	ts.Check(os.Link(ts.MkAbs(args[2]), ts.MkAbs(args[0])))
}

// writebytes PATH TEXT writes TEXT, with Go string escapes (\x00, \r,
// \n, \xff, \u00e9...) decoded, to PATH, creating its directory.
func cmdWritebytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: writebytes path 'text with \\x00 escapes'")
	}
	s, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	ts.Check(err)
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, []byte(s), 0o644))
}

// repeat PATH TEXT N [TEXT N]... writes each TEXT (escapes decoded as
// writebytes decodes them) N times, in order, to PATH: a file too large
// for the archive, such as one long line.
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args)%2 != 1 {
		ts.Fatalf("usage: repeat path text n [text n]...")
	}
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.Create(p)
	ts.Check(err)
	w := bufio.NewWriter(f)
	for i := 1; i < len(args); i += 2 {
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(args[i], `"`, `\"`) + `"`)
		ts.Check(err)
		n, err := strconv.Atoi(args[i+1])
		ts.Check(err)
		for range n {
			w.WriteString(s)
		}
	}
	ts.Check(w.Flush())
	ts.Check(f.Close())
}

// expandwork FILE... replaces every "$WORK" in each file with the real
// path of the script's work directory, so policy files in the archive can
// name absolute roots. Nothing else is expanded (a policy's own
// ${FSBOX_TENANT} stays as written).
func cmdExpandwork(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expandwork file...")
	}
	for _, a := range args {
		p := ts.MkAbs(a)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "$WORK", ts.Getenv("REALWORK"))), 0o644))
	}
}

// cursor NAME sets $NAME to the next_cursor the last command gave: the
// result's next_cursor (stdout), or the text form's hint (stderr); a
// golden then names it as $NAME (cmpenv), as a cursor binds the policy
// and so the script's work directory. ! cursor NAME: there is none.
func cmdCursor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: cursor NAME")
	}
	var c string
	if m := cursorJSON.FindStringSubmatch(ts.ReadFile("stdout")); m != nil {
		c = m[1]
	} else if m := cursorHint.FindStringSubmatch(ts.ReadFile("stderr")); m != nil {
		c = m[1]
	}
	switch {
	case neg && c != "":
		ts.Fatalf("the output carries next_cursor %s", c)
	case !neg && c == "":
		ts.Fatalf("the output carries no next_cursor")
	}
	ts.Setenv(args[0], c)
}

var (
	cursorJSON = regexp.MustCompile(`"next_cursor":\s*"([^"]+)"`)
	cursorHint = regexp.MustCompile(`--cursor (\S+)`)
)

// holdlock DIR takes an exclusive flock on DIR, as another process's
// change on a writable root does, until `holdlock -release DIR` or the
// script's end. A guard lets go after holdGuard, so a build whose lock
// wait ignores the deadline fails its script instead of hanging the suite.
func cmdHoldlock(ts *testscript.TestScript, neg bool, args []string) {
	release := len(args) == 2 && args[0] == "-release"
	if neg || len(args) != 1 && !release {
		ts.Fatalf("usage: holdlock [-release] dir")
	}
	dir := ts.MkAbs(args[len(args)-1])
	heldMu.Lock()
	defer heldMu.Unlock()
	if release {
		f := held[dir]
		if f == nil {
			ts.Fatalf("holdlock: %s is not held", dir)
		}
		f.Close()
		delete(held, dir)
		return
	}
	f, err := os.Open(dir)
	ts.Check(err)
	ts.Check(unix.Flock(int(f.Fd()), unix.LOCK_EX))
	held[dir] = f
	let := func() {
		heldMu.Lock()
		defer heldMu.Unlock()
		if held[dir] == f {
			f.Close()
			delete(held, dir)
		}
	}
	ts.Defer(let)
	time.AfterFunc(holdGuard, let)
}

// holdGuard bounds how long holdlock holds a lock: a guard, not a timing
// a script measures.
const holdGuard = time.Minute

var (
	heldMu sync.Mutex
	held   = map[string]*os.File{}
)

// canMountNS reports whether `unshare -rm` can make a mount namespace
// here (user and mount namespaces allowed) and mount(8) and timeout(1)
// are there; scripts that bind-mount skip where it cannot.
var canMountNS = sync.OnceValue(func() bool {
	for _, prog := range []string{"mount", "timeout"} {
		if _, err := exec.LookPath(prog); err != nil {
			return false
		}
	}
	return exec.Command("unshare", "-rm", "true").Run() == nil
})

// Commands are the programs a golden run installs in $PATH: the test
// binary as "fsbox" and as "fsbox-NAME" for every command (never as a
// bare NAME, which would shadow testscript's own verbs such as grep), for
// testscript.Main. The binary runs fsbox with the MCP server built in, as
// fsbox-mcp has it, and --jq, as fsbox has it (TestLeanExecsMCP checks
// that fsbox hands `fsbox mcp` over to fsbox-mcp).
//
// testscript gives every command a pipe as stdin (empty unless the script
// said `stdin FILE`), and fsbox reads a pipe when a filter names no path
// (ripgrep's rule). So fsbox gets /dev/null, as an exec tool gives it,
// unless the script sets FSBOX_TEST_STDIN=1 to hand it the pipe.
func Commands() map[string]func() {
	run := func() {
		stdin := os.Stdin
		if os.Getenv("FSBOX_TEST_STDIN") == "" {
			if null, err := os.Open(os.DevNull); err == nil {
				stdin = null
			}
		}
		os.Exit(cli.MainMCP(os.Args, stdin, os.Stdout, os.Stderr, cli.Extras{Serve: mcpserver.Serve, JQ: jq.Compile}))
	}
	cmds := map[string]func(){"fsbox": run}
	for _, name := range cli.CommandNames() {
		cmds["fsbox-"+name] = run
	}
	return cmds
}
