package tool

import (
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// exitClasses map error codes to exit statuses: the command line's own
// business (a library caller sees the codes), which every call's audit
// record carries, a tool call's too. Help and the man pages list them
// from here.
var exitClasses = []struct {
	status int
	codes  []fserr.Code
	says   string
}{
	{0, nil, "success"},
	{1, []fserr.Code{fserr.CodeNoMatch}, "grep found nothing (its result is still printed)"},
	{2, []fserr.Code{fserr.CodeUsage, fserr.CodeUnsupported}, "a malformed command line; unsupported: the call can never succeed on that kind of root"},
	{3, []fserr.Code{fserr.CodeDenied}, "the policy refused"},
	{4, []fserr.Code{fserr.CodeNotFound, fserr.CodeNotAFile, fserr.CodeNotADir}, "the path is missing or of the wrong type"},
	{5, []fserr.Code{fserr.CodeConflict, fserr.CodeExists, fserr.CodeTextNotFound, fserr.CodeAmbiguous, fserr.CodePreconditionRequired}, "the content is not what the call expected"},
	{6, []fserr.Code{fserr.CodeTooLarge, fserr.CodeBinary}, "over a limit, or binary"},
	{7, []fserr.Code{fserr.CodeIO}, "an I/O error, or a cancelled call"},
	{8, []fserr.Code{fserr.CodeConfig}, "a bad policy"},
	{9, []fserr.Code{fserr.CodeTruncated, fserr.CodeTimeout}, "a policy limit or the deadline cut a list result (the part before the cut is printed); timeout: a command that cannot print a part ran out of time, stdout empty"},
	{ExitClosedPipe, nil, "stdout's reader left early; nothing on stderr"},
}

// ExitClosedPipe is the exit status of a call whose stdout was closed by
// its reader (`fsbox grep x | head -1`): 128 + SIGPIPE, what a shell
// reports for a pipeline stage the signal ended.
const ExitClosedPipe = 141

// ExitCode is the exit status of an error code (io for an unknown one).
func ExitCode(c fserr.Code) int {
	for _, e := range exitClasses {
		for _, x := range e.codes {
			if x == c {
				return e.status
			}
		}
	}
	return 7
}

// ExitLines renders the table, one status a line.
func ExitLines() []string { return ExitLinesOf(true) }

// ExitLinesOf renders the table for one command: exit 1 (no match) only
// when it can find nothing (spec.Op.NoMatch).
func ExitLinesOf(noMatch bool) []string {
	var out []string
	for _, e := range exitClasses {
		if e.status == 1 && !noMatch {
			continue
		}
		var codes []string
		for _, c := range e.codes {
			codes = append(codes, string(c))
		}
		line := fmt.Sprintf("%d", e.status)
		if len(codes) > 0 {
			line += " " + strings.Join(codes, ", ")
		}
		out = append(out, line+": "+e.says)
	}
	return out
}
