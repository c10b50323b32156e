// Package fserr is fsbox's one error type: a stable code (one exit class
// each, SPEC §3), the rule that decided a denial, and the path as the
// caller gave it. The sandbox and the policy loader both return it.
package fserr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Code is a stable, machine-readable error code. Each code belongs to exactly
// one exit class (see ExitCode); the table is the contract in SPEC §3.
type Code string

const (
	CodeUsage Code = "usage"
	// CodeUnsupported: the call can never succeed on that kind of root
	// (an object root has no modes, no directory rename). Exit class 2.
	CodeUnsupported  Code = "unsupported"
	CodeDenied       Code = "denied"
	CodeNotFound     Code = "not_found"
	CodeNotAFile     Code = "not_a_file"
	CodeNotADir      Code = "not_a_dir"
	CodeConflict     Code = "conflict"
	CodeExists       Code = "exists"
	CodeTextNotFound Code = "text_not_found"
	CodeAmbiguous    Code = "ambiguous"
	// CodePreconditionRequired: the policy requires every change to name
	// what it replaces ([write] require_precondition), and this one did
	// not (exit class 5, with conflict).
	CodePreconditionRequired Code = "precondition_required"
	CodeTooLarge             Code = "too_large"
	CodeBinary               Code = "binary"
	CodeIO                   Code = "io"
	CodeConfig               Code = "config"
	CodeNoMatch              Code = "no_match"
	// CodeTruncated: a policy limit cut a list result, whose part before
	// the cut was printed.
	CodeTruncated Code = "truncated"
	// CodeTimeout: the call's deadline (max_call_seconds, --timeout)
	// passed in a command that cannot give a part of its result (sort,
	// a change not yet committed); nothing was printed. Exit class 9,
	// with truncated.
	CodeTimeout Code = "timeout"
)

// Rule names which part of the policy decided a denial. It is what
// `fsbox explain` reports and is stable like Code.
type Rule string

const (
	RuleRoot        Rule = "root"         // outside every root, or `..` climbing out of one
	RuleCommand     Rule = "command"      // command switched off in [commands]
	RuleDeny        Rule = "deny"         // [paths] deny / deny_regex
	RuleAllow       Rule = "allow"        // [paths] allow / allow_regex did not match
	RuleWriteDeny   Rule = "write_deny"   // [paths] write_deny
	RuleReadOnly    Rule = "read_only"    // write outside every writable root
	RuleSymlink     Rule = "symlink"      // a symlink leading out of its root, or absolute
	RuleSpecialFile Rule = "special_file" // FIFO, socket or device
	RuleSpecialFS   Rule = "special_fs"   // /proc, /sys, /dev
	RuleHardlink    Rule = "hardlink"     // deny_hardlinks and nlink > 1
	RuleConfigFile  Rule = "config_file"  // the active policy file is never written
	RuleOwnFile     Rule = "own_file"     // fsbox's executables, journal and audit log are never written
	RuleSizeCap     Rule = "size_cap"     // over a [limits] size
	RuleOK          Rule = "ok"           // allowed
)

// Error is the one error type fsbox reports. Path is the path as the caller
// gave it; Rule is set for policy decisions.
type Error struct {
	Code Code
	Msg  string
	Path string
	Rule Rule
	// Set names the built-in rule set ("secrets", "agent_config") whose
	// rule decided a denial; Rule stays deny or write_deny.
	Set string
	Err error
	// Hint, when set, is an option of the call that would give another
	// answer; Message puts it after Msg in the words of the face that
	// shows the error.
	Hint *Hint
	// Spelled, when set, is Msg naming settings of the host (Setting)
	// in the words of the face that shows it; Msg names them in their
	// own (Spellf).
	Spelled *Spelled
}

// Hint names an option by its name in the operation's descriptor
// ("force", "recursive"), never by a face's spelling of it: the CLI shows
// a flag, a tool face its argument, and a face without the option what
// to do instead. Below the faces no flag is ever spelled. A face's spell
// function also spells a Setting (a Hint with Setting set and nothing
// else), for a message that names one (Spelled).
type Hint struct {
	Option string
	// Setting, instead of Option: the setting a Spelled message names.
	Setting Setting
	// Short: the command line spells it by its one-letter form (rm -r).
	Short bool
	// Text says what passing it does, %s standing for the option as the
	// face spells it ("pass %s to replace it").
	Text string
	// Else says what to do on a face that has no such option ("" says
	// nothing).
	Else string
}

// Message is the error's text with its hint spelled by spell (the option
// as the face names it; "" when the face has no such option). A nil
// spell names the option as the descriptor does, and each setting the
// text names in the setting's own words.
func (e *Error) Message(spell func(*Hint) string) string {
	msg, hint := e.Parts(spell)
	if hint == "" {
		return msg
	}
	return msg + " " + hint
}

// Parts are the error's text and its hint apart, the hint spelled by
// spell ("" when there is none, or the face has no such option and no
// other advice): the text form prints the hint on a line of its own.
func (e *Error) Parts(spell func(*Hint) string) (msg, hint string) {
	msg = e.Msg
	if e.Spelled != nil && spell != nil {
		msg = e.Spelled.in(spell)
	}
	h := e.Hint
	if h == nil {
		return msg, ""
	}
	s := h.Option
	if spell != nil {
		s = spell(h)
	}
	switch {
	case s != "":
		return msg, fmt.Sprintf(h.Text, s)
	case h.Else != "":
		return msg, h.Else
	}
	return msg, ""
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Path, e.Message(nil))
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message(nil))
}

// WithHint sets e's hint and returns e.
func (e *Error) WithHint(h Hint) *Error {
	e.Hint = &h
	return e
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error.
func Errorf(code Code, path, format string, args ...any) *Error {
	return &Error{Code: code, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Spellf builds an *Error whose message names settings of the host: each
// Setting among args stands where its verb is (%s), and the face that
// shows the error spells it (Error.Message; Msg has the setting's own
// words). The other args are formatted as by Errorf.
func Spellf(code Code, path, format string, args ...any) *Error {
	sp := &Spelled{}
	wrapped := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(Setting); ok {
			sp.Names = append(sp.Names, s)
			wrapped[i] = settingVerb(len(sp.Names))
			continue
		}
		wrapped[i] = literal{a}
	}
	// A %% of format stays %% in Format, a literal % there too.
	sp.Format = fmt.Sprintf(strings.ReplaceAll(format, "%%", "%%%%"), wrapped...)
	return &Error{Code: code, Path: path, Msg: sp.in(nil), Spelled: sp}
}

// Deny builds a denial decided by rule.
func Deny(rule Rule, path, format string, args ...any) *Error {
	return &Error{Code: CodeDenied, Rule: rule, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error: the call's deadline passing
// (context.DeadlineExceeded) is CodeTimeout, anything else CodeIO.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout("", err)
	}
	return &Error{Code: CodeIO, Msg: err.Error(), Err: err}
}

// Timeout is the timeout error of a call that could not give a result
// before its deadline, or before its request cap ([store]
// max_requests, whose error says MaxRequests), which ends a call as its
// deadline does.
func Timeout(path string, err error) *Error {
	msg := TimeoutMsg
	var c interface{ MaxRequests() bool }
	if errors.As(err, &c) && c.MaxRequests() {
		msg = MaxRequestsMsg
	}
	return &Error{Code: CodeTimeout, Path: path, Msg: msg, Err: err}
}

// MaxRequestsMsg is what a call stopped by its request cap says.
const MaxRequestsMsg = "the call reached [store] max_requests, the most requests one call may make to an object store, before it could give a result"

// ErrRootGone is inside the not_found of an access below a root that
// was removed, moved or replaced after the sandbox opened it: nothing
// below that root can be told to exist or not (see Absent).
var ErrRootGone = errors.New("the root is gone")

// Absent reports whether err says the path does not exist: not_found,
// and not because its root is gone (ErrRootGone), where a command that
// reports a missing path as a result (stat's exists: false) must fail.
func Absent(err error) bool {
	return err != nil && AsError(err).Code == CodeNotFound && !errors.Is(err, ErrRootGone)
}

// TimeoutMsg is what a call that ran out of time says.
const TimeoutMsg = "the call ran out of time (the policy's max_call_seconds, or the timeout the call asked for) before it could give a result"

// UnwrapPath returns the operating system's error inside a *fs.PathError
// or *os.LinkError (the part worth saying after the path), else err.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// A Setting is something set up outside any one call (how the policy was
// chosen, how a server was started) that a message may name: each face
// spells it in its own words, the command line as its flag or command,
// a tool face as what the host set up when it started the server (its
// calls set none of them). Below the faces none is ever spelled.
type Setting string

const (
	// SettingConfig is the policy file a call names: the command line's
	// --config.
	SettingConfig Setting = "config"
	// SettingServe is the MCP server: the command line's fsbox mcp.
	SettingServe Setting = "serve"
	// SettingServeDirs is the server given the directories it serves:
	// the command line's fsbox mcp WORKDIR [READ_ROOT...].
	SettingServeDirs Setting = "serve-dirs"
)

// Words are the setting's own words: what a message says where no face
// spells it.
func (s Setting) Words() string {
	switch s {
	case SettingConfig:
		return "the config setting"
	case SettingServe:
		return "the MCP server"
	case SettingServeDirs:
		return "the MCP server's directories"
	}
	return string(s)
}

// Spelled is a message that names settings (Spellf): Format with each
// %[n]s standing for Names[n-1] as a face spells it (any other % is %%).
type Spelled struct {
	Format string
	Names  []Setting
}

// in is the message with each setting spelled by spell (nil, or "" for a
// setting: its own words).
func (sp *Spelled) in(spell func(*Hint) string) string {
	words := make([]any, len(sp.Names))
	for i, n := range sp.Names {
		w := ""
		if spell != nil {
			w = spell(&Hint{Setting: n})
		}
		if w == "" {
			w = n.Words()
		}
		words[i] = w
	}
	return fmt.Sprintf(sp.Format, words...)
}

// settingVerb formats as the verb that stands for the nth setting.
type settingVerb int

func (n settingVerb) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "%%[%d]s", int(n)) }

// literal formats as its value does, with each % doubled: text that
// Spelled.Format holds as it is.
type literal struct{ v any }

func (l literal) Format(f fmt.State, verb rune) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), l.v)
	f.Write([]byte(strings.ReplaceAll(s, "%", "%%")))
}
