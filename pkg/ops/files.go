package ops

import (
	"context"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// MkdirResult is mkdir's answer.
type MkdirResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// Mkdir creates a directory and its parents in the workdir.
func Mkdir(ctx context.Context, sb *sandbox.Sandbox, p string) (MkdirResult, error) {
	if err := begin(ctx, sb, "mkdir"); err != nil {
		return MkdirResult{}, err
	}
	display, created, err := sb.Mkdir(p)
	if err != nil {
		return MkdirResult{}, err
	}
	return MkdirResult{Path: display, Created: created}, nil
}

// MoveResult is mv's answer.
type MoveResult struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Move renames src to dst, both in the workdir; an existing dst is only
// replaced with force.
func Move(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool) (MoveResult, error) {
	if err := begin(ctx, sb, "mv"); err != nil {
		return MoveResult{}, err
	}
	s, err := sb.OpenEntry(src)
	if err != nil {
		return MoveResult{}, err
	}
	defer s.Close()
	if !s.Exists {
		return MoveResult{}, sandbox.Errorf(sandbox.CodeNotFound, src, "%s does not exist", src)
	}
	d, err := sb.OpenEntry(dst)
	if err != nil {
		return MoveResult{}, err
	}
	defer d.Close()
	if d.Exists && d.Info.Type == "dir" && s.Info.Type != "dir" {
		return MoveResult{}, sandbox.Errorf(sandbox.CodeExists, dst, "%s is a directory; name the destination file itself", dst)
	}
	if err := sb.Rename(s, d, force); err != nil {
		return MoveResult{}, err
	}
	return MoveResult{From: s.Path, To: d.Path}, nil
}

// CopyResult is cp's answer.
type CopyResult struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Copy copies a readable file into the workdir, atomically; an existing
// dst is only replaced with force. The copy gets the source's permission
// bits when it is new.
func Copy(ctx context.Context, sb *sandbox.Sandbox, src, dst string, force bool) (CopyResult, error) {
	if err := begin(ctx, sb, "cp"); err != nil {
		return CopyResult{}, err
	}
	f, err := sb.Open(src)
	if err != nil {
		return CopyResult{}, err
	}
	defer f.Close()
	w, err := sb.OpenWriteTarget(dst, true)
	if err != nil {
		return CopyResult{}, err
	}
	defer w.Close()
	if w.Exists && !force {
		return CopyResult{}, sandbox.Errorf(sandbox.CodeExists, dst, "%s exists: replace it with force", dst)
	}
	mode := f.Info.Mode.Perm()
	r, err := w.Commit(f, sb.Limits().MaxWriteBytes, sandbox.CommitOptions{Mode: &mode, NoReplace: !force})
	if err != nil {
		return CopyResult{}, err
	}
	return CopyResult{From: f.Info.Path, To: w.Path, Bytes: r.Bytes, SHA256: r.SHA256}, nil
}

// RemoveResult is rm's answer.
type RemoveResult struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
	Type    string `json:"type"`
}

// Remove deletes a file, a symlink (never its target) or, with recursive,
// a directory tree in the workdir — never the workdir itself.
func Remove(ctx context.Context, sb *sandbox.Sandbox, p string, recursive bool) (RemoveResult, error) {
	if err := begin(ctx, sb, "rm"); err != nil {
		return RemoveResult{}, err
	}
	w, err := sb.OpenEntry(p)
	if err != nil {
		return RemoveResult{}, err
	}
	defer w.Close()
	if err := sb.Remove(w, recursive); err != nil {
		return RemoveResult{}, err
	}
	return RemoveResult{Path: w.Path, Removed: true, Type: w.Info.Type}, nil
}
