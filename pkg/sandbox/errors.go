package sandbox

import "github.com/fsbox/fsbox/pkg/fserr"

// The error type lives in package fserr (the policy loader returns it
// too); these names keep the sandbox's API as the ops and faces know it.

type (
	Code  = fserr.Code
	Rule  = fserr.Rule
	Error = fserr.Error
	Hint  = fserr.Hint
)

const (
	CodeUsage        = fserr.CodeUsage
	CodeDenied       = fserr.CodeDenied
	CodeNotFound     = fserr.CodeNotFound
	CodeNotAFile     = fserr.CodeNotAFile
	CodeNotADir      = fserr.CodeNotADir
	CodeConflict     = fserr.CodeConflict
	CodeExists       = fserr.CodeExists
	CodeTextNotFound = fserr.CodeTextNotFound
	CodeAmbiguous    = fserr.CodeAmbiguous
	// CodePreconditionRequired: a change without the precondition the
	// policy requires.
	CodePreconditionRequired = fserr.CodePreconditionRequired
	CodeTooLarge             = fserr.CodeTooLarge
	CodeBinary               = fserr.CodeBinary
	CodeIO                   = fserr.CodeIO
	CodeConfig               = fserr.CodeConfig
	CodeNoMatch              = fserr.CodeNoMatch
	CodeTruncated            = fserr.CodeTruncated
	CodeTimeout              = fserr.CodeTimeout

	RuleRoot        = fserr.RuleRoot
	RuleCommand     = fserr.RuleCommand
	RuleDeny        = fserr.RuleDeny
	RuleAllow       = fserr.RuleAllow
	RuleWriteDeny   = fserr.RuleWriteDeny
	RuleReadOnly    = fserr.RuleReadOnly
	RuleSymlink     = fserr.RuleSymlink
	RuleSpecialFile = fserr.RuleSpecialFile
	RuleSpecialFS   = fserr.RuleSpecialFS
	RuleHardlink    = fserr.RuleHardlink
	RuleConfigFile  = fserr.RuleConfigFile
	RuleOwnFile     = fserr.RuleOwnFile
	RuleSizeCap     = fserr.RuleSizeCap
	RuleOK          = fserr.RuleOK
)

// Errorf builds an *Error.
func Errorf(code Code, path, format string, args ...any) *Error {
	return fserr.Errorf(code, path, format, args...)
}

// AsError returns err as an *Error, wrapping anything else as CodeIO.
func AsError(err error) *Error { return fserr.AsError(err) }

// inSet is the denial to, restated from from, naming the rule set from
// names.
func inSet(from, to *Error) *Error {
	to.Set = from.Set
	return to
}

func deny(rule Rule, path, format string, args ...any) *Error {
	return fserr.Deny(rule, path, format, args...)
}
