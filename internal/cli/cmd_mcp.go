package cli

import (
	"context"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
const FullBinary = "fsbox-full"

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

func init() {
	runners["mcp"] = func(x *call) error {
		if x.policyErr != nil {
			return x.policyErr
		}
		dirs := x.in.Strings("dirs")
		for _, d := range dirs {
			if d == "" {
				return usageErr("fsbox mcp: an empty directory name")
			}
		}
		p, err := mcpPolicy(x.policy, dirs)
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
			return x.needsFull("fsbox mcp")
		}
		home, _ := os.UserHomeDir()
		sb, err := sandbox.New(p, home)
		if err != nil {
			return err
		}
		defer sb.Close()
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
}

// execFull replaces this process with the fsbox-full beside the running
// binary, with the same (normalised) arguments: it loads the same policy
// from them. Nothing has been opened yet that it would keep (descriptors
// are close-on-exec), and Landlock is not applied yet.
func execFull(argv []string, what string) error {
	// Outside the sandbox on purpose: this finds fsbox's own program
	// file, not data a call reads; no root is open yet.
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return sandbox.Errorf(sandbox.CodeConfig, "", "%s runs %s, but where the fsbox binary lies is unknown: %v", what, FullBinary, err)
	}
	bin := filepath.Join(filepath.Dir(self), FullBinary)
	fi, err := os.Stat(bin)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return sandbox.Errorf(sandbox.CodeConfig, bin, "%s runs %s, which is not installed beside fsbox (%s): make install puts both there; with go install, install github.com/fsbox/fsbox/cmd/%s too", what, FullBinary, bin, FullBinary)
	}
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		return sandbox.Errorf(sandbox.CodeIO, bin, "running %s: %v", bin, err)
	}
	return nil
}

// needsFull is the answer of a call that needs an extra this binary does
// not have: fsbox-full (Main), or a config error (a library caller).
func (x *call) needsFull(what string) error {
	if x.execFull {
		return execFull(x.argv, what)
	}
	return sandbox.Errorf(sandbox.CodeConfig, "", "%s is not built into this program (it is in %s)", what, FullBinary)
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

// mcpPolicy is the policy `fsbox mcp` serves: never the built-in default
// (a desktop host may start servers in /, which would make / writable).
// It takes FSBOX_CONFIG or --config, or directories as the reference
// server takes them: the first is the workdir, the rest read roots, the
// rest of the policy as the built-in default. With a policy file, the
// directories only narrow it: each must lie inside the policy's roots.
//
// The directories are configuration, resolved as Load resolves a policy's
// roots (outside the sandbox, which they go on to define).
func mcpPolicy(p *sandbox.Policy, dirs []string) (*sandbox.Policy, error) {
	if p == nil {
		return nil, sandbox.Errorf(sandbox.CodeConfig, "", "no policy")
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		a, err := filepath.Abs(d)
		if err == nil {
			a, err = filepath.EvalSymlinks(a)
		}
		if err != nil {
			return nil, sandbox.Errorf(sandbox.CodeConfig, d, "%s: %v", d, err)
		}
		if fi, err := os.Stat(a); err != nil || !fi.IsDir() {
			return nil, sandbox.Errorf(sandbox.CodeConfig, d, "%s is not a directory", d)
		}
		abs[i] = a
	}
	if p.Source == "" && len(abs) == 0 {
		return nil, sandbox.Errorf(sandbox.CodeConfig, "", "fsbox mcp does not serve the built-in default policy (a host may start it in /): set FSBOX_CONFIG, give --config, or name the directories to serve (fsbox mcp WORKDIR [READ_ROOT...])")
	}
	if len(abs) == 0 {
		return p, nil
	}
	if p.Source == "" {
		q := sandbox.DefaultPolicy(abs[0])
		q.ReadRoots = abs[1:]
		return q, nil
	}
	inside := func(d string, roots ...string) bool {
		for _, r := range roots {
			if real, err := filepath.EvalSymlinks(r); err == nil {
				if rel, err := filepath.Rel(real, d); err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../") {
					return true
				}
			}
		}
		return false
	}
	q := *p
	if !inside(abs[0], p.Workdir) {
		return nil, sandbox.Errorf(sandbox.CodeConfig, dirs[0], "%s is not inside the policy's workdir %s: directories only narrow a policy", dirs[0], p.Workdir)
	}
	q.Workdir = abs[0]
	q.ReadRoots = nil
	for i, d := range abs[1:] {
		if !inside(d, append([]string{p.Workdir}, p.ReadRoots...)...) {
			return nil, sandbox.Errorf(sandbox.CodeConfig, dirs[i+1], "%s is not inside the policy's roots: directories only narrow a policy", dirs[i+1])
		}
		q.ReadRoots = append(q.ReadRoots, d)
	}
	return &q, nil
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
