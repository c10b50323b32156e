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
	rec := &sandbox.AuditRecord{
		Time:       st.start.UTC().Format(time.RFC3339Nano),
		PID:        os.Getpid(),
		Policy:     st.policy.Source,
		Command:    command,
		Paths:      []sandbox.AuditPath{},
		Exit:       code,
		DurationMS: float64(time.Since(st.start).Microseconds()) / 1000,
	}
	if st.sb != nil {
		rec.Paths, rec.BytesRead, rec.BytesWritten = st.sb.Usage()
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
	if aerr := st.auditLog.Append(rec); aerr != nil {
		c := printError(st.c.Stderr, st.format, aerr)
		if code <= 1 {
			return c
		}
	}
	return code
}
