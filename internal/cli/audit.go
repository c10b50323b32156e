package cli

import (
	"os"
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// audit appends the call's record to the policy's audit log, if it has
// one, and returns the exit code: a record that cannot be written turns a
// successful call into an io error (its output is already printed, so
// the caller must hear that the paper trail is missing).
func (st *state) audit(command string, err error, code int) int {
	if st.auditLog == nil {
		return code
	}
	defer st.auditLog.Close()
	rec := auditRecord(st.sb, command, st.start, err, code)
	rec.Policy = st.policy.Source
	if aerr := st.auditLog.Append(rec); aerr != nil {
		c := printError(st.c.Stderr, st.format, aerr)
		if code <= 1 {
			return c
		}
	}
	return code
}

// AuditRecordOf is the audit record of one call a long-lived host ran on
// sb (a ForCall view): as the CLI writes it, with the exit status the
// command line would have given.
func AuditRecordOf(sb *sandbox.Sandbox, command string, start time.Time, err error) *sandbox.AuditRecord {
	code := 0
	if err != nil {
		code = exitCode(sandbox.AsError(err).Code)
	}
	rec := auditRecord(sb, command, start, err, code)
	rec.Policy = sb.Policy().Source
	return rec
}

func auditRecord(sb *sandbox.Sandbox, command string, start time.Time, err error, code int) *sandbox.AuditRecord {
	rec := &sandbox.AuditRecord{
		Time:       start.UTC().Format(time.RFC3339Nano),
		PID:        os.Getpid(),
		Command:    command,
		Paths:      []sandbox.AuditPath{},
		Exit:       code,
		DurationMS: float64(time.Since(start).Microseconds()) / 1000,
	}
	if sb != nil {
		rec.Paths, rec.BytesRead, rec.BytesWritten = sb.Usage()
	}
	switch e := sandbox.AsError(err); {
	case code == ExitClosedPipe:
		// stdout's reader left before the output was all written.
		rec.Verdict = "error"
		rec.Error = &sandbox.AuditError{Code: sandbox.CodeIO}
	case code == 0:
		rec.Verdict = "ok"
	case e != nil && e.Code == sandbox.CodeNoMatch:
		rec.Verdict = "no_match"
	default:
		rec.Verdict = "error"
		if e != nil && e.Code == sandbox.CodeDenied {
			rec.Verdict = "denied"
		}
		if e != nil {
			rec.Error = &sandbox.AuditError{Code: e.Code, Rule: e.Rule, Path: e.Path}
		}
	}
	return rec
}
