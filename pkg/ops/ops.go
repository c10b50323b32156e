// Package ops holds one file per fsbox operation: typed options in, a typed
// result out (with JSON tags). Operations reach the filesystem only through
// a *sandbox.Sandbox, never through os or filepath directly.
package ops

import (
	"bytes"
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// Truncation says that a limit cut a result short, and which.
type Truncation struct {
	Truncated bool   `json:"truncated"`
	Limit     string `json:"limit,omitempty"` // the policy limit or flag that cut it
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func usagef(path, format string, args ...any) error {
	return sandbox.Errorf(sandbox.CodeUsage, path, format, args...)
}

// collectLines is the LineSink of the json form: each line, without its
// terminator and with invalid UTF-8 replaced, appended to *dst (which
// starts as an empty list, never null).
func collectLines(dst *[]string) LineSink {
	*dst = []string{}
	return func(line []byte) error {
		*dst = append(*dst, string(bytes.ToValidUTF8(textio.TrimEOL(line), []byte("\uFFFD"))))
		return nil
	}
}

// MaxHold is the most of one file a command holds in memory at once: read
// (without paging), edit and sort take a file whole. A policy may set its
// byte limits higher, up to 2^63-1; past MaxHold the answer is too_large,
// never an allocation the machine cannot make.
const MaxHold = 4 << 30

// holdCapName is the limit a Truncation or too_large names when MaxHold,
// not the policy, was the smaller cap.
const holdCapName = "hold_cap"

// holdLimit is the smaller of a policy byte limit and MaxHold, with the
// name of the one that applies.
func holdLimit(policy int64, name string) (int64, string) {
	if policy > MaxHold {
		return MaxHold, holdCapName
	}
	return policy, name
}
