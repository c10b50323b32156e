package mcpserver

import (
	"os"
	"testing"

	"github.com/fsbox/fsbox/internal/testbin"
)

// TestMain removes the fsbox pair that a test here built (testbin), if
// any, once every test has run.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
