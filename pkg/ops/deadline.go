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

// maxRequestsLimit is the limit a result names when the call's request
// cap ([store] max_requests) stopped it, which ends a call as its
// deadline does (sandbox.WithRequestCap).
const maxRequestsLimit = "max_requests"

// deadlineLimit is the limit that ended ctx's call: its deadline, or its
// request cap.
func deadlineLimit(ctx context.Context) string {
	if sandbox.MaxRequestsCut(ctx) {
		return maxRequestsLimit
	}
	return timeoutLimit
}

// cutByDeadline marks t as cut by the deadline (or the request cap),
// unless a limit cut it first (the call stopped there: the deadline cut
// nothing).
func cutByDeadline(ctx context.Context, t *Truncation) {
	if !t.Truncated {
		l := deadlineLimit(ctx)
		t.Truncated, t.Limit, t.Cuts = true, l, []string{l}
	}
}

// stoppedByDeadline marks t as stopped by the deadline after a cut that
// did not stop the call (a counting mode's list cut by max_results or
// max_result_bytes while the counting went on): limit is timeout
// whatever cut came first, and Cuts names every cut in order (SPEC §2,
// Counts).
func stoppedByDeadline(ctx context.Context, t *Truncation) {
	if !t.Truncated {
		cutByDeadline(ctx, t)
		return
	}
	if l := deadlineLimit(ctx); t.Limit != l {
		t.Cuts = []string{t.Limit, l}
		t.Limit = l
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
