//go:build unix

package main

// The MCP rows: `fsbox mcp WORKDIR` (which execs fsbox-mcp, beside the
// fsbox binary) driven over its stdin and stdout by a small JSON-RPC 2.0
// client of the harness's own (newline-delimited messages, request ids,
// lines read until the reply with that id); the MCP SDK stays out of the
// harness. The rows:
//
//	mcp-startup       process start to the initialize reply, median of 9 fresh starts (target < 20 ms)
//	mcp-stat … mcp-edit  one session, 5 warm-up calls then 200 timed calls each, sequential:
//	                  the round trip per call, median and p90 (target: <= 0.5× the peer's median)
//	mcp-rss-idle      VmRSS right after initialize (target < 30 MiB)
//	mcp-rss-1000      VmRSS after 1,000 mixed calls in a fresh session (target < 60 MiB)
//
// The peer is the reference MCP filesystem server,
// @modelcontextprotocol/server-filesystem at mcpPeerVersion (the release
// the targets were set against; the nearest earlier one if the registry
// lacks it, said in the output), installed once with `npm install --prefix
// DATA/mcp-peer` and reused after, and run as `node ENTRY WORKDIR` (ENTRY:
// the package's bin, dist/index.js) the same way, with its own tool names
// and absolute paths. Without node or npm, or when npm cannot install it,
// the rows time fsbox alone and say why the peer was skipped.
//
// With -baseline, a server of the baseline binary runs beside fsbox's, in
// sessions open at the same time: their starts and calls alternate, one
// for one, each editing a file of its own; the peer is left out unless
// -baseline-only=false.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The MCP data: one directory, the server's workdir.
const (
	dirMCP      = "mcp-work"
	mcpText     = "text-10KiB.txt" // 10 KiB of prose, for stat and read
	mcpLog      = "log-50MiB.log"  // 50 MiB of log lines, paged by the mixed calls
	mcpTree     = "go"             // copies of Go's src/strings, src/bufio and src/encoding/json
	mcpLsDir    = "go/strings"     // about 18 entries
	mcpEditFile = "edit.txt"       // rewritten by the harness before each session
	mcpEditBase = "edit-base.txt"  // the same, for the -baseline server
	mcpPeerPkg  = "@modelcontextprotocol/server-filesystem"
	mcpPeerVer  = "2026.8.31"
	dirMCPPeer  = "mcp-peer" // npm's prefix for the peer, in the data directory
)

var mcpGoDirs = []string{"strings", "bufio", "encoding/json"}

// mcpRowNames are the MCP rows, in report order; -only selects among them.
var mcpRowNames = []string{"mcp-startup", "mcp-stat", "mcp-read-10KiB", "mcp-ls", "mcp-find-go", "mcp-edit", "mcp-rss-idle", "mcp-rss-1000"}

const (
	mcpStarts      = 9
	mcpWarmups     = 5
	mcpCalls       = 200
	mcpMixedCalls  = 1000
	mcpStartTarget = 20       // ms
	mcpRatioTarget = 0.5      // × the peer's median
	mcpIdleRSS     = 30 << 10 // KiB
	mcpBusyRSS     = 60 << 10 // KiB
)

// genMCP makes the MCP workdir: the three Go package trees, the 10 KiB
// text and the 50 MiB log (deterministic: genText's and genLog's
// generators, and the sources of the Go that built this program).
func genMCP(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	for _, d := range mcpGoDirs {
		dst := filepath.Join(path, mcpTree, d)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return 0, err
		}
		if out, err := exec.Command("cp", "-r", filepath.Join(runtime.GOROOT(), "src", d), dst).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("copying src/%s: %v: %s", d, err, out)
		}
	}
	if _, err := genText(filepath.Join(path, mcpText), 10<<10); err != nil {
		return 0, err
	}
	return genLog(filepath.Join(path, mcpLog), 50<<20)
}

// mcpSelected is the MCP rows -only selects.
func mcpSelected(cfg config) []string {
	var names []string
	for _, n := range mcpRowNames {
		if cfg.only == nil || cfg.only.MatchString(n) {
			names = append(names, n)
		}
	}
	return names
}

// ---------------------------------------------------------------------------
// A minimal JSON-RPC 2.0 client over a server's stdin and stdout.

type rpcServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	start  time.Time
	nextID int64
	watch  *time.Timer   // kills the process group when a call outlives the timeout
	limit  time.Duration // 0: no watchdog
	closed bool
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startServer starts argv in dir, in a process group of its own, with
// pipes for stdin and stdout; start is the moment before the fork.
func startServer(path string, argv []string, dir string, env []string, limit time.Duration) (*rpcServer, error) {
	s := &rpcServer{stderr: &bytes.Buffer{}, limit: limit}
	s.cmd = &exec.Cmd{Path: path, Args: argv, Dir: dir, Env: env, Stderr: s.stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewReaderSize(out, 1<<20)
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if limit > 0 {
		s.watch = time.AfterFunc(limit, s.kill)
	}
	return s, nil
}

func (s *rpcServer) kill() { syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }

// close closes the server's stdin and waits a moment for it to exit, then
// kills its process group. Once is enough: later calls do nothing.
func (s *rpcServer) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.watch != nil {
		s.watch.Stop()
	}
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		s.kill()
		<-done
	}
	s.kill() // children that outlived their parent
}

// send writes one message.
func (s *rpcServer) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// call sends a request and reads lines until the reply with its id: it
// skips notifications and answers a request from the server (roots/list,
// ping) with an empty result or method-not-found.
func (s *rpcServer) call(method string, params any) (json.RawMessage, error) {
	if s.watch != nil {
		s.watch.Reset(s.limit)
	}
	s.nextID++
	id := strconv.FormatInt(s.nextID, 10)
	if err := s.send(map[string]any{"id": s.nextID, "method": method, "params": params}); err != nil {
		return nil, s.failed(method, err)
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, s.failed(method, err)
		}
		var m rpcMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: a line that is no JSON-RPC message: %q", method, head(line))
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request from the server
			reply := map[string]any{"id": m.ID}
			if m.Method == "ping" || m.Method == "roots/list" {
				reply["result"] = map[string]any{}
				if m.Method == "roots/list" {
					reply["result"] = map[string]any{"roots": []any{}}
				}
			} else {
				reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
			}
			if err := s.send(reply); err != nil {
				return nil, s.failed(method, err)
			}
		case m.Method != "": // a notification
		case string(m.ID) == id:
			if m.Error != nil {
				return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		}
	}
}

// failed is a call's error when the pipe broke: the first line the server
// wrote on stderr says why, as a rule. It ends the server, so that its
// stderr is complete.
func (s *rpcServer) failed(method string, err error) error {
	s.close()
	msg, _, _ := strings.Cut(strings.TrimSpace(s.stderr.String()), "\n")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg != "" {
		return fmt.Errorf("%s: %v: %s", method, err, msg)
	}
	return fmt.Errorf("%s: %v", method, err)
}

// initialize runs the handshake's first half and returns when the reply is in.
func (s *rpcServer) initialize() error {
	_, err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "fsbox-bench", "version": "1"},
	})
	return err
}

func (s *rpcServer) initialized() error {
	return s.send(map[string]any{"method": "notifications/initialized"})
}

// tool calls a tool and fails on an isError result.
func (s *rpcServer) tool(name string, args map[string]any) error {
	res, err := s.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return fmt.Errorf("%s: tool error: %s", name, string(head([]byte(msg))))
	}
	return nil
}

// tools lists the server's tool names.
func (s *rpcServer) tools() (map[string]bool, error) {
	res, err := s.call("tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, t := range r.Tools {
		names[t.Name] = true
	}
	return names, nil
}

// ---------------------------------------------------------------------------
// The two servers.

// mcpOp is one timed operation: the tool call for call number i.
type mcpOp struct {
	row  string
	args func(i int) (tool string, args map[string]any)
}

// mcpSide is one server: how to start it and its calls.
type mcpSide struct {
	path string
	argv []string
	env  []string
	ops  []mcpOp
	edit string // the file its edit calls change, in the workdir (each side has its own)
	// mixed is an extra call for the 1,000 mixed calls (fsbox: a page of
	// the 50 MiB log); nil for none.
	mixed func(i int) (string, map[string]any)
}

func fsboxMCPSide(fsbox, work string, env []string, edit string) mcpSide {
	return mcpSide{
		path: fsbox, argv: []string{fsbox, "mcp", work}, env: env, edit: edit,
		ops: []mcpOp{
			{"mcp-stat", func(int) (string, map[string]any) { return "fsbox_stat", map[string]any{"path": mcpText} }},
			{"mcp-read-10KiB", func(int) (string, map[string]any) { return "fsbox_read", map[string]any{"path": mcpText} }},
			{"mcp-ls", func(int) (string, map[string]any) { return "fsbox_ls", map[string]any{"path": mcpLsDir} }},
			{"mcp-find-go", func(int) (string, map[string]any) {
				return "fsbox_find", map[string]any{"dir": mcpTree, "glob": "**/*.go"}
			}},
			{"mcp-edit", func(i int) (string, map[string]any) {
				old, new := editPair(i)
				return "fsbox_edit", map[string]any{"path": edit, "old": old, "new": new}
			}},
		},
		mixed: func(i int) (string, map[string]any) {
			return "fsbox_read", map[string]any{"path": mcpLog, "offset": (i * 7919) % 300_000, "limit": 20}
		},
	}
}

// peerMCPSide is the reference server, with its tool names (read_text_file
// in current releases, read_file in older ones) and absolute paths, which
// it wants.
func peerMCPSide(peer *mcpPeerInstall, work string, names map[string]bool) mcpSide {
	read := "read_text_file"
	if !names[read] {
		read = "read_file"
	}
	abs := func(p string) string { return filepath.Join(work, p) }
	return mcpSide{
		path: peer.node, argv: peer.argv(work), env: os.Environ(), edit: mcpEditFile,
		ops: []mcpOp{
			{"mcp-stat", func(int) (string, map[string]any) { return "get_file_info", map[string]any{"path": abs(mcpText)} }},
			{"mcp-read-10KiB", func(int) (string, map[string]any) { return read, map[string]any{"path": abs(mcpText)} }},
			{"mcp-ls", func(int) (string, map[string]any) { return "list_directory", map[string]any{"path": abs(mcpLsDir)} }},
			{"mcp-find-go", func(int) (string, map[string]any) {
				return "search_files", map[string]any{"path": abs(mcpTree), "pattern": "**/*.go"}
			}},
			{"mcp-edit", func(i int) (string, map[string]any) {
				old, new := editPair(i)
				return "edit_file", map[string]any{"path": abs(mcpEditFile), "edits": []any{map[string]any{"oldText": old, "newText": new}}}
			}},
		},
	}
}

// editPair is call i's replacement: the two alternate, so every call
// changes the file (and its size stays the same).
func editPair(i int) (old, new string) {
	if i%2 == 0 {
		return "EDIT_MARKER_ALPHA", "EDIT_MARKER_OMEGA"
	}
	return "EDIT_MARKER_OMEGA", "EDIT_MARKER_ALPHA"
}

// resetEditFile writes an edit target (name, in the workdir) afresh: the
// 10 KiB text with EDIT_MARKER_ALPHA once, in the middle.
func resetEditFile(work, name string) error {
	b, err := os.ReadFile(filepath.Join(work, mcpText))
	if err != nil {
		return err
	}
	mid := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
	text := slices.Concat(b[:mid], []byte("EDIT_MARKER_ALPHA\n"), b[mid:])
	return os.WriteFile(filepath.Join(work, name), text, 0o644)
}

// mcpResult is one side's figures.
type mcpResult struct {
	startup []sample
	calls   map[string][]sample
	idleKiB int64 // VmRSS after initialize
	busyKiB int64 // VmRSS after the mixed calls
	busyHWM int64
	mixed   []sample
	hwm     map[string]int64 // the session's VmHWM after each row's calls
}

// runMCPSides measures the servers side by side: fresh starts, then one
// session each of warm calls, then one each of mixed calls. With more than
// one side, their starts and calls alternate (each side has its sessions
// open at once, and the sides take turns going first), so that the
// machine's noise falls on all alike.
func runMCPSides(sides []mcpSide, work string, limit time.Duration, want map[string]bool) ([]*mcpResult, error) {
	rs := make([]*mcpResult, len(sides))
	for j := range rs {
		rs[j] = &mcpResult{calls: map[string][]sample{}, hwm: map[string]int64{}}
	}
	start := func(side mcpSide) (*rpcServer, error) {
		s, err := startServer(side.path, side.argv, work, side.env, limit)
		if err != nil {
			return nil, err
		}
		if err := s.initialize(); err != nil {
			s.close()
			return nil, err
		}
		return s, nil
	}
	// order is the sides' order in round i.
	order := func(i int) []int {
		o := make([]int, len(sides))
		for j := range o {
			o[j] = (i + j) % len(sides)
		}
		return o
	}
	// sessions starts a session of every side, its edit file written afresh.
	sessions := func() ([]*rpcServer, error) {
		ss := make([]*rpcServer, len(sides))
		for j, side := range sides {
			err := resetEditFile(work, side.edit)
			if err == nil {
				ss[j], err = start(side)
			}
			if err == nil {
				if err = ss[j].initialized(); err != nil {
					ss[j].close()
				}
			}
			if err != nil {
				for _, s := range ss[:j] {
					s.close()
				}
				return nil, err
			}
		}
		return ss, nil
	}
	closeAll := func(ss []*rpcServer) {
		for _, s := range ss {
			s.close()
		}
	}

	// Start-up, and the idle RSS (of the first start, after a moment's rest).
	starts := mcpStarts
	if !want["mcp-startup"] {
		starts = 1
	}
	for i := range starts {
		for _, j := range order(i) {
			s, err := start(sides[j])
			if err != nil {
				return nil, err
			}
			rs[j].startup = append(rs[j].startup, sample{wall: time.Since(s.start)})
			if i == 0 {
				if err := s.initialized(); err != nil {
					s.close()
					return nil, err
				}
				time.Sleep(100 * time.Millisecond)
				rs[j].idleKiB = vmRSSKiB(s.cmd.Process.Pid)
			}
			s.close()
		}
	}

	// Warm calls. Every side has the same rows, in the same order.
	ss, err := sessions()
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	for k, op := range sides[0].ops {
		if !want[op.row] {
			continue
		}
		for i := range mcpWarmups + mcpCalls {
			for _, j := range order(i) {
				tool, args := sides[j].ops[k].args(i)
				t0 := time.Now()
				if err := ss[j].tool(tool, args); err != nil {
					return nil, fmt.Errorf("%s: %w", op.row, err)
				}
				if i >= mcpWarmups {
					rs[j].calls[op.row] = append(rs[j].calls[op.row], sample{wall: time.Since(t0)})
				}
			}
		}
		for j, s := range ss {
			rs[j].hwm[op.row] = procStatusKiB(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid), "VmHWM:")
		}
	}
	closeAll(ss)

	// Mixed calls, in fresh sessions.
	if !want["mcp-rss-1000"] {
		return rs, nil
	}
	mixed, err := sessions()
	if err != nil {
		return nil, err
	}
	defer closeAll(mixed)
	for i := range mcpMixedCalls {
		for _, j := range order(i) {
			side := sides[j]
			kinds := len(side.ops)
			if side.mixed != nil {
				kinds++
			}
			k := i % kinds
			var tool string
			var args map[string]any
			if k < len(side.ops) {
				tool, args = side.ops[k].args(i / kinds)
			} else {
				tool, args = side.mixed(i / kinds)
			}
			t0 := time.Now()
			if err := mixed[j].tool(tool, args); err != nil {
				return nil, fmt.Errorf("mixed call %d: %w", i, err)
			}
			rs[j].mixed = append(rs[j].mixed, sample{wall: time.Since(t0)})
		}
	}
	for j, m := range mixed {
		pid := m.cmd.Process.Pid
		rs[j].busyKiB = vmRSSKiB(pid)
		rs[j].busyHWM = procStatusKiB(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:")
	}
	return rs, nil
}

// mcpPeerInstall is the installed peer.
type mcpPeerInstall struct {
	node    string // node's path
	entry   string // the package's bin script
	version string // the installed version
	note    string // "": mcpPeerVer; else why another
}

func (p *mcpPeerInstall) argv(work string) []string { return []string{"node", p.entry, work} }

// mcpPeer installs the peer into DATA/mcp-peer unless it is there already,
// or says why it is skipped.
func mcpPeer(dir string) (*mcpPeerInstall, string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "skipped: node not installed"
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, "skipped: npm not installed"
	}
	prefix := filepath.Join(dir, dirMCPPeer)
	p := &mcpPeerInstall{node: node}
	installed := func() (string, string) {
		b, err := os.ReadFile(filepath.Join(prefix, "node_modules", mcpPeerPkg, "package.json"))
		if err != nil {
			return "", ""
		}
		var pj struct {
			Version string          `json:"version"`
			Bin     json.RawMessage `json:"bin"`
		}
		if json.Unmarshal(b, &pj) != nil {
			return "", ""
		}
		var bin string
		var bins map[string]string
		if json.Unmarshal(pj.Bin, &bin) != nil && json.Unmarshal(pj.Bin, &bins) == nil {
			bin = bins["mcp-server-filesystem"]
			if bin == "" {
				for _, v := range bins {
					bin = v
				}
			}
		}
		if bin == "" {
			return "", ""
		}
		return pj.Version, filepath.Join(prefix, "node_modules", mcpPeerPkg, bin)
	}
	npmRun := func(args ...string) ([]byte, error) {
		cmd := exec.Command(npm, args...)
		cmd.Dir = prefix
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("npm %s: %v: %s", args[0], err, firstLine(strings.TrimSpace(stderr.String())))
		}
		return out, nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return nil, "skipped: " + err.Error()
	}

	want := mcpPeerVer
	if v, entry := installed(); v != mcpPeerVer {
		// Not installed, or another version: the registry's versions.
		out, err := npmRun("view", mcpPeerPkg, "versions", "--json")
		if err != nil {
			if entry == "" {
				return nil, "skipped: " + err.Error()
			}
			want = v // offline: what is there
		} else {
			var vs []string
			if err := json.Unmarshal(out, &vs); err != nil {
				return nil, "skipped: npm view: " + err.Error()
			}
			if want = nearestVersion(vs, mcpPeerVer); want == "" {
				return nil, fmt.Sprintf("skipped: %s has no release at or before %s", mcpPeerPkg, mcpPeerVer)
			}
		}
		if v != want {
			progress("== mcp: npm install --prefix %s %s@%s", prefix, mcpPeerPkg, want)
			if _, err := npmRun("install", "--prefix", prefix, "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", mcpPeerPkg+"@"+want); err != nil {
				return nil, "skipped: " + err.Error()
			}
		}
	}
	p.version, p.entry = installed()
	if p.entry == "" {
		return nil, "skipped: " + mcpPeerPkg + " has no bin script after npm install"
	}
	if p.version != mcpPeerVer {
		p.note = fmt.Sprintf("%s %s is not to be had: the nearest earlier release, %s", mcpPeerPkg, mcpPeerVer, p.version)
	}
	return p, ""
}

// nearestVersion is want if vs has it, else the newest of vs before it
// (dotted numbers compared field by field; pre-releases left out); "" if none.
func nearestVersion(vs []string, want string) string {
	parse := func(v string) []int {
		var n []int
		for f := range strings.SplitSeq(v, ".") {
			i, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			n = append(n, i)
		}
		return n
	}
	w := parse(want)
	best, bestN := "", []int(nil)
	for _, v := range vs {
		n := parse(v)
		if n == nil || slices.Compare(n, w) > 0 {
			continue
		}
		if bestN == nil || slices.Compare(n, bestN) > 0 {
			best, bestN = v, n
		}
	}
	return best
}

// benchMCP measures the selected MCP rows.
func benchMCP(cfg config, dir, fsbox string, fsboxEnv []string, rows []string) []result {
	want := map[string]bool{}
	for _, n := range rows {
		want[n] = true
	}
	work := filepath.Join(dir, dirMCP)
	peerArgv := []string{"node", filepath.Join("DATA", dirMCPPeer, "node_modules", mcpPeerPkg, "dist/index.js"), work}
	results := make([]result, len(rows))
	for i, n := range rows {
		results[i] = result{Name: n, FsboxArgv: []string{"fsbox", "mcp", work}}
	}
	fail := func(err error) []result {
		for i := range results {
			results[i].Error = err.Error()
		}
		return results
	}
	if companionBeside(fsbox) == "" {
		return fail(fmt.Errorf("fsbox-mcp is not beside %s (make build builds both)", fsbox))
	}
	// XDG_CONFIG_HOME (fsboxEnv's) is an empty directory: no config.toml.
	for _, kv := range fsboxEnv {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			if err := os.MkdirAll(v, 0o755); err != nil {
				return fail(err)
			}
		}
	}

	// With -baseline, a server of the baseline's beside fsbox's, their
	// calls alternating; when the pair fails, fsbox is timed alone.
	sides := []mcpSide{fsboxMCPSide(fsbox, work, fsboxEnv, mcpEditFile)}
	baseErr := ""
	if cfg.baseline != "" {
		if companionBeside(cfg.baseline) == "" {
			baseErr = fmt.Sprintf("baseline: neither fsbox-mcp nor fsbox-full is beside %s", cfg.baseline)
		} else {
			sides = append(sides, fsboxMCPSide(cfg.baseline, work, fsboxEnv, mcpEditBase))
		}
	}
	if len(sides) == 2 {
		progress("== mcp: fsbox mcp %s, and the baseline's, interleaved", work)
	} else {
		progress("== mcp: fsbox mcp %s", work)
	}
	rs, err := runMCPSides(sides, work, cfg.guard.timeout, want)
	if err != nil && len(sides) == 2 {
		baseErr = "baseline: fsbox and the baseline together failed (" + firstLine(err.Error()) + "); fsbox timed alone"
		progress("   %s", baseErr)
		rs, err = runMCPSides(sides[:1], work, cfg.guard.timeout, want)
	}
	if err != nil {
		return fail(err)
	}
	fr := rs[0]
	var br *mcpResult
	if len(rs) == 2 {
		br = rs[1]
	}

	peer, skipped := (*mcpPeerInstall)(nil), "not run (-baseline-only)"
	if !cfg.baselineOnly {
		peer, skipped = mcpPeer(dir)
	}
	var pr *mcpResult
	peerVersion := ""
	if peer != nil {
		peerArgv = peer.argv(work)
		peerVersion = fmt.Sprintf("peer %s@%s", mcpPeerPkg, peer.version)
		progress("== mcp: %s: %s", peerVersion, strings.Join(peerArgv, " "))
		if peer.note != "" {
			progress("   %s", peer.note)
			peerVersion += " (" + peer.note + ")"
		}
		pr, err = runMCPPeer(peer, work, cfg.guard.timeout, want)
		if err != nil {
			pr, skipped = nil, "skipped: it did not run ("+firstLine(err.Error())+")"
		}
	}
	if skipped != "" && !cfg.baselineOnly {
		progress("   peer %s", skipped)
	}

	for i := range results {
		res := &results[i]
		var fs, ps []sample
		switch res.Name {
		case "mcp-startup":
			fs = fr.startup
			res.TimeTargetMs = mcpStartTarget
			res.Note = fmt.Sprintf("process start to initialize reply; %d fresh starts", len(fs))
			if pr != nil {
				ps = pr.startup
				res.Note += "; " + peerVersion
			}
		case "mcp-rss-idle":
			res.Fsbox = &stats{Runs: 1, PeakRSSKiB: fr.idleKiB, RSSExact: fr.idleKiB > 0}
			res.RSSTargetKiB = mcpIdleRSS
			res.Note = "VmRSS after initialize"
			if pr != nil {
				res.Note += fmt.Sprintf("; peer %s", kib(pr.idleKiB))
			}
		case "mcp-rss-1000":
			fs = fr.mixed
			res.RSSTargetKiB = mcpBusyRSS
			res.Note = fmt.Sprintf("VmRSS after %d mixed calls (VmHWM %s); time: median per call", len(fs), kib(fr.busyHWM))
			if pr != nil {
				res.Note += fmt.Sprintf("; peer %s", kib(pr.busyKiB))
			}
		default:
			fs = fr.calls[res.Name]
			res.RatioTarget = mcpRatioTarget
			if pr != nil {
				ps = pr.calls[res.Name]
			}
		}
		if fs != nil {
			res.Fsbox = summarizeCalls(fs)
		}
		switch res.Name {
		case "mcp-rss-1000":
			res.Fsbox.PeakRSSKiB, res.Fsbox.RSSExact = fr.busyKiB, fr.busyKiB > 0
		case "mcp-startup", "mcp-rss-idle":
		default:
			res.Fsbox.PeakRSSKiB, res.Fsbox.RSSExact = fr.hwm[res.Name], fr.hwm[res.Name] > 0
			res.Note = fmt.Sprintf("p90 %s; %d calls after %d warm-ups", dur(res.Fsbox.P90Ms), mcpCalls, mcpWarmups)
			if res.Name == "mcp-ls" {
				if ents, err := os.ReadDir(filepath.Join(work, mcpLsDir)); err == nil {
					res.Note += fmt.Sprintf("; %s has %d entries", mcpLsDir, len(ents))
				}
			}
		}
		if res.Name != "mcp-rss-idle" && res.Name != "mcp-rss-1000" {
			res.RivalArgv = peerArgv
			if ps != nil {
				res.Rival = summarizeCalls(ps)
				res.Ratio = float64(int(res.Fsbox.MedianMs/res.Rival.MedianMs*1000+0.5)) / 1000
				res.Note += fmt.Sprintf("; peer p90 %s", dur(res.Rival.P90Ms))
			} else if !cfg.baselineOnly {
				res.Skipped = "peer " + skipped
			}
		}
		if br != nil {
			res.Baseline = mcpStats(res.Name, br)
			compareBaseline(res)
		} else {
			res.BaselineError = baseErr
		}
		if res.Rival != nil && res.RatioTarget > 0 {
			pass := res.Ratio <= res.RatioTarget
			res.RatioPass = &pass
		}
		if res.TimeTargetMs > 0 {
			pass := res.Fsbox.MedianMs < res.TimeTargetMs
			res.TimePass = &pass
		}
		if res.RSSTargetKiB > 0 && res.Fsbox.RSSExact {
			pass := res.Fsbox.PeakRSSKiB < res.RSSTargetKiB
			res.RSSPass = &pass
		}
	}
	return results
}

// mcpStats are a side's figures for an MCP row (as benchMCP gives them
// for fsbox): the samples' times and the server's RSS.
func mcpStats(row string, r *mcpResult) *stats {
	switch row {
	case "mcp-startup":
		return summarizeCalls(r.startup)
	case "mcp-rss-idle":
		return &stats{Runs: 1, PeakRSSKiB: r.idleKiB, RSSExact: r.idleKiB > 0}
	case "mcp-rss-1000":
		st := summarizeCalls(r.mixed)
		st.PeakRSSKiB, st.RSSExact = r.busyKiB, r.busyKiB > 0
		return st
	}
	st := summarizeCalls(r.calls[row])
	st.PeakRSSKiB, st.RSSExact = r.hwm[row], r.hwm[row] > 0
	return st
}

// runMCPPeer runs the peer, once its tool names are known.
func runMCPPeer(peer *mcpPeerInstall, work string, limit time.Duration, want map[string]bool) (*mcpResult, error) {
	s, err := startServer(peer.node, peer.argv(work), work, os.Environ(), limit)
	if err != nil {
		return nil, err
	}
	err = s.initialize()
	var names map[string]bool
	if err == nil {
		if err = s.initialized(); err == nil {
			names, err = s.tools()
		}
	}
	s.close()
	if err != nil {
		return nil, err
	}
	for _, t := range []string{"get_file_info", "list_directory", "search_files", "edit_file"} {
		if !names[t] {
			return nil, errors.New("the peer has no tool " + t)
		}
	}
	rs, err := runMCPSides([]mcpSide{peerMCPSide(peer, work, names)}, work, limit, want)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// summarizeCalls is summarize plus the p90.
func summarizeCalls(ss []sample) *stats {
	st := summarize(ss)
	walls := make([]time.Duration, len(ss))
	for i, s := range ss {
		walls[i] = s.wall
	}
	slices.Sort(walls)
	st.P90Ms = ms(quantile(walls, 0.9))
	return st
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// mcpFooter explains the MCP rows' columns under the table.
func mcpFooter(w io.Writer, rep report) {
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Name, "mcp-") {
			fmt.Fprintln(w, "MCP rows: one JSON-RPC session over stdio; times are per-call round trips (mcp-startup: process start to the")
			fmt.Fprintln(w, "initialize reply); RSS is the server's VmHWM after the row's calls, VmRSS for mcp-rss-*; p90s in the notes and the JSON.")
			return
		}
	}
}
