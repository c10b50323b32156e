package ops

import (
	"context"
	"errors"
)

// timeoutLimit is the limit a result names when the call's deadline
// (max_call_seconds, lowered by the call's timeout) cut it (SPEC §2):
// a walk or a search gives what it found by then, as a result.
const timeoutLimit = "timeout"

// timedOut reports whether err is the call's own deadline passing: ctx
// is past its deadline, not cancelled by its caller (an MCP client's
// cancel stays an error).
func timedOut(ctx context.Context, err error) bool {
	return err != nil && errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// cutByDeadline marks t as cut by the deadline, unless a limit cut it
// first.
func cutByDeadline(t *Truncation) {
	if !t.Truncated {
		t.Truncated, t.Limit = true, timeoutLimit
	}
}
