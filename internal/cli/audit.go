package cli

import "github.com/fsbox/fsbox/internal/tool"

// audit appends the call's record to the policy's audit log, if it has
// one, and returns the exit code: a record that cannot be written turns a
// successful call into an io error (its output is already printed, so
// the caller must hear that the paper trail is missing).
func (st *state) audit(command string, err error, code int) int {
	if st.auditLog == nil {
		return code
	}
	defer st.auditLog.Close()
	rec := tool.AuditRecord(st.sb, command, st.start, err, code)
	rec.Policy = st.policy.Source
	if aerr := st.auditLog.Append(rec); aerr != nil {
		c := printError(st.c.Stderr, st.format, aerr)
		if code <= 1 {
			return c
		}
	}
	return code
}
