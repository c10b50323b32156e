package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// storeOp is `fsbox store check [s3://BUCKET/PREFIX]` (SPEC §4, Object
// roots): one operation, store, whose first argument is the action (check
// is the only one), so that its [commands] toggle is store and the
// command line reads as two words.
var storeOp = &spec.Op{
	Name: "store", Class: spec.Write, Result: StoreCheckResult{}, Off: true,
	Summary: "check an object store (s3://) before turning writes on: conditional requests under races, ranges, checksums, listings",
	Help: "store check probes the object store of a writable object root of the policy in force (URL, an s3:// URL inside one, or by default the first) under a fresh random prefix inside it (.fsbox-store-check-HEX/, one under which nothing is listed yet), which it removes afterwards, even when a probe fails or the call runs out of time or requests; anything else (a local path, a read-only root, no object root at all) is denied, and so is a scratch prefix whose keys the policy's deny, write_deny or allow rules would refuse to a write. " +
		"It writes nothing outside that prefix, and does not go through the door's changes (no journal): it makes its own requests, the raw ones fsbox's changes rely on, and says for each probe whether the server gives what fsbox needs: " +
		"cond_put_if_none_match_race (16 PUTs If-None-Match: * of one new key at once: exactly one stored), cond_put_if_match_race (16 PUTs If-Match of one ETag at once: exactly one stored), cond_get (GET If-Match of a replaced ETag is 412), cond_delete (DELETE If-Match of a wrong ETag is refused and the object kept; what a conditional DELETE of a missing key answers is reported), suffix_range (Range: bytes=-N is the last N bytes, or all of a smaller object), verified_sha256 (a PUT with the sha256 of other content is refused; HEAD with checksum mode gives the sha256 back), list_delimiter_start_after (ListObjectsV2 with delimiter / and start-after, and paged), no_torn_reads (GETs racing a PUT of another body of the same size give one body whole), copy_dest_conditions (CopyObject honours If-None-Match: * and If-Match on its destination). " +
		"It also asks, with reads only, outside every root of the policy (the account's bucket list; unless a root is the whole bucket, a one-key listing of the bucket and a HEAD of a random key at its top): outside.reaches is true when any of them is answered with anything but 403, a 404 included (the store was asked), and then the credentials should be scoped to the roots before writes are turned on. " +
		"ok is true when every probe passed and the scratch prefix was removed. The exit status is 0 whenever the check ran, whatever the probes found (a report, as gh's and coreutils' reports are): read ok, or each probe's ok; a failed probe or scratch left behind is also said on stderr in the text form. " +
		"The policy switches store off unless [commands] store = true.",
	Args: []spec.Arg{
		{Name: "action", Meta: "ACTION", Help: "what to do with the store: check (the only action)", Enum: []string{"check"}, Complete: spec.CompleteNone},
		{Name: "url", Meta: "URL", Help: "an s3:// URL in a writable object root of the policy, where the scratch prefix is made (default: the first writable object root)", Optional: true, Complete: spec.CompleteNone},
	},
	Examples: []spec.Example{
		{Cmd: "store check --format text", Says: "probe the workdir's bucket: one line per probe, then whether the credentials reach outside the roots and whether the scratch prefix was removed", Bucket: true},
	},
	JSONNote: "exit 0 whenever the check ran, whatever the probes found: ok says whether all passed",
	Text:     "one line per probe: ok or FAIL, its name and what the server answered, tab-separated; then outside (reaches or contained) and scratch (removed or left), in the same form",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		return storeCheck(ctx, sb, in.String("action"), in.String("url"), in.IsSet("url"))
	},
}

// StoreCheckResult is what store check found (sandbox.StoreReport).
type StoreCheckResult struct {
	sandbox.StoreReport
}

// StoreCheck runs store's action (check) on the object root url names ("":
// the first writable object root).
func StoreCheck(ctx context.Context, sb *sandbox.Sandbox, action, url string) (*StoreCheckResult, error) {
	return storeCheck(ctx, sb, action, url, url != "")
}

// storeCheck is StoreCheck; given: a URL argument was given (an empty one
// is usage, as an empty path is).
func storeCheck(ctx context.Context, sb *sandbox.Sandbox, action, url string, given bool) (*StoreCheckResult, error) {
	if err := begin(ctx, sb, "store"); err != nil {
		return nil, err
	}
	if action != "check" {
		return nil, usagef(action, "store %q: the only action is check (fsbox store check [s3://BUCKET/PREFIX])", action)
	}
	if given && url == "" {
		return nil, usagef(url, "store check: an empty URL (give an s3:// URL in a writable object root, or none for the first)")
	}
	rep, err := sb.StoreCheck(ctx, url)
	if err != nil {
		return nil, err
	}
	return &StoreCheckResult{StoreReport: rep}, nil
}

// Outcome: the report is whole whatever it found (exit 0); the text form
// says on stderr which probes failed and whether scratch was left behind.
func (r *StoreCheckResult) Outcome() spec.Outcome {
	var notes []string
	var failed []string
	for _, p := range r.Probes {
		if !p.OK {
			failed = append(failed, p.Name)
		}
	}
	if len(failed) > 0 {
		notes = append(notes, fmt.Sprintf("the store fails %d of %d probes: %s", len(failed), len(r.Probes), strings.Join(failed, ", ")))
	}
	if !r.Removed {
		notes = append(notes, fmt.Sprintf("the scratch prefix %s could not be removed (%s): remove it by hand", r.Scratch, r.Cleanup))
	}
	return spec.Outcome{Notes: notes}
}

// Text is one line per probe, then outside and scratch:
// "ok\tNAME\tDETAIL", "FAIL\tNAME\tDETAIL", "outside\treaches|contained\tDETAIL",
// "scratch\tremoved|left\tURL".
func (r *StoreCheckResult) Text(w spec.TextWriter) error {
	for _, p := range r.Probes {
		verdict := "ok"
		if !p.OK {
			verdict = "FAIL"
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", verdict, p.Name, w.Name(p.Detail)); err != nil {
			return err
		}
	}
	reach := "contained"
	if r.Outside.Reaches {
		reach = "reaches"
	}
	if _, err := fmt.Fprintf(w, "outside\t%s\t%s\n", reach, w.Name(r.Outside.Detail)); err != nil {
		return err
	}
	left := "removed"
	if !r.Removed {
		left = "left"
	}
	_, err := fmt.Fprintf(w, "scratch\t%s\t%s\n", left, w.Name(r.Scratch))
	return err
}
