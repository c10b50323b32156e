package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var statOp = &spec.Op{
	Name: "stat", Class: spec.Read, Result: StatResult{},
	Summary:  "describe a path (a symlink as itself); a missing path is exists:false",
	Help:     "Describes PATH without following a final symlink: its type, size, mode, mtime and, for a symlink, its target. A path that does not exist is no error: exists is false.",
	Args:     []spec.Arg{pathArg(spec.Look, "the path to describe")},
	Options:  []spec.Option{{Name: "sha256", Type: spec.Bool, Help: "add the SHA-256 of a regular file's content"}},
	Examples: []spec.Example{{Cmd: "stat main.go --sha256", Says: "type, size, mode, mtime and content hash"}},
	Text:     "one tab-separated line: path type size mode mtime [-> target] [sha256]",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (any, error) {
		return Stat(ctx, sb, StatOptions{Path: in.String("path"), SHA256: in.Bool("sha256")})
	},
}

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

// Text is one line: path, type, size, mode, mtime, and a symlink's target
// and the sha256 when known; "missing" for a path that does not exist.
func (r StatResult) Text(w spec.TextWriter) error {
	if !r.Exists {
		_, err := fmt.Fprintf(w, "%s\tmissing\n", w.Name(r.Path))
		return err
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s", w.Name(r.Path), r.Type, r.Size, r.Mode, r.Mtime)
	if r.Target != nil {
		fmt.Fprintf(w, "\t-> %s", w.Name(*r.Target))
	}
	if r.SHA256 != nil {
		fmt.Fprintf(w, "\t%s", *r.SHA256)
	}
	return w.WriteByte('\n')
}
