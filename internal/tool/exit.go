package tool

import (
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// exitClasses map error codes to exit statuses: the command line's own
// business (a library caller sees the codes), which every call's audit
// record carries, a tool call's too. Help and the man pages list them
// from here.
var exitClasses = []struct {
	status int
	codes  []sandbox.Code
	says   string
}{
	{0, nil, "success"},
	{1, []sandbox.Code{sandbox.CodeNoMatch}, "grep found nothing (its result is still printed)"},
	{2, []sandbox.Code{sandbox.CodeUsage}, "a malformed command line"},
	{3, []sandbox.Code{sandbox.CodeDenied}, "the policy refused"},
	{4, []sandbox.Code{sandbox.CodeNotFound, sandbox.CodeNotAFile, sandbox.CodeNotADir}, "the path is missing or of the wrong type"},
	{5, []sandbox.Code{sandbox.CodeConflict, sandbox.CodeExists, sandbox.CodeTextNotFound, sandbox.CodeAmbiguous, sandbox.CodePreconditionRequired}, "the content is not what the call expected"},
	{6, []sandbox.Code{sandbox.CodeTooLarge, sandbox.CodeBinary}, "over a limit, or binary"},
	{7, []sandbox.Code{sandbox.CodeIO}, "an I/O error, or a cancelled call"},
	{8, []sandbox.Code{sandbox.CodeConfig}, "a bad policy"},
	{9, []sandbox.Code{sandbox.CodeTruncated, sandbox.CodeTimeout}, "a policy limit or the deadline cut a list result (the part before the cut is printed); timeout: a command that cannot print a part ran out of time, stdout empty"},
	{ExitClosedPipe, nil, "stdout's reader left early; nothing on stderr"},
}

// ExitClosedPipe is the exit status of a call whose stdout was closed by
// its reader (`fsbox grep x | head -1`): 128 + SIGPIPE, what a shell
// reports for a pipeline stage the signal ended.
const ExitClosedPipe = 141

// ExitCode is the exit status of an error code (io for an unknown one).
func ExitCode(c sandbox.Code) int {
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
func ExitLines() []string {
	var out []string
	for _, e := range exitClasses {
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
