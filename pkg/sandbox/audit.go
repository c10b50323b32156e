package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
)

// AuditLog is the policy's [audit] log: a JSON Lines file outside the
// workdir, opened for appending before the process restricts itself (so
// Landlock never stands between fsbox and its own log).
type AuditLog struct {
	f    *os.File
	path string
}

// AuditRecord is one call's line in the audit log.
type AuditRecord struct {
	Time         string      `json:"time"` // RFC 3339, UTC, when the call started
	PID          int         `json:"pid"`
	Policy       string      `json:"policy"` // the policy file
	Command      string      `json:"command"`
	Paths        []AuditPath `json:"paths"`   // the path arguments, as resolved
	Verdict      string      `json:"verdict"` // "ok", "no_match", "denied" or "error"
	Exit         int         `json:"exit"`
	Error        *AuditError `json:"error"`
	BytesRead    int64       `json:"bytes_read"`
	BytesWritten int64       `json:"bytes_written"`
	DurationMS   float64     `json:"duration_ms"`
	RequestID    any         `json:"request_id,omitempty"` // the JSON-RPC id of an MCP tool call
	Dropped      int64       `json:"dropped,omitempty"`    // refusals of `fsbox mcp --http` left out before this one (rate limit)
}

// AuditPath is one path argument: as given, and where it resolved to
// (the real path once the file was opened; empty when it matched no root).
type AuditPath struct {
	Arg  string `json:"arg"`
	Path string `json:"path,omitempty"`
}

// AuditError is the call's error, when it failed.
type AuditError struct {
	Code fserr.Code `json:"code"`
	Rule fserr.Rule `json:"rule,omitempty"`
	Path string     `json:"path,omitempty"`
}

// OpenAudit opens the policy's audit log for appending (creating it with
// mode 0600). It returns nil when the policy names none. Any failure is a
// config error: fsbox never runs unaudited when a log is asked for.
func OpenAudit(p *policy.Policy) (*AuditLog, error) {
	if p.Audit.Log == "" {
		return nil, nil
	}
	f, err := os.OpenFile(p.Audit.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow|syscallNonblock, 0o600)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, p.Source, "%s: [audit] log %s cannot be opened for appending: %v", p.Source, p.Audit.Log, unwrapPathErr(err))
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fserr.Errorf(fserr.CodeConfig, p.Source, "%s: [audit] log %s is not a regular file", p.Source, p.Audit.Log)
	}
	return &AuditLog{f: f, path: p.Audit.Log}, nil
}

// Append writes rec as one line with a single write(2) on the O_APPEND
// descriptor, so records of concurrent calls never interleave.
func (a *AuditLog) Append(rec *AuditRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	n, err := a.f.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fserr.Errorf(fserr.CodeIO, a.path, "the audit log %s could not be appended to: %v", a.path, unwrapPathErr(err))
	}
	return nil
}

// Close releases the log.
func (a *AuditLog) Close() error { return a.f.Close() }

// trail is what a sandbox's use leaves for the audit record: the path
// arguments it resolved and the bytes it read and wrote. Walks add no
// paths (a tree search names its start, not every file it opened).
type trail struct {
	mu           sync.Mutex
	paths        []AuditPath
	index        map[string]int // Arg → position in paths
	bytesRead    atomic.Int64
	bytesWritten atomic.Int64
}

// note records a path argument as resolved; a later note for the same
// argument (its real path, once opened) replaces the earlier one. With
// onlyKnown, an argument not yet recorded is ignored (walks reuse the
// open path for the files they find).
func (t *trail) note(given, resolved string, onlyKnown bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.index[given]; ok {
		if resolved != "" {
			t.paths[i].Path = resolved
		}
		return
	}
	if onlyKnown {
		return
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[given] = len(t.paths)
	t.paths = append(t.paths, AuditPath{Arg: given, Path: resolved})
}

// Usage reports the path arguments the sandbox resolved (in order of
// first use) and the bytes it has read and written so far.
func (s *Sandbox) Usage() (paths []AuditPath, read, written int64) {
	s.trail.mu.Lock()
	paths = append(make([]AuditPath, 0, len(s.trail.paths)), s.trail.paths...)
	s.trail.mu.Unlock()
	return paths, s.trail.bytesRead.Load(), s.trail.bytesWritten.Load()
}
