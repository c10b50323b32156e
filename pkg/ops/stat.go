package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// StatOptions are stat's inputs.
type StatOptions struct {
	Path   string
	SHA256 bool // hash a regular file's content
}

// StatResult describes one path; a symlink is described as itself.
type StatResult struct {
	Path   string  `json:"path"`
	Exists bool    `json:"exists"`
	Type   string  `json:"type,omitempty"`
	Size   int64   `json:"size"`
	Mtime  string  `json:"mtime,omitempty"`
	Mode   string  `json:"mode,omitempty"`
	Target *string `json:"target,omitempty"`
	SHA256 *string `json:"sha256,omitempty"`
}

// Stat describes a path without following a final symlink. A missing path
// is Exists:false, not an error.
func Stat(ctx context.Context, sb *sandbox.Sandbox, o StatOptions) (StatResult, error) {
	if err := begin(ctx, sb, "stat"); err != nil {
		return StatResult{}, err
	}
	info, err := sb.Lstat(o.Path)
	if err != nil {
		if sandbox.AsError(err).Code == sandbox.CodeNotFound {
			return StatResult{Path: o.Path, Exists: false}, nil
		}
		return StatResult{}, err
	}
	res := StatResult{Path: info.Path, Exists: true, Type: info.Type, Size: info.Size,
		Mtime: rfc3339(info.ModTime), Mode: modeString(info.Mode)}
	if info.Type == "symlink" {
		t := info.Target
		res.Target = &t
	}
	if o.SHA256 && info.Type == "file" {
		f, err := sb.Open(o.Path)
		if err != nil {
			return StatResult{}, err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, textio.WithContext(ctx, f)); err != nil {
			return StatResult{}, sandbox.AsError(err)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		res.SHA256 = &sum
	}
	return res, nil
}

// unixMode gives the permission bits plus setuid, setgid and sticky, as
// the low twelve bits of st_mode.
func unixMode(m fs.FileMode) uint32 {
	out := uint32(m.Perm())
	for bit, v := range map[fs.FileMode]uint32{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if m&bit != 0 {
			out |= v
		}
	}
	return out
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", unixMode(m)) }
