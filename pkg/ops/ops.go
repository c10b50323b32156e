// Package ops holds one file per fsbox operation: typed options in, a typed
// result out (with JSON tags). Operations reach the filesystem only through
// a *sandbox.Sandbox, never through os or filepath directly.
package ops

import (
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
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
