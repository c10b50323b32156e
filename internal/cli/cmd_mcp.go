package cli

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/internal/companion"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Serve runs `fsbox mcp` once the policy is settled and the sandbox open
// (and restricted): it serves until its input ends or ctx is done. The
// fsbox binary has none: linking the MCP SDK would add its package
// initialisation (about 0.9 ms) to every call of every command, so fsbox
// runs fsbox-full instead (see Extras).
type Serve func(ctx context.Context, s *ServeSpec) error

// Extras are what the fsbox binary leaves out so that every call starts
// quickly: the MCP server and the jq filter, whose libraries' package
// inits alone cost about 0.9 ms and 0.3 ms at each start. fsbox-full
// (cmd/fsbox-full) is this CLI with them; a call that needs one, run
// without it, replaces its process with the fsbox-full beside the binary
// (Call.ExecFull), with the same arguments, before it has opened a root.
type Extras struct {
	Serve Serve // fsbox mcp
	JQ    JQ    // --jq
}

// FullBinary is the name of the binary with every extra.
const FullBinary = companion.Full

// ServeSpec is what a server gets.
type ServeSpec struct {
	Reg      *spec.Registry
	Sandbox  *sandbox.Sandbox // restricted; make a ForCall view per tool call
	Audit    *sandbox.AuditLog
	Version  string
	Profile  string // "native" or "reference"
	HTTP     string // a loopback host:port, or "" for stdio
	Token    string // FSBOX_MCP_TOKEN (needed with HTTP)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Landlock bool // whether the process was restricted
}

// runMCP serves the policy's enabled operations over MCP.
func runMCP(x *call) error {
	if x.policyErr != nil {
		return x.policyErr
	}
	dirs := x.in.Strings("dirs")
	for _, d := range dirs {
		if d == "" {
			return usageErr("fsbox mcp: an empty directory name")
		}
	}
	// The reference profile is a drop-in for the reference server, which
	// lets every directory it is given be written: the first is the
	// workdir, the rest write roots. The native one makes the rest read
	// roots, but those named by --write (and --write's own) writable.
	reference := x.in.String("profile") == "reference"
	write := x.in.Strings("write")
	if reference && len(write) > 0 {
		return usageErr("fsbox mcp: --write goes with the native profile (the reference profile makes every directory writable)")
	}
	named := map[string]bool{}
	for _, w := range write {
		if w == "" {
			return usageErr("fsbox mcp: an empty directory name")
		}
		named[filepath.Clean(w)] = true
	}
	all := slices.Clone(dirs)
	for _, w := range write {
		if !slices.ContainsFunc(all, func(d string) bool { return filepath.Clean(d) == filepath.Clean(w) }) {
			all = append(all, w)
		}
	}
	p, err := sandbox.ServeDirs(x.policy, all, func(i int) bool { return reference || named[filepath.Clean(all[i])] })
	if err != nil {
		return err
	}
	addr := x.in.String("http")
	token, _ := x.getenv("FSBOX_MCP_TOKEN")
	if addr != "" {
		if err := checkHTTPAddr(addr); err != nil {
			return err
		}
		if len(token) < 16 {
			return sandbox.Errorf(sandbox.CodeConfig, "", "fsbox mcp --http needs a bearer token of at least 16 characters in FSBOX_MCP_TOKEN, which every request must carry")
		}
	}
	if x.serve == nil {
		return x.needsFull("fsbox mcp", p, nil)
	}
	home, _ := os.UserHomeDir()
	sb, err := sandbox.New(p, home)
	if err != nil {
		return err
	}
	defer sb.Close()
	protectOwn(sb)
	if x.landlock {
		if err := sb.Restrict(); err != nil {
			return err
		}
	}
	return x.serve(x.cx, &ServeSpec{
		Reg: x.reg, Sandbox: sb, Audit: x.audit, Version: VersionLine(), Profile: x.in.String("profile"),
		HTTP: addr, Token: token, Stdin: x.stdin, Stdout: x.stdout, Stderr: x.stderr, Landlock: x.landlock,
	})
}

// execFull replaces this process with the fsbox-full beside the running
// binary, with the same (normalised) arguments: it loads the same policy
// from them. Nothing has been opened yet that it would keep (descriptors
// are close-on-exec), and Landlock is not applied yet, so the companion
// runs with the caller's full rights: it is never one that lies in a
// writable root of the policy in force (writable, canonical), where a
// sandboxed call could have written it, and the descriptor checked is
// the one run (package companion).
func execFull(argv []string, what string, writable []string) error {
	err := companion.Exec(FullBinary, writable, argv, os.Environ())
	var missing *companion.MissingError
	var inRoot *companion.WritableError
	switch {
	case errors.As(err, &missing):
		return sandbox.Errorf(sandbox.CodeConfig, missing.Path, "%s runs %s, which is not installed beside fsbox (%v): make install puts both there; with go install, install github.com/fsbox/fsbox/cmd/%s too", what, FullBinary, missing, FullBinary)
	case errors.As(err, &inRoot):
		return sandbox.Errorf(sandbox.CodeDenied, inRoot.Path, "%s runs %s, which lies in the writable root %s, where a sandboxed call could have written it: fsbox never runs it from there; install fsbox outside every writable root", what, FullBinary, inRoot.Root)
	case err != nil:
		return sandbox.Errorf(sandbox.CodeIO, "", "running %s: %v", FullBinary, err)
	}
	return nil
}

// needsFull is the answer of a call that needs an extra this binary does
// not have: fsbox-full (Main), or a config error (a library caller). p is
// the policy in force and perr its error: with no policy there are no
// writable roots to keep the companion out of, so nothing runs.
func (x *call) needsFull(what string, p *sandbox.Policy, perr error) error {
	if !x.execFull {
		return sandbox.Errorf(sandbox.CodeConfig, "", "%s is not built into this program (it is in %s)", what, FullBinary)
	}
	if perr != nil {
		return perr
	}
	if p == nil {
		return sandbox.Errorf(sandbox.CodeConfig, "", "%s runs %s, but no policy is in force", what, FullBinary)
	}
	return execFull(x.argv, what, p.WritableDirs())
}

// protectOwn makes fsbox's own executables and the companion's lookup
// names (existing or not, so that none can be planted) files no change
// through sb may write, rename or remove. Every sandbox the command layer
// opens gets them.
func protectOwn(sb *sandbox.Sandbox) {
	self, err := companion.Self()
	if err != nil {
		return // no executable to protect, and no companion runs (Exec needs it too)
	}
	sb.Protect("fsbox's own executable", companion.Executables(self)...)
	sb.Protect("the name fsbox runs its companion by", companion.Lookups(self)...)
}

// checkHTTPAddr accepts host:port with a loopback host (an IP literal or
// "localhost"): the server is for a host on the same machine.
func checkHTTPAddr(addr string) error {
	host, port, ok := splitHostPort(addr)
	if !ok || port == "" {
		return usageErr("--http takes HOST:PORT, got %q", addr)
	}
	if !isLoopback(host) {
		return usageErr("--http serves loopback addresses only (127.0.0.1, ::1, localhost), got %q", host)
	}
	return nil
}

// splitHostPort splits "host:port" or "[v6]:port".
func splitHostPort(addr string) (host, port string, ok bool) {
	if strings.HasPrefix(addr, "[") {
		end := strings.Index(addr, "]:")
		if end < 0 {
			return "", "", false
		}
		return addr[1:end], addr[end+2:], true
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || strings.Contains(addr[:i], ":") {
		return "", "", false
	}
	return addr[:i], addr[i+1:], true
}

// isLoopback: localhost, or an IP literal in 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}
