package tool

import (
	"os"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// AuditRecordOf is the audit record of one call a long-lived host ran on
// sb (a ForCall view): as the CLI writes it, with the exit status the
// command line would have given.
func AuditRecordOf(sb *sandbox.Sandbox, command string, start time.Time, err error) *sandbox.AuditRecord {
	code := 0
	if err != nil {
		code = ExitCode(fserr.AsError(err).Code)
	}
	rec := AuditRecord(sb, command, start, err, code)
	rec.Policy = sb.Policy().Source
	return rec
}

// AuditRecord is the audit record of one call on sb (nil: the call opened
// no sandbox) that started at start and ended with err and exit status
// code.
func AuditRecord(sb *sandbox.Sandbox, command string, start time.Time, err error, code int) *sandbox.AuditRecord {
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
	switch e := fserr.AsError(err); {
	case code == ExitClosedPipe:
		// stdout's reader left before the output was all written.
		rec.Verdict = "error"
		rec.Error = &sandbox.AuditError{Code: fserr.CodeIO}
	case code == 0:
		rec.Verdict = "ok"
	case e != nil && e.Code == fserr.CodeNoMatch:
		rec.Verdict = "no_match"
	default:
		rec.Verdict = "error"
		if e != nil && e.Code == fserr.CodeDenied {
			rec.Verdict = "denied"
		}
		if e != nil {
			rec.Error = &sandbox.AuditError{Code: e.Code, Rule: e.Rule, Path: e.Path}
		}
	}
	return rec
}
