//go:build unix

package main

// The MCP rows: `fsbox mcp WORKDIR` (which execs fsbox-mcp, beside the
// fsbox binary) driven over its stdin and stdout by a small JSON-RPC 2.0
// client of the harness's own (newline-delimited messages, request ids,
// lines read until the reply with that id); the MCP SDK stays out of the
// harness. The rows, and their targets against the peer (below):
//
//	mcp-startup     process start to the initialize reply, median of 9 fresh starts (target < 20 ms)
//	mcp-stat        a file's metadata, the 10 KiB text's (target <= 0.7× the peer's median)
//	mcp-read-10KiB  the 10 KiB text, read whole (<= 0.7×)
//	mcp-ls          the listing of go/strings, about 18 entries (<= 0.7×)
//	mcp-find-go     the **/*.go files under go/, about 120 (the peer's search_files; <= 1.0×)
//	mcp-edit        one string replaced in a 10 KiB file, in the workdir on disk;
//	                fsbox journals each edit (fsync) under XDG_STATE_HOME, on disk too (<= 1.0×)
//	mcp-edit-tmpfs  the same edits with the workdir and fsbox's XDG_STATE_HOME on a tmpfs
//	                (a fresh directory, removed after), so no fsync reaches a disk; the peer
//	                edits on the same tmpfs (<= 0.6×). The tmpfs is $TMPDIR's (else /tmp's)
//	                or the runtime directory's, not /dev/shm's: fsbox opens nothing under /dev.
//	                Without one the row says it was skipped and why.
//	mcp-rss-idle    VmRSS right after initialize (target < 30 MiB; fsbox's alone, the peer's in the note)
//	mcp-rss-1000    VmRSS after 1,000 mixed calls in a fresh session (target < 60 MiB; likewise)
//
// The per-call rows (mcp-stat to mcp-edit-tmpfs) are one session per
// server: 5 warm-up calls, then 200 timed calls each, sequential; the row
// gives the round trip per call, median and p90.
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
// The peer runs beside fsbox, not after it: a session of each is open at
// once, and their starts and calls alternate one for one, the two taking
// turns going first, so that both see the same machine. (On a shared VM
// the speed drifts by 2-3× over minutes: ratios of figures taken minutes
// apart say nothing.) With -baseline, a server of the baseline binary is
// a third side in the same rotation, each side editing a file of its own;
// the peer is left out unless -baseline-only=false. When the peer (or the
// baseline) fails in the rotation, the others are timed again without it,
// and the rows say why.

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	mcpEditPeer = "edit-peer.txt"  // and for the peer
	mcpShm      = "/dev/shm"       // a tmpfs, but one fsbox refuses (see mcpTmpfsPlaces)
	mcpPeerPkg  = "@modelcontextprotocol/server-filesystem"
	mcpPeerVer  = "2026.8.31"
	dirMCPPeer  = "mcp-peer" // npm's prefix for the peer, in the data directory
)

var mcpGoDirs = []string{"strings", "bufio", "encoding/json"}

// mcpTmpfsRow is the edit row on tmpfs: mcp-edit's calls, timed in a
// run of their own in a directory on a tmpfs (mcpTmpfs).
const mcpTmpfsRow = "mcp-edit-tmpfs"

// mcpRatioTargets are the per-call rows' targets: fsbox's median at most
// this many times the peer's, measured in the same rotation.
var mcpRatioTargets = map[string]float64{
	"mcp-stat": 0.7, "mcp-read-10KiB": 0.7, "mcp-ls": 0.7,
	"mcp-find-go": 1.0, "mcp-edit": 1.0,
	mcpTmpfsRow: 0.6,
}

// mcpRowNames are the MCP rows, in report order; -only selects among them.
var mcpRowNames = []string{"mcp-startup", "mcp-stat", "mcp-read-10KiB", "mcp-ls", "mcp-find-go", "mcp-edit", "mcp-edit-tmpfs", "mcp-rss-idle", "mcp-rss-1000"}

const (
	mcpStarts      = 9
	mcpWarmups     = 5
	mcpCalls       = 200
	mcpMixedCalls  = 1000
	mcpStartTarget = 20       // ms
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
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return fmt.Errorf("%s: tool error: %s", name, msg)
	}
	return nil
}

// tools lists the server's tools: each name, with its required arguments.
func (s *rpcServer) tools() (map[string][]string, error) {
	res, err := s.call("tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Required []string `json:"required"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	tools := map[string][]string{}
	for _, t := range r.Tools {
		tools[t.Name] = t.InputSchema.Required
	}
	return tools, nil
}

// ---------------------------------------------------------------------------
// The servers.

// mcpOp is one timed operation: the tool call for call number i.
type mcpOp struct {
	row  string
	args func(i int) (tool string, args map[string]any)
}

// mcpSide is one server: how to start it and its calls.
type mcpSide struct {
	name string // "fsbox", "baseline" or "peer": what the messages and the fallback call it
	path string
	argv []string
	env  []string
	ops  []mcpOp
	edit string // the file its edit calls change, in the workdir (each side has its own)
	// mixed is an extra call for the 1,000 mixed calls (fsbox: a page of
	// the 50 MiB log); nil for none.
	mixed func(i int) (string, map[string]any)
	// ready, when set, runs once a session is up, given what the edit
	// file holds at its start.
	ready func(s *rpcServer, edit []byte)
}

// fsboxMCPSide is an fsbox server. Without a policy, fsbox mcp serves
// the agent preset, whose edits must name the sha256 of the content they
// replace (expect): when the server's edit tool requires it, each edit
// carries it, as an agent's does (a build from before the preset gets
// none).
func fsboxMCPSide(name, fsbox, work string, env []string, edit string) mcpSide {
	var expect [2]string // the sha256 before an even and an odd call; "" none
	return mcpSide{
		name: name, path: fsbox, argv: []string{fsbox, "mcp", work}, env: env, edit: edit,
		ready: func(s *rpcServer, text []byte) {
			expect = [2]string{}
			if tools, err := s.tools(); err == nil && slices.Contains(tools["fsbox_edit"], "expect") {
				alpha := sha256.Sum256(text)
				omega := sha256.Sum256(bytes.Replace(text, []byte("EDIT_MARKER_ALPHA"), []byte("EDIT_MARKER_OMEGA"), 1))
				expect = [2]string{hex.EncodeToString(alpha[:]), hex.EncodeToString(omega[:])}
			}
		},
		ops: []mcpOp{
			{"mcp-stat", func(int) (string, map[string]any) { return "fsbox_stat", map[string]any{"path": mcpText} }},
			{"mcp-read-10KiB", func(int) (string, map[string]any) { return "fsbox_read", map[string]any{"path": mcpText} }},
			{"mcp-ls", func(int) (string, map[string]any) { return "fsbox_ls", map[string]any{"path": mcpLsDir} }},
			{"mcp-find-go", func(int) (string, map[string]any) {
				return "fsbox_find", map[string]any{"dir": mcpTree, "glob": "**/*.go"}
			}},
			{"mcp-edit", func(i int) (string, map[string]any) {
				old, new := editPair(i)
				args := map[string]any{"path": edit, "old": old, "new": new}
				if e := expect[i%2]; e != "" {
					args["expect"] = e
				}
				return "fsbox_edit", args
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
		name: "peer", path: peer.node, argv: peer.argv(work), env: os.Environ(), edit: mcpEditPeer,
		ops: []mcpOp{
			{"mcp-stat", func(int) (string, map[string]any) { return "get_file_info", map[string]any{"path": abs(mcpText)} }},
			{"mcp-read-10KiB", func(int) (string, map[string]any) { return read, map[string]any{"path": abs(mcpText)} }},
			{"mcp-ls", func(int) (string, map[string]any) { return "list_directory", map[string]any{"path": abs(mcpLsDir)} }},
			{"mcp-find-go", func(int) (string, map[string]any) {
				return "search_files", map[string]any{"path": abs(mcpTree), "pattern": "**/*.go"}
			}},
			{"mcp-edit", func(i int) (string, map[string]any) {
				old, new := editPair(i)
				return "edit_file", map[string]any{"path": abs(mcpEditPeer), "edits": []any{map[string]any{"oldText": old, "newText": new}}}
			}},
		},
	}
}

// editOnly is side with its edit calls alone, as the row row: the same
// calls in another workdir (mcp-edit-tmpfs).
func editOnly(side mcpSide, row string) mcpSide {
	i := slices.IndexFunc(side.ops, func(op mcpOp) bool { return op.row == "mcp-edit" })
	side.ops = []mcpOp{{row, side.ops[i].args}}
	side.mixed = nil
	return side
}

// editPair is call i's replacement: the two alternate, so every call
// changes the file (and its size stays the same).
func editPair(i int) (old, new string) {
	if i%2 == 0 {
		return "EDIT_MARKER_ALPHA", "EDIT_MARKER_OMEGA"
	}
	return "EDIT_MARKER_OMEGA", "EDIT_MARKER_ALPHA"
}

// editText is what an edit target holds before a session: the 10 KiB
// text of the workdir work with EDIT_MARKER_ALPHA once, in the middle.
func editText(work string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(work, mcpText))
	if err != nil {
		return nil, err
	}
	mid := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
	return slices.Concat(b[:mid], []byte("EDIT_MARKER_ALPHA\n"), b[mid:]), nil
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

// mcpSideError is a run's failure and the side it came from, so that the
// run can go on without that side.
type mcpSideError struct {
	side int // index in the run's sides
	name string
	err  error
}

func (e *mcpSideError) Error() string { return e.name + ": " + e.err.Error() }
func (e *mcpSideError) Unwrap() error { return e.err }

// runMCPSides measures the servers side by side, all in the workdir work:
// fresh starts (for mcp-startup and mcp-rss-idle), then one session each
// of warm calls, then one each of mixed calls (for mcp-rss-1000). With
// more than one side, their starts and calls alternate (each side has its
// sessions open at once, and the sides take turns going first), so that
// the machine's noise, and its drift, fall on all alike. Each session's
// edit file is written afresh with edit first. An error is an
// *mcpSideError (wrapped).
func runMCPSides(sides []mcpSide, work string, edit []byte, limit time.Duration, want map[string]bool) ([]*mcpResult, error) {
	rs := make([]*mcpResult, len(sides))
	for j := range rs {
		rs[j] = &mcpResult{calls: map[string][]sample{}, hwm: map[string]int64{}}
	}
	failed := func(j int, err error) error { return &mcpSideError{side: j, name: sides[j].name, err: err} }
	start := func(j int) (*rpcServer, error) {
		side := sides[j]
		s, err := startServer(side.path, side.argv, work, side.env, limit)
		if err != nil {
			return nil, failed(j, err)
		}
		if err := s.initialize(); err != nil {
			s.close()
			return nil, failed(j, err)
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
			var err error
			if err = os.WriteFile(filepath.Join(work, side.edit), edit, 0o644); err != nil {
				err = failed(j, err)
			}
			if err == nil {
				ss[j], err = start(j)
			}
			if err == nil {
				if err = ss[j].initialized(); err != nil {
					ss[j].close()
					err = failed(j, err)
				}
			}
			if err == nil && side.ready != nil {
				side.ready(ss[j], edit)
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
	starts := 0
	switch {
	case want["mcp-startup"]:
		starts = mcpStarts
	case want["mcp-rss-idle"]:
		starts = 1
	}
	for i := range starts {
		for _, j := range order(i) {
			s, err := start(j)
			if err != nil {
				return nil, err
			}
			rs[j].startup = append(rs[j].startup, sample{wall: time.Since(s.start)})
			if i == 0 {
				if err := s.initialized(); err != nil {
					s.close()
					return nil, failed(j, err)
				}
				time.Sleep(100 * time.Millisecond)
				rs[j].idleKiB = vmRSSKiB(s.cmd.Process.Pid)
			}
			s.close()
		}
	}

	// Warm calls. Every side has the same rows, in the same order.
	if slices.ContainsFunc(sides[0].ops, func(op mcpOp) bool { return want[op.row] }) {
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
						return nil, fmt.Errorf("%s: %w", op.row, failed(j, err))
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
	}

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
				return nil, fmt.Errorf("mixed call %d: %w", i, failed(j, err))
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

// mcpRun is one runMCPSides's figures by side name, and why a side was
// left out of it ("" if it was not).
type mcpRun struct {
	rs      map[string]*mcpResult
	dropped map[string]string
}

// runMCPFallback runs the sides together; when one of them other than
// fsbox (sides[0]) fails, it runs the rest again without it, as often as
// it takes. Only fsbox's failure is the run's.
func runMCPFallback(sides []mcpSide, work string, edit []byte, limit time.Duration, want map[string]bool) (*mcpRun, error) {
	run := &mcpRun{rs: map[string]*mcpResult{}, dropped: map[string]string{}}
	for {
		rs, err := runMCPSides(sides, work, edit, limit, want)
		if err == nil {
			for j, side := range sides {
				run.rs[side.name] = rs[j]
			}
			return run, nil
		}
		var se *mcpSideError
		if !errors.As(err, &se) || se.side == 0 {
			return nil, err
		}
		why := firstLine(err.Error())
		run.dropped[se.name] = why
		progress("   the %s failed beside fsbox (%s): timed again without it", se.name, why)
		sides = slices.Delete(slices.Clone(sides), se.side, se.side+1)
	}
}

// mcpTmpfs is a fresh directory on a tmpfs for mcp-edit-tmpfs, with the
// workdir and the state directory (fsbox's XDG_STATE_HOME, beside the
// workdir: a journal inside it is off) in it; or why there is none.
func mcpTmpfs() (dir, skipped string) {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", "skipped: no /proc/self/mounts to find a tmpfs by"
	}
	var places []string
	for _, p := range mcpTmpfsPlaces() {
		if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(places, real) {
			places = append(places, real)
		}
	}
	place, why := tmpfsAmong(string(mounts), places)
	if place == "" {
		return "", "skipped: " + why
	}
	if dir, err = os.MkdirTemp(place, "fsbox-bench-mcp-"); err == nil {
		if err = os.Mkdir(filepath.Join(dir, "work"), 0o755); err == nil {
			err = os.Mkdir(filepath.Join(dir, "state"), 0o755)
		}
		if err != nil {
			os.RemoveAll(dir)
		}
	}
	if err != nil {
		return "", "skipped: " + err.Error()
	}
	return dir, ""
}

// mcpTmpfsPlaces are where mcp-edit-tmpfs looks for a tmpfs, in order:
// the temporary directory ($TMPDIR, else /tmp), the user's runtime
// directory, and /dev/shm, a tmpfs wherever Linux runs but under /dev,
// where fsbox opens nothing (its special_fs rule): there only to say so
// when there is no other. To time the row on another tmpfs, set TMPDIR
// to a directory on it.
func mcpTmpfsPlaces() []string {
	places := []string{os.TempDir()}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		places = append(places, d)
	}
	return append(places, fmt.Sprintf("/run/user/%d", os.Getuid()), mcpShm)
}

// tmpfsAmong is the first of places (absolute, symlinks resolved) on a
// tmpfs by the mount table mounts, outside /proc, /sys and /dev, which
// fsbox never opens (pkg/policy's SpecialFS); else "" and why not.
func tmpfsAmong(mounts string, places []string) (place, why string) {
	var not []string
	for _, p := range places {
		i := slices.IndexFunc([]string{"/proc", "/sys", "/dev"}, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
		switch t := mountType(mounts, p); {
		case t != "tmpfs":
			not = append(not, fmt.Sprintf("%s is %s", p, cmp.Or(t, "on no mount")))
		case i >= 0:
			not = append(not, fmt.Sprintf("%s is tmpfs but in %s, which fsbox never opens", p, []string{"/proc", "/sys", "/dev"}[i]))
		default:
			return p, ""
		}
	}
	return "", "no tmpfs fsbox can work in (" + strings.Join(not, "; ") + "); set TMPDIR to a directory on a tmpfs"
}

// mountType is the type of the filesystem path lies on, by a mount table
// (/proc/self/mounts: device, mount point, type, ...): that of the
// longest mount point holding path, the last mounted of equals; "" if
// none holds it.
func mountType(mounts, path string) string {
	best, typ := -1, ""
	for line := range strings.SplitSeq(mounts, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		mp := strings.ReplaceAll(f[1], `\040`, " ")
		if (path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= best {
			best, typ = len(mp), f[2]
		}
	}
	return typ
}

// withEnv is env with key set to value.
func withEnv(env []string, key, value string) []string {
	out := []string{key + "=" + value}
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
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

// benchMCP measures the selected MCP rows: those in the data directory's
// workdir in one run of all the sides, mcp-edit-tmpfs in one of its own.
func benchMCP(cfg config, dir, fsbox string, fsboxEnv []string, rows []string) []result {
	want := map[string]bool{}
	for _, n := range rows {
		want[n] = true
	}
	work := filepath.Join(dir, dirMCP)
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
	edit, err := editText(work)
	if err != nil {
		return fail(err)
	}

	// The sides: fsbox's server, the baseline's with -baseline, and the
	// peer unless -baseline-only, in one rotation.
	baseErr := ""
	withBase := cfg.baseline != ""
	if withBase && companionBeside(cfg.baseline) == "" {
		baseErr = fmt.Sprintf("baseline: neither fsbox-mcp nor fsbox-full is beside %s", cfg.baseline)
		withBase = false
	}
	peer, skipped := (*mcpPeerInstall)(nil), "not run (-baseline-only)"
	if !cfg.baselineOnly {
		peer, skipped = mcpPeer(dir)
	}
	var peerNames map[string]bool
	peerVersion := ""
	if peer != nil {
		peerVersion = fmt.Sprintf("peer %s@%s", mcpPeerPkg, peer.version)
		progress("== mcp: %s: %s", peerVersion, strings.Join(peer.argv(work), " "))
		if peer.note != "" {
			progress("   %s", peer.note)
			peerVersion += " (" + peer.note + ")"
		}
		if peerNames, err = peerTools(peer, work, cfg.guard.timeout); err != nil {
			peer, skipped = nil, "skipped: it did not run ("+firstLine(err.Error())+")"
		}
	}
	if skipped != "" && !cfg.baselineOnly {
		progress("   peer %s", skipped)
	}
	sidesIn := func(work string, env []string) []mcpSide {
		sides := []mcpSide{fsboxMCPSide("fsbox", fsbox, work, env, mcpEditFile)}
		if withBase {
			sides = append(sides, fsboxMCPSide("baseline", cfg.baseline, work, env, mcpEditBase))
		}
		if peer != nil {
			sides = append(sides, peerMCPSide(peer, work, peerNames))
		}
		return sides
	}

	// The rows in the data directory, then mcp-edit-tmpfs.
	onDisk := maps.Clone(want)
	delete(onDisk, mcpTmpfsRow)
	var disk, tmpfs *mcpRun
	var diskErr, tmpfsErr error
	if len(onDisk) > 0 {
		sides := sidesIn(work, fsboxEnv)
		progress("== mcp: %s in %s", sideNames(sides), work)
		disk, diskErr = runMCPFallback(sides, work, edit, cfg.guard.timeout, onDisk)
	}
	tmpfsWork, tmpfsSkipped := "", ""
	if want[mcpTmpfsRow] {
		tmpfs, tmpfsWork, tmpfsSkipped, tmpfsErr = runMCPTmpfs(sidesIn, fsboxEnv, edit, cfg.guard.timeout)
	}

	for i := range results {
		res := &results[i]
		res.RatioTarget = mcpRatioTargets[res.Name]
		run, runWork, err := disk, work, diskErr
		if res.Name == mcpTmpfsRow {
			run, runWork, err = tmpfs, cmp.Or(tmpfsWork, "TMPFS/fsbox-bench-mcp-*/work"), tmpfsErr
			res.FsboxArgv = []string{"fsbox", "mcp", runWork}
		}
		if !strings.HasPrefix(res.Name, "mcp-rss-") {
			res.RivalArgv = []string{"node", filepath.Join("DATA", dirMCPPeer, "node_modules", mcpPeerPkg, "dist/index.js"), runWork}
			if peer != nil {
				res.RivalArgv = peer.argv(runWork)
			}
		}
		if res.Name == mcpTmpfsRow && tmpfsSkipped != "" {
			res.Skipped = tmpfsSkipped
			continue
		}
		if err != nil {
			res.Error = err.Error()
			continue
		}
		fr, br, pr := run.rs["fsbox"], run.rs["baseline"], run.rs["peer"]
		peerSkipped := skipped
		if why := run.dropped["peer"]; why != "" {
			peerSkipped = "skipped: it failed beside fsbox (" + why + "); fsbox timed without it"
		}
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
			switch res.Name {
			case "mcp-ls":
				if ents, err := os.ReadDir(filepath.Join(work, mcpLsDir)); err == nil {
					res.Note += fmt.Sprintf("; %s has %d entries", mcpLsDir, len(ents))
				}
			case mcpTmpfsRow:
				res.Note += "; workdir and XDG_STATE_HOME on tmpfs"
			}
		}
		if res.RivalArgv != nil {
			if ps != nil {
				res.Rival = summarizeCalls(ps)
				res.Ratio = float64(int(res.Fsbox.MedianMs/res.Rival.MedianMs*1000+0.5)) / 1000
				res.Note += fmt.Sprintf("; peer p90 %s", dur(res.Rival.P90Ms))
			} else if !cfg.baselineOnly {
				res.Skipped = "peer " + peerSkipped
			}
		}
		switch {
		case br != nil:
			res.Baseline = mcpStats(res.Name, br)
			compareBaseline(res)
		case run.dropped["baseline"] != "":
			res.BaselineError = "baseline: it failed beside fsbox (" + run.dropped["baseline"] + "); fsbox timed without it"
		default:
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

// runMCPTmpfs runs mcp-edit-tmpfs: the sides' edit calls in a fresh
// directory on a tmpfs, fsbox's state directory (its journal) in it
// too, removed after. work is the workdir it used, skipped why there was
// none.
func runMCPTmpfs(sidesIn func(work string, env []string) []mcpSide, fsboxEnv []string, edit []byte, limit time.Duration) (run *mcpRun, work, skipped string, err error) {
	dir, skipped := mcpTmpfs()
	if skipped != "" {
		return nil, "", skipped, nil
	}
	defer os.RemoveAll(dir)
	work = filepath.Join(dir, "work")
	sides := sidesIn(work, withEnv(fsboxEnv, "XDG_STATE_HOME", filepath.Join(dir, "state")))
	for j := range sides {
		sides[j] = editOnly(sides[j], mcpTmpfsRow)
	}
	progress("== mcp: %s in %s (tmpfs), XDG_STATE_HOME beside it", sideNames(sides), work)
	run, err = runMCPFallback(sides, work, edit, limit, map[string]bool{mcpTmpfsRow: true})
	return run, work, "", err
}

// sideNames says which servers a run has, for its progress line.
func sideNames(sides []mcpSide) string {
	names := make([]string, len(sides))
	for j, side := range sides {
		names[j] = side.name
	}
	if len(sides) == 1 {
		return "fsbox alone"
	}
	return strings.Join(names, ", ") + ", calls interleaved"
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

// peerTools starts the peer once for its tool names (peerMCPSide needs
// them), and fails when it lacks one the rows call.
func peerTools(peer *mcpPeerInstall, work string, limit time.Duration) (map[string]bool, error) {
	s, err := startServer(peer.node, peer.argv(work), work, os.Environ(), limit)
	if err != nil {
		return nil, err
	}
	err = s.initialize()
	var tools map[string][]string
	if err == nil {
		if err = s.initialized(); err == nil {
			tools, err = s.tools()
		}
	}
	s.close()
	if err != nil {
		return nil, err
	}
	for _, t := range []string{"get_file_info", "list_directory", "search_files", "edit_file"} {
		if _, ok := tools[t]; !ok {
			return nil, errors.New("the peer has no tool " + t)
		}
	}
	names := map[string]bool{}
	for n := range tools {
		names[n] = true
	}
	return names, nil
}

// mcpListing is a row's two commands for -list.
func mcpListing(row string) (fsbox, rival string) {
	work, where := "DATA/"+dirMCP, ""
	if row == mcpTmpfsRow {
		work, where = "TMPFS/fsbox-bench-mcp-*/work", "; TMPFS: $TMPDIR or another tmpfs, not /dev/shm; removed after; XDG_STATE_HOME beside it"
	}
	fsbox = "fsbox mcp " + work + " (MCP over stdio" + where + ")"
	if strings.HasPrefix(row, "mcp-rss-") {
		return fsbox, rivalText(nil)
	}
	return fsbox, fmt.Sprintf("node DATA/%s/node_modules/%s/dist/index.js %s (%s@%s, installed by npm on first use; calls interleaved with fsbox's)",
		dirMCPPeer, mcpPeerPkg, work, mcpPeerPkg, mcpPeerVer)
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
			fmt.Fprintln(w, "MCP rows: one JSON-RPC session over stdio per server; times are per-call round trips (mcp-startup: process start to the")
			fmt.Fprintln(w, "initialize reply); RSS is the server's VmHWM after the row's calls, VmRSS for mcp-rss-*; p90s in the notes and the JSON.")
			fmt.Fprintln(w, "The peer's starts and calls (and the baseline's) alternate one for one with fsbox's, in sessions open at the same time.")
			fmt.Fprintln(w, "mcp-edit-tmpfs: mcp-edit's calls with the workdir, and fsbox's journal, on a tmpfs ($TMPDIR or another; not /dev/shm,")
			fmt.Fprintln(w, "which fsbox refuses as it does all of /dev).")
			return
		}
	}
}
