// Package companion locates fsbox's own executable and the companion
// binary beside it (fsbox-mcp, the MCP server), and runs the companion in
// the process's place. It is command-layer plumbing: the sandbox neither finds nor runs
// programs.
//
// A companion runs before Landlock, with the caller's full rights, so it
// must be a program no sandboxed call could have written: fsbox never runs
// one whose lookup path or canonical path lies in a writable root of the
// policy in force (an ancestor there could be renamed, so "lies in" covers
// every ancestor), by canonical path or by identity (a writable root
// bind-mounted elsewhere is as writable there), and it runs the
// descriptor it checked, not the name again. The policy in force is the
// one before any narrowing: fsbox mcp DIR... bounds what the server
// reaches, never which roots a sandboxed call could have written.
//
// Its file accesses (resolving the running executable, opening and
// confirming the companion) do not pass the sandbox, and must not: they
// look at fsbox's own program files, which lie outside every root by
// requirement, before any sandbox is open and before Landlock. What they
// may touch is fixed by fsbox's install location, never by a call's
// arguments; the checks above refuse any file a sandboxed call could
// have written.
package companion

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/policy"
)

// MCP is the name fsbox looks its companion up by, beside its own
// executable: the MCP server's binary. It is fsbox's own file whether or
// not it exists, so that it cannot be planted.
const MCP = "fsbox-mcp"

// S3 is the name of the companion that serves object roots (fsbox with
// the S3 client linked in): fsbox and fsbox-mcp hand a call whose policy
// names an s3:// root over to it.
const S3 = "fsbox-s3"

// Names are the companions' lookup names.
var Names = []string{MCP, S3}

// Lean is the name of the fsbox binary, which a companion has beside it.
const Lean = "fsbox"

// Self is the canonical (absolute, symlink-free) path of the running
// executable: the target of the links `fsbox links` creates, and the
// directory the companion is looked up in. The executable does not move
// while the process runs, so it is found once.
func Self() (string, error) { return self() }

var self = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe) // fsbox's own program file: see the package comment
})

// Executables are fsbox's own executables, given the canonical path of
// the running one: itself, and the fsbox binary beside it (a companion
// runs in its place).
func Executables(self string) []string {
	out := []string{self}
	if lean := filepath.Join(filepath.Dir(self), Lean); lean != self {
		out = append(out, lean)
	}
	return out
}

// Lookups are the paths the companion is looked up by beside the running
// executable (canonical self path), whether or not anything is there.
func Lookups(self string) []string {
	out := make([]string, len(Names))
	for i, n := range Names {
		out[i] = filepath.Join(filepath.Dir(self), n)
	}
	return out
}

// MissingError: there is no executable companion to run.
type MissingError struct {
	Path string // the lookup path, or "" when the running binary is not found
	Err  error
}

func (e *MissingError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("where the running binary lies is unknown: %v", e.Err)
	}
	return fmt.Sprintf("%s is not an executable file", e.Path)
}

func (e *MissingError) Unwrap() error { return e.Err }

// WritableError: the companion, by its lookup path or its canonical path,
// lies in a writable root, so a sandboxed call could have written it.
type WritableError struct {
	Path string // the path that lies in Root
	Root string // the writable root (canonical)
}

func (e *WritableError) Error() string {
	return fmt.Sprintf("%s lies in the writable root %s", e.Path, e.Root)
}

// errMoved: the descriptor opened is not the file that was checked.
var errMoved = errors.New("the file changed between the check and the open")

// Exec replaces this process with the companion name found beside the
// running executable, with argv and env. writable are the canonical
// writable roots of the policy in force, every one of them (not only
// those a narrowing serves). It returns only on failure: a
// *MissingError when there is no executable file to run, a *WritableError
// when it lies in a writable root, another error when it cannot be opened
// or run.
func Exec(name string, writable []string, argv, env []string) error {
	s, err := Self()
	if err != nil {
		return &MissingError{Err: err}
	}
	return execBeside(s, name, writable, argv, env)
}

// execBeside is Exec for the executable at self (canonical).
func execBeside(self, name string, writable []string, argv, env []string) error {
	lookup := filepath.Join(filepath.Dir(self), name)
	// The lookup path first: a name in a writable root could be made a
	// symlink to any program on the machine.
	if err := outside(lookup, writable); err != nil {
		return err
	}
	canon, err := filepath.EvalSymlinks(lookup) // outside every root: checked just above and below
	if err != nil {
		return &MissingError{Path: lookup, Err: err}
	}
	if err := outside(canon, writable); err != nil {
		return err
	}
	return execChecked(lookup, canon, writable, argv, env)
}

// outside returns a *WritableError when p lies in (or is) one of roots,
// by path or by identity (outsideByID).
func outside(p string, roots []string) error {
	for _, r := range roots {
		if within(p, r) {
			return &WritableError{Path: p, Root: r}
		}
	}
	return outsideByID(p, roots)
}

// outsideByID returns a *WritableError when a directory p lies in is one
// of roots by identity (st_dev, st_ino), whatever its path: a writable
// root bind-mounted elsewhere (or a name that reaches one through a
// symlink) is as writable there.
func outsideByID(p string, roots []string) error {
	if r := policy.LiesInByID(p, roots); r != "" { // the policy's roots and fsbox's own program file: see the package comment
		return &WritableError{Path: p, Root: r}
	}
	return nil
}

// within reports whether p equals dir or lies below it, by whole path
// components. Where file names are usually case-insensitive (macOS,
// Windows) it ignores case: refusing too much is the safe side.
func within(p, dir string) bool {
	if p == "" || dir == "" {
		return false
	}
	fold := runtime.GOOS == "darwin" || runtime.GOOS == "windows" || runtime.GOOS == "ios"
	eq := func(a, b string) bool {
		if fold {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	if eq(p, dir) {
		return true
	}
	sep := string(filepath.Separator)
	if !strings.HasSuffix(dir, sep) {
		dir += sep
	}
	return len(p) > len(dir) && eq(p[:len(dir)], dir)
}
