//go:build !linux

package mcpserver

import (
	"time"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// fileTimes are the times get_file_info reports beside the mtime.
type fileTimes struct{ created, accessed time.Time }

// fileTimesOf gives the mtime for both: only Linux asks (statx).
func fileTimesOf(info sandbox.Info) fileTimes {
	return fileTimes{created: info.ModTime, accessed: info.ModTime}
}
