//go:build unix && !linux

package sandbox_test

import (
	"os"
	"testing"
)

// unprivileged: see unpriv_linux_test.go. Without user namespaces, a test
// that needs permission bits to bind skips as root.
func unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-0 directory, and this platform has no user namespace to drop that")
	}
	return false
}
