package ops

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// The texts a change brings with it — a patch, write's content, edit's old
// and new texts — are capped by max_write_bytes however they arrive: a
// command-line argument, a file (--patch-file, --old-file), standard input
// or a tool argument. The operations check the text they are given
// (Patch, Write, Edit call capText), so every face shares the cap, and
// readText reads a text from a file or stdin no further than it.

// capText refuses (too_large, rule size_cap) a text of n bytes over
// max_write_bytes; what names it ("the patch", "the content") and tail
// ends the message (": nothing was changed").
func capText(sb *sandbox.Sandbox, n int64, path, what, tail string) error {
	if max := sb.Limits().MaxWriteBytes; n > max {
		return overCap(path, what, "max_write_bytes", max, tail)
	}
	return nil
}

func overCap(path, what, name string, max int64, tail string) error {
	return &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: path,
		Msg: fmt.Sprintf("%s is over %s = %d%s", what, name, max, tail)}
}

// readText reads a text of a change from r (size is its length, if known:
// else 0), up to max_write_bytes (and MaxHold): a longer one is too_large
// (as capText says it), never cut short, and r is read no further than
// one byte past the cap.
func readText(sb *sandbox.Sandbox, r io.Reader, size int64, path, what, tail string) (string, error) {
	max, name := holdLimit(sb.Limits().MaxWriteBytes, "max_write_bytes")
	var b strings.Builder
	if size > 0 && size <= max {
		b.Grow(int(size) + 1) // the read that sees EOF needs room
	}
	if _, err := io.Copy(&b, io.LimitReader(r, satAdd(max, 1))); err != nil {
		return "", fserr.AsError(err)
	}
	if int64(b.Len()) > max {
		return "", overCap(path, what, name, max, tail)
	}
	return b.String(), nil
}
