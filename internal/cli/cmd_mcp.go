package cli

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/internal/companion"
	"github.com/fsbox/fsbox/internal/tool"
	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Serve runs `fsbox mcp` once the policy is settled and the sandbox open
// (and restricted): it serves until its input ends or ctx is done. The
// fsbox binary has none: linking the MCP SDK would add its package
// initialisation (about 0.9 ms) to every call of every command, so fsbox
// runs fsbox-mcp instead (see Extras).
type Serve func(ctx context.Context, s *tool.ServeSpec) error

// Extras are what the fsbox binary leaves out so that every call starts
// quickly: the MCP server, whose SDK's package inits alone cost about
// 0.9 ms at each start. fsbox-mcp (cmd/fsbox-mcp) is this CLI with it; an
// `fsbox mcp` run without it replaces its process with the fsbox-mcp
// beside the binary (Call.ExecMCP), with the same arguments, before it
// has opened a root. (gojq, for --jq, is linked in: the second process
// start a companion took costs more, and internal/jq/gojq builds its
// builtins when --jq compiles a program, not at each start.)
type Extras struct {
	Serve Serve // fsbox mcp
	// JQ compiles --jq's program (internal/jq, gojq): linked into fsbox
	// only, so fsbox-mcp does not pay gojq's start-up; without it --jq
	// is refused.
	JQ JQCompiler
}

// JQCompiler compiles a jq program; its outputs for an input come one at
// a time from Next, an error being an output too. The program runs under
// the context it is given: once that is done, Next gives its error.
type JQCompiler func(program string) (func(ctx context.Context, input any) interface{ Next() (any, bool) }, error)

// MCPBinary is the name of the MCP server's binary, beside fsbox.
const MCPBinary = companion.MCP

// runMCP serves the policy's enabled operations over MCP.
func runMCP(x *call) error {
	if x.policyErr != nil {
		return x.policyErr
	}
	p, err := servedPolicy(x)
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
			return fserr.Errorf(fserr.CodeConfig, "", "fsbox mcp --http needs a bearer token of at least 16 characters in FSBOX_MCP_TOKEN, which every request must carry")
		}
	}
	if x.serve == nil {
		return x.needsMCP(p)
	}
	if err := needsS3(p, x.execS3, x.argv); err != nil {
		return err
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
	return x.serve(x.cx, &tool.ServeSpec{
		Reg: x.reg, Sandbox: sb, Audit: x.audit, Version: VersionLine(), Profile: x.in.String("profile"),
		HTTP: addr, Token: token, Stdin: x.stdin, Stdout: x.stdout, Stderr: x.stderr, Landlock: x.landlock,
	})
}

// servedPolicy is the policy `fsbox mcp` serves: the call's, narrowed to
// the directories it names (DIR... and --write's) as the profile says.
func servedPolicy(x *call) (*policy.Policy, error) {
	dirs := x.in.Strings("dirs")
	for _, d := range dirs {
		if d == "" {
			return nil, usageErr("fsbox mcp: an empty directory name")
		}
	}
	// The reference profile is a drop-in for the reference server, which
	// lets every directory it is given be written: the first is the
	// workdir, the rest write roots. The native one makes the rest read
	// roots, but those named by --write (and --write's own) writable.
	reference := x.in.String("profile") == "reference"
	write := x.in.Strings("write")
	if reference && len(write) > 0 {
		return nil, usageErr("fsbox mcp: --write goes with the native profile (the reference profile makes every directory writable)")
	}
	named := map[string]bool{}
	for _, w := range write {
		if w == "" {
			return nil, usageErr("fsbox mcp: an empty directory name")
		}
		named[filepath.Clean(w)] = true
	}
	all := slices.Clone(dirs)
	for _, w := range write {
		if !slices.ContainsFunc(all, func(d string) bool { return filepath.Clean(d) == filepath.Clean(w) }) {
			all = append(all, w)
		}
	}
	p, err := policy.ServeDirs(x.policy, all, func(i int) bool { return reference || named[filepath.Clean(all[i])] })
	if err != nil {
		return nil, err
	}
	if x.policy.Source == "" {
		// fsbox-mcp without a policy serves the agent preset: the CLI
		// fills nothing by face, the MCP server does (SPEC §4).
		p = policy.AgentServed(p)
	}
	if reference {
		// The reference profile never requires preconditions: the
		// preset's requirement is dropped, a policy's own is config.
		return policy.ForReferenceProfile(p)
	}
	return p, nil
}

// execMCP replaces this process with the fsbox-mcp beside the running
// binary, with the same (normalised) arguments: argv[0] fsbox, so it runs
// the same call and loads the same policy from them. Nothing has been
// opened yet that it would keep (descriptors are close-on-exec), and
// Landlock is not applied yet, so the companion runs with the caller's
// full rights: it is never one that lies in a writable root of the policy
// in force (writable, canonical), where a sandboxed call could have
// written it, and the descriptor checked is the one run (package
// companion).
func execMCP(argv []string, writable []string) error {
	return execCompanion("fsbox mcp", MCPBinary, argv, writable)
}

// execCompanion replaces this process with the companion name (MCPBinary,
// S3Binary) beside the running binary, as execMCP says; what names the
// call that needs it, for the errors.
func execCompanion(what, name string, argv []string, writable []string) error {
	err := companion.Exec(name, writable, argv, os.Environ())
	var missing *companion.MissingError
	var inRoot *companion.WritableError
	switch {
	case errors.As(err, &missing):
		return fserr.Errorf(fserr.CodeConfig, missing.Path, "%s runs %s, which is not installed beside fsbox (%v): make install puts it there, as does go install github.com/fsbox/fsbox/cmd/...", what, name, missing)
	case errors.As(err, &inRoot):
		return fserr.Errorf(fserr.CodeDenied, inRoot.Path, "%s runs %s, which lies in the writable root %s, where a sandboxed call could have written it: fsbox never runs it from there; install fsbox outside every writable root", what, name, inRoot.Root)
	case err != nil:
		return fserr.Errorf(fserr.CodeIO, "", "running %s: %v", name, err)
	}
	return nil
}

// S3Binary is the name of the binary that serves object roots, beside
// fsbox: fsbox with the S3 client linked in (cmd/fsbox-s3), which fsbox
// itself does not link, so that no local call pays the client's start.
const S3Binary = companion.S3

// needsS3 hands a call whose policy p names an object root over to
// fsbox-s3, when this binary cannot open one (sandbox.ObjectStoresLinked):
// in the binary's entry (Call.ExecMCP) it replaces the process, as
// execMCP does; a library caller gets a config error. nil: this binary
// serves object roots itself, or p names none.
func needsS3(p *policy.Policy, entry bool, argv []string) error {
	if p == nil || !p.HasObjectRoot() || sandbox.ObjectStoresLinked() {
		return nil
	}
	if !entry {
		return fserr.Errorf(fserr.CodeConfig, "", "the policy names an object root (s3://), which %s serves, and this program cannot run it", S3Binary)
	}
	return execCompanion("a policy with an s3:// root", S3Binary, argv, p.WritableDirs())
}

// needsMCP is the answer of `fsbox mcp` in a binary without the server:
// fsbox-mcp (Main), or a config error (a library caller). p is the policy
// in force: with no policy there are no writable roots to keep the
// companion out of, so nothing runs.
func (x *call) needsMCP(p *policy.Policy) error {
	if !x.execMCP {
		return fserr.Errorf(fserr.CodeConfig, "", "fsbox mcp is not built into this program (it is %s)", MCPBinary)
	}
	if p == nil {
		return fserr.Errorf(fserr.CodeConfig, "", "fsbox mcp runs %s, but no policy is in force", MCPBinary)
	}
	return execMCP(x.argv, p.WritableDirs())
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
