package ops

import (
	"context"

	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/textio"
)

// WcOptions are wc's inputs.
type WcOptions struct {
	Paths []string
}

// WcFile is one file's counts.
type WcFile struct {
	Path string `json:"path"`
	textio.Counts
}

// WcResult holds each file's counts and their sum.
type WcResult struct {
	Files []WcFile      `json:"files"`
	Total textio.Counts `json:"total"`
	show  []string      // the counts the text form prints (all when none is picked)
}

// Wc counts lines, words, bytes and characters of each file in one
// streaming pass, in memory that does not grow with the file.
func Wc(ctx context.Context, sb *sandbox.Sandbox, o WcOptions) (WcResult, error) {
	if err := begin(ctx, sb, "wc"); err != nil {
		return WcResult{}, err
	}
	res := WcResult{Files: []WcFile{}}
	buf := make([]byte, textio.DefaultBufSize)
	for _, p := range o.Paths {
		f, err := openInput(sb, p)
		if err != nil {
			return WcResult{}, err
		}
		c, err := textio.Count(textio.WithContext(ctx, f), buf)
		f.Close()
		if err != nil {
			return WcResult{}, sandbox.AsError(err)
		}
		res.Files = append(res.Files, WcFile{Path: f.Info.Path, Counts: c})
		res.Total.Add(c)
	}
	return res, nil
}
