package ops

import (
	"context"
	"errors"

	"github.com/fsbox/fsbox/pkg/sandbox"
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
// first (the call stopped there: the deadline cut nothing).
func cutByDeadline(t *Truncation) {
	if !t.Truncated {
		t.Truncated, t.Limit, t.Cuts = true, timeoutLimit, []string{timeoutLimit}
	}
}

// stoppedByDeadline marks t as stopped by the deadline after a cut that
// did not stop the call (a counting mode's list cut by max_results or
// max_result_bytes while the counting went on): limit is timeout
// whatever cut came first, and Cuts names every cut in order (SPEC §2,
// Counts).
func stoppedByDeadline(t *Truncation) {
	if !t.Truncated {
		cutByDeadline(t)
		return
	}
	if t.Limit != timeoutLimit {
		t.Cuts = []string{t.Limit, timeoutLimit}
		t.Limit = timeoutLimit
	}
}

// beginWalk is begin for a walk or a search, which a deadline cuts
// rather than fails (SPEC §2): one already past when it starts (it ran
// out while the policy loaded) is no error here, and the walk gives its
// empty part, cut by the deadline, as one cut a moment later does.
func beginWalk(ctx context.Context, sb *sandbox.Sandbox, name string) error {
	if err := begin(ctx, sb, name); err != nil && !timedOut(ctx, err) {
		return err
	}
	return nil
}
